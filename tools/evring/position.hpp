// tools/evring/position.hpp — where `watch` starts and stops.
//
//   --from latest | oldest | SEQNO | -N | TIME
//   --until SEQNO | TIME
//   TIME: 2026-11-22T01:45:00[.fraction][Z]   (UTC)
//         @1700000000[.fraction]              (seconds since the Unix epoch)
//         -5s -250ms -10us -3m -1h -100ns     (relative: before now for a live
//                                              ring, before the newest event
//                                              for a snapshot or recording)
//
// Finding a time in a ring is a binary search on record_epoch_nanos, made
// robust to what several writers do to timestamp order: unreadable slots
// (holes, overwritten slots) are stepped over, and after the search the
// start moves back while any of the 256 events before it is at or after the
// target, so an event stamped at the target but sequenced a little earlier is
// not skipped.
//
// Thread safety: pure functions, except seek_time which reads the ring.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "evring/error.hpp"
#include "evring/iterator.hpp"

namespace evring::cli {

struct Position {
    enum class Kind { Latest, Oldest, Seqno, Back, AbsoluteTime, RelativeTime, None };
    Kind kind = Kind::None;
    std::uint64_t value = 0;  // seqno, N, epoch nanos, or nanoseconds before the base
};

// `option` ("--from") names the option in errors.
Result<Position> parse_from(std::string_view text);
Result<Position> parse_until(std::string_view text);

// A time given as nanoseconds since the epoch; relative times are resolved
// against `base_nanos`.
inline std::uint64_t resolve_time(const Position& position, std::uint64_t base_nanos) {
    if (position.kind == Position::Kind::RelativeTime)
        return base_nanos > position.value ? base_nanos - position.value : 0;
    return position.value;
}

inline bool is_time(const Position& position) {
    return position.kind == Position::Kind::AbsoluteTime ||
           position.kind == Position::Kind::RelativeTime;
}

// The first sequence number whose event is at or after `target_nanos`
// (newest + 1 when there is none). See the note above.
std::uint64_t seek_time(const Iterator& it, std::uint64_t target_nanos);

}  // namespace evring::cli
