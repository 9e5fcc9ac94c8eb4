// lib/bindings/named_session.hpp — a named reader on a binding's source: the
// C ABI's evring_source_resume_named / evring_source_commit and Python's
// evring.open(named=...) / Reader.commit (docs/c-api.md, docs/python.md,
// "Named readers"). It plugs the CLI's NamedReader (cursor/named_reader.hpp)
// into the reader session (reader_session.hpp); nothing here decides a
// position itself.
//
// Contract:
// - resume_named: before the first event is read. Takes the name's lock
//   (NamedReader::open), decides the start through NamedReader::resume (the
//   one position resolver: `first_start` is the first run's start, as the
//   CLI's --from) and seeks the source there. Resume's notices (where it
//   resumes, how an old instance ended, what comes again) and the seek's
//   note are kept on the handle (named_notices) and handed out as the
//   first Notice items.
// - "Handed": an event is handed to the application when next_item returns
//   it (after the where filter), and every event of a batch when
//   next_descriptors returns the batch. The lock file's mark records the
//   last event handed (NamedReader::writing/written at once: the
//   application, not an output, is what a restart redelivers to), so a
//   process killed with SIGKILL leaves the next run able to say exactly
//   which events come again.
// - commit_named: the last event handed becomes the committed position
//   (atomic, NamedReader::commit); with nothing handed since the resume of a
//   first run, nothing is written. "Read to its end" is recorded when the
//   source has ended (a writer that exited, read to the end).
//
// Thread safety: as the handle (one thread at a time).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "evring/error.hpp"
#include "handles.hpp"

namespace evring::bindings {

// Errors name `caller` ("evring_source_resume_named", "named") and the reader.
Status resume_named(evring_source& handle, std::string_view name, std::string_view first_start, bool reset,
                    std::string_view caller);
Status commit_named(evring_source& handle, std::string_view caller);

// The session's hooks (reader_session.cpp): events handed, the source's end.
inline void hand_named(evring_source& handle, std::uint64_t seqno, std::uint32_t member) noexcept {
    if (!handle.named) return;
    handle.named->handing(seqno, member);
    handle.named->writing();
    handle.named->written();
}
// `members`: each event's member (a ring set), or empty (a single ring: 0).
inline void hand_named(evring_source& handle, std::span<const EventDescriptor> events,
                       std::span<const std::uint32_t> members) noexcept {
    if (!handle.named || events.empty()) return;
    for (std::size_t i = 0; i < events.size(); ++i)
        handle.named->handing(events[i].seqno, members.empty() ? 0 : members[i]);
    handle.named->writing();
    handle.named->written();
}

}  // namespace evring::bindings
