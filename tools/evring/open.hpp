// tools/evring/open.hpp — opening RING arguments for the commands.
//
// open_source (evring/source/source_open.hpp) and Reading::open (the read
// pipeline, read/reading.hpp) with the CLI's hint added to a snapshot over
// the size limit ("raise it with --max-snapshot-size").
//
// Thread safety: as open_source.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "evring/source/event_source.hpp"
#include "evring/source/source_open.hpp"
#include "read/reading.hpp"

namespace evring::cli {

Result<std::unique_ptr<EventSource>> open_for_command(std::string_view ring, const SourceOptions& options);
Result<std::unique_ptr<Reading>> open_reading(ReadRequest request, FollowOptions follow);

// The read pipeline's first steps, as every reading command takes them:
// open_reading, the command's own check of the opened source (`check`: its
// error is a usage error), find_schema (its warning reported) and select.
// kExitOk with `out` ready to resume and run, or the exit code of the error,
// reported (2 usage, 1 runtime).
int open_selected(ReadRequest request, FollowOptions follow, std::unique_ptr<Reading>& out,
                  const std::function<Status(const EventSource&)>& check = {});

}  // namespace evring::cli
