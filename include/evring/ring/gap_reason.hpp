// evring/source/event_source.hpp — why sequence numbers were not seen.
//
// One vocabulary for recordings (a Gap record stores the reason as a u32,
// docs/recording-format.md) and for event sources (event_source.hpp hands
// out gaps with their reason). Values are part of the recording format:
// they never change meaning, new ones are appended.
//
// Thread safety: constants and a pure function.
#pragma once

#include <cstdint>
#include <string_view>

namespace evring {

enum class GapReason : std::uint32_t {
    Unrecorded = 0,      // a version 1 recording, which did not say
    FellBehind = 1,      // the reader (or recorder) was lapped: overwritten before it read them
    Abandoned = 2,       // reserved and never committed while a writer lived (the abandon bound)
    NeverCommitted = 3,  // holes in a ring nobody writes any more, or in a snapshot
    WriterGone = 4,      // reserved by a writer that exited before committing them
    LostToDamage = 5,    // in a damaged part of a recording (or lost by a damaged source)
    RingReplaced = 6,    // events of a ring re-created under the same name, overwritten
                         // before the follower opened it
};
inline constexpr std::uint32_t kMaxGapReason = 6;

// "the recorder fell behind the writer (lapped)" and so on; unknown values
// (a newer writer's) read "an unknown reason".
std::string_view describe(GapReason reason) noexcept;

}  // namespace evring
