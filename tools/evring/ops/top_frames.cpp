// What `evring top` shows (top_frames.hpp): the lines of a frame on a
// terminal and the summary lines when piped, for a ring and a ring set.
#include "ops/top_frames.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <utility>

#include "registry/reader_kinds.hpp"
#include "ops/ops_cmd.hpp"
#include "output/escape.hpp"
#include "output/output.hpp"
#include "output/values.hpp"

namespace evring::cli {
namespace {

std::string rate_text(double per_second) {
    if (per_second >= 1e6) return fmt::format("{:.2f}M", per_second / 1e6);
    if (per_second >= 1e4) return fmt::format("{:.1f}k", per_second / 1e3);
    return fmt::format("{:.0f}", per_second);
}

double mib(double bytes) { return bytes / (1024.0 * 1024.0); }

std::string readers_count(const RingRefresh& r) {
    if (!r.readers) return "readers ?";
    std::size_t alive = 0, stale = 0, dead = 0;
    for (const ReaderEntry& e : r.readers->readers)
        (e.liveness == ReaderLiveness::Alive ? alive : e.liveness == ReaderLiveness::Stale ? stale : dead)++;
    return fmt::format("readers {} alive {} stale {} dead", alive, stale, dead);
}

}  // namespace

Rates rates_of(const RingSample& s, std::uint64_t previous_ns) {
    Rates r;
    r.seconds = previous_ns == 0 ? 0 : static_cast<double>(s.wall_ns - previous_ns) / 1e9;
    if (r.seconds <= 0) return r;
    r.events = static_cast<double>(s.new_events) / r.seconds;
    r.bytes = static_cast<double>(s.new_bytes) / r.seconds;
    return r;
}

std::string summary_line(const RingView& view, const RingRefresh& r, const Rates& rates, const std::string& label) {
    const RingSize& size = view.ring().header().size;
    std::uint64_t max_lag = 0, lost = 0;
    if (r.readers)
        for (const ReaderEntry& e : r.readers->readers) {
            if (e.lag && e.liveness != ReaderLiveness::Dead) max_lag = std::max(max_lag, e.lag->events);
            lost += e.lost;
        }
    return fmt::format("{} {}: {} ev/s {:.2f} MiB/s, seqno {}, window {:.1f}%, writer {}, {}, max lag {} events, "
                       "readers lost {}, abandoned {}{}{}",
                       utc_time(static_cast<std::uint64_t>(std::time(nullptr)) * 1'000'000'000ULL),
                       label.empty() ? printable(view.location()) : label, rate_text(rates.events), mib(rates.bytes),
                       r.sample.newest_seqno,
                       size.payload_buf_size == 0 ? 0.0 : 100.0 * static_cast<double>(r.sample.payload_in_use) /
                                                              static_cast<double>(size.payload_buf_size),
                       r.writer_alive ? "alive" : "gone", readers_count(r), max_lag, lost,
                       view.sampler().abandoned(), r.registry_problem.empty() ? "" : " (registry unusable)",
                       view.where() ? fmt::format(" (where {})", printable(*view.where())) : "");
}

std::vector<std::string> frame_lines(const RingView& view, const RingRefresh& r, const Rates& rates) {
    const RingSample& s = r.sample;
    const RingSize& size = view.ring().header().size;
    std::vector<std::string> l;
    l.push_back(fmt::format("evring top - {} ({}){}   q quits", printable(view.location()), printable(view.path()),
                            view.where() ? fmt::format("   where {}", printable(*view.where())) : ""));
    l.push_back(fmt::format("writer {} ({} pid{})   seqno {}   descriptors {} of {}   payload window {} of {} "
                            "({:.1f}%)",
                            r.writer_alive ? "alive" : "gone", r.writer_pids, r.writer_pids == 1 ? "" : "s",
                            s.newest_seqno, s.events_in_ring, size.descriptor_capacity, human_bytes(s.payload_in_use),
                            human_bytes(size.payload_buf_size),
                            size.payload_buf_size == 0 ? 0.0 : 100.0 * static_cast<double>(s.payload_in_use) /
                                                                   static_cast<double>(size.payload_buf_size)));
    l.push_back(fmt::format("total {} ev/s  {:.3f} MiB/s   abandoned reservations {}{}", rate_text(rates.events),
                            mib(rates.bytes), view.sampler().abandoned(),
                            s.estimated ? "   (by type: sampled from the newest descriptors)" : ""));
    l.push_back("");
    l.push_back(fmt::format("{:<24} {:>10} {:>10} {:>7}", "TYPE", "EV/S", "MIB/S", "SHARE"));
    std::vector<std::pair<std::uint16_t, TypeTally>> types(s.types.begin(), s.types.end());
    std::sort(types.begin(), types.end(), [](const auto& a, const auto& b) { return a.second.events > b.second.events; });
    const double total = std::max(1.0, static_cast<double>(s.new_events));
    for (const auto& [type, tally] : types)
        l.push_back(fmt::format("{:<24} {:>10} {:>10.3f} {:>6.1f}%", printable(view.type_name(type)),
                                rate_text(rates.seconds > 0 ? tally.events / rates.seconds : 0),
                                rates.seconds > 0 ? mib(tally.bytes / rates.seconds) : 0.0,
                                100.0 * tally.events / total));
    if (types.empty()) l.push_back(rates.seconds > 0 ? "(no events this interval)" : "(measuring...)");
    l.push_back("");
    if (!r.registry_problem.empty()) l.push_back("readers: " + printable(r.registry_problem));
    if (r.readers) {
        l.push_back(fmt::format("READERS ({} registered)", r.readers->readers.size()));
        l.push_back(fmt::format("{:<16} {:<8} {:>8} {:<6} {:>10} {:>9} {:>8} {:>9}", "NAME", "KIND", "PID", "STATE",
                                "LAG-EV", "LAG-TIME", "LOST", "ABANDONED"));
        for (const ReaderEntry& e : r.readers->readers)
            l.push_back(fmt::format("{:<16} {:<8} {:>8} {:<6} {:>10} {:>9} {:>8} {:>9}", printable(e.name),
                                    reader_kinds::name(e.kind), e.pid, to_string(e.liveness),
                                    e.lag ? std::to_string(e.lag->events) + (e.lag->lapped ? "!" : "") : "-",
                                    e.lag && e.lag->nanos ? duration_text(*e.lag->nanos) : "-", e.lost, e.abandoned));
    }
    return l;
}

std::vector<std::string> set_frame_lines(RingSetView& set, const std::vector<MemberRates>& rows, const Rates& total) {
    std::vector<std::string> l;
    std::size_t alive = 0;
    for (const MemberRates& m : rows) alive += m.refresh->writer_alive ? 1 : 0;
    l.push_back(fmt::format("evring top - ring set {} ({})   q quits", printable(set.location()),
                            printable(set.directory())));
    l.push_back(fmt::format("members {} of at most {}   writers alive in {}", set.members().size(), set.max_members(),
                            alive));
    l.push_back(fmt::format("total {} ev/s  {:.3f} MiB/s", rate_text(total.events), mib(total.bytes)));
    l.push_back("");
    l.push_back(fmt::format("{:>6} {:>10} {:>10} {:>12} {:>7} {:<6} {:>7} {:>10} {:>8} {:>9}", "MEMBER", "EV/S", "MIB/S",
                            "SEQNO", "WINDOW", "WRITER", "READERS", "MAX-LAG", "LOST", "ABANDONED"));
    for (const MemberRates& m : rows) {
        const RingRefresh& r = *m.refresh;
        const RingSize& size = m.view->ring().header().size;
        std::uint64_t max_lag = 0, lost = 0;
        std::size_t readers = 0;
        if (r.readers)
            for (const ReaderEntry& e : r.readers->readers) {
                if (e.liveness != ReaderLiveness::Dead) ++readers;
                if (e.lag && e.liveness != ReaderLiveness::Dead) max_lag = std::max(max_lag, e.lag->events);
                lost += e.lost;
            }
        l.push_back(fmt::format("{:>6} {:>10} {:>10.3f} {:>12} {:>6.1f}% {:<6} {:>7} {:>10} {:>8} {:>9}", m.index,
                                rate_text(m.rates.events), mib(m.rates.bytes), r.sample.newest_seqno,
                                size.payload_buf_size == 0 ? 0.0
                                                           : 100.0 * static_cast<double>(r.sample.payload_in_use) /
                                                                 static_cast<double>(size.payload_buf_size),
                                r.writer_alive ? "alive" : "gone", r.readers ? std::to_string(readers) : "?", max_lag,
                                lost, m.view->sampler().abandoned()));
    }
    for (const RingSetView::Member& m : set.members())
        if (!m.latest) l.push_back(fmt::format("{:>6} {}", m.index, printable(m.error)));
    if (set.members().empty()) l.push_back("(no members yet)");
    return l;
}

std::string set_summary_lines(RingSetView& set, const std::vector<MemberRates>& rows, const Rates& total) {
    std::string text;
    for (const MemberRates& m : rows)
        text += summary_line(*m.view, *m.refresh, m.rates, fmt::format("{} member {}", printable(set.location()), m.index)) +
                "\n";
    for (const RingSetView::Member& m : set.members())  // not read this time: why
        if (!m.latest) text += fmt::format("{} member {}: {}\n", printable(set.location()), m.index, printable(m.error));
    text += fmt::format("{} {} total: {} ev/s {:.2f} MiB/s, {} members\n",
                        utc_time(static_cast<std::uint64_t>(std::time(nullptr)) * 1'000'000'000ULL),
                        printable(set.location()), rate_text(total.events), mib(total.bytes), set.members().size());
    return text;
}

}  // namespace evring::cli
