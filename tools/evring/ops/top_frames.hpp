// tools/evring/ops/top_frames.hpp — what `evring top` shows, apart from how it
// reaches the terminal (top.cpp): the lines of one frame and the summary lines
// printed when stdout is not a terminal, for a ring (ring_view.hpp) and for a
// ring set (ring_set_view.hpp, a row per member and the set's total).
//
// Rates are per second over the interval between two samples; the first
// sample of a ring (or of a ring found anew at its name) has none yet.
//
// Thread safety: functions of their arguments.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/ring_set_view.hpp"
#include "ops/ring_view.hpp"

namespace evring::cli {

struct Rates {
    double seconds = 0;  // 0: no earlier sample
    double events = 0;
    double bytes = 0;
};

// From `s` and the wall time of the sample before it (0: none).
Rates rates_of(const RingSample& s, std::uint64_t previous_ns);

// One ring: the frame, and its summary line (named `label` when given).
std::vector<std::string> frame_lines(const RingView& view, const RingRefresh& r, const Rates& rates);
std::string summary_line(const RingView& view, const RingRefresh& r, const Rates& rates, const std::string& label = {});

// A ring set: one member's row, then the frame and the summary lines
// (a line per member, then the set's total).
struct MemberRates {
    std::uint32_t index;
    RingView* view;
    const RingRefresh* refresh;
    Rates rates;
};
std::vector<std::string> set_frame_lines(RingSetView& set, const std::vector<MemberRates>& rows, const Rates& total);
std::string set_summary_lines(RingSetView& set, const std::vector<MemberRates>& rows, const Rates& total);

}  // namespace evring::cli
