// lib/source/source_renamed.hpp — has a ring's name been given to another ring
// file? What following a name (`tail -F`) rests on: follow.hpp's
// follow_name, and the commands that watch a ring by name for a long time
// (`evring metrics --listen`) or list what belongs to the ring now at a name
// (`evring readers`).
//
//     auto fresh = evring::reopen_if_renamed(source->identity(), {});
//     if (fresh && *fresh) source = std::move(*fresh);   // the writer restarted
//
// Contract:
// - Resolves identity.location as open_source would (options.directory) and
//   stats what is there. Nothing there yet (the old ring was removed and no
//   new one made), or still the file `identity` describes (same device and
//   inode): returns null, having opened nothing.
// - Another file: opens it (open_source with `options`) and returns the new
//   source when it is a ring; an error naming the location when it cannot be
//   opened or is now something else (a snapshot, a recording). Callers that
//   poll say such an error once, not every poll.
// - Only live rings and live ring sets (a directory) follow names; for any
//   other kind (a snapshot, a set snapshot, a recording) it returns null.
//   A set re-created under the name is a new set (another directory).
//
// Thread safety: a free function; stats and opens files, no shared state.
#pragma once

#include <memory>

#include "evring/error.hpp"
#include "evring/source/event_source.hpp"
#include "evring/source/source_open.hpp"

namespace evring {

// True for the sources that follow a name: a ring, a live ring set.
bool follows_names(const EventSource& source);

Result<std::unique_ptr<EventSource>> reopen_if_renamed(const SourceIdentity& identity, const SourceOptions& options);

}  // namespace evring
