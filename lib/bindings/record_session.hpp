// lib/bindings/record_session.hpp — recording what a reader handle hands out,
// for the C ABI (evring_source_record) and Python (evring.record) alike,
// through the library's one record pipeline (lib/record/record_source.hpp).
//
// Contract (record_handle):
// - Records from where the handle stands (no seek: the caller positioned it,
//   or resumed its name), through its where filter (set_where), so a
//   recording holds exactly what the handle's reads would have handed out,
//   with a gap marker for every sequence number it did not capture. The
//   handle reads on from where the recording ended.
// - A registered handle stays registered, kept informed as the loop reads;
//   a named handle commits as `evring record --name` does: only what the
//   recording's worker wrote and synced, and once more at the end.
// - Ends at `count` events, past `until` (parse_stop's positions: a seqno,
//   a time, SPAN:N through the handle's schema), at the end of a file or
//   stream source, or when keep_going says false; then writes the end record.
// - Errors: EINVAL for a bad `until` or one the source cannot honour,
//   EEXIST when the output exists, the writer's and the source's failures.
//   A recording whose writing failed returns its totals with `written` set
//   to why (the blocks written before stay readable).
//
// Thread safety: as evring.h (the handle is used by one thread at a time).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "evring/error.hpp"
#include "handles.hpp"
#include "record/record_source.hpp"

namespace evring::bindings {

struct RecordRequest {
    std::string output;
    std::uint64_t count = 0;             // 0: no limit
    std::optional<std::string> until;
    bool compress = true;
    int level = 1;                       // zstd's, 1..19
    std::uint64_t rotate_bytes = 0;      // 0: never rotate
    unsigned threads = 1;                // compressing threads, 1..kMaxRecordingThreads
    std::function<bool()> keep_going;    // asked about every 50 ms; null: always
    std::string caller;                  // names the call in errors: "evring_source_record"
};

Result<Recorded> record_handle(evring_source& handle, const RecordRequest& request);

}  // namespace evring::bindings
