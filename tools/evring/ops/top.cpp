// evring top: a live view of one ring, redrawn every interval with plain ANSI
// (home, clear, lines cut to the terminal's width and height), or one summary
// line per interval when stdout is not a terminal.
//
// On a terminal, stdin (when it is one) is put in non-canonical, no-echo mode
// so `q` quits without Enter; Ctrl-C still raises SIGINT (ISIG stays on),
// which the stop handlers turn into a flag. The terminal's modes and cursor
// are restored on every way out.
//
// Like `watch --follow-name` and `metrics --listen`, top follows the name: a
// writer that restarts under it makes a new ring file, which top shows from
// the next refresh on (source_renamed.hpp), its rates measured afresh.
#include <sys/ioctl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "registry/reader_kinds.hpp"
#include "commands.hpp"
#include "output/escape.hpp"
#include "ops/ops_cmd.hpp"
#include "output/output.hpp"
#include "ops/ring_set_view.hpp"
#include "ops/ring_view.hpp"
#include "ops/stop.hpp"
#include "output/values.hpp"

namespace evring::cli {
namespace {

constexpr int kMinColumns = 40;

class RawInput {
public:
    RawInput() {
        if (::isatty(STDIN_FILENO) == 0 || ::tcgetattr(STDIN_FILENO, &saved_) != 0) return;
        termios raw = saved_;
        raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
        raw.c_cc[VMIN] = 0;
        raw.c_cc[VTIME] = 0;
        active_ = ::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
    }
    RawInput(const RawInput&) = delete;
    RawInput& operator=(const RawInput&) = delete;
    ~RawInput() {
        if (active_) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
    }
    bool active() const { return active_; }

private:
    termios saved_{};
    bool active_ = false;
};

std::string rate_text(double per_second) {
    if (per_second >= 1e6) return fmt::format("{:.2f}M", per_second / 1e6);
    if (per_second >= 1e4) return fmt::format("{:.1f}k", per_second / 1e3);
    return fmt::format("{:.0f}", per_second);
}

double mib(double bytes) { return bytes / (1024.0 * 1024.0); }

struct Rates {
    double seconds = 0;
    double events = 0;
    double bytes = 0;
};

Rates rates_of(const RingSample& s, std::uint64_t previous_ns) {
    Rates r;
    r.seconds = previous_ns == 0 ? 0 : static_cast<double>(s.wall_ns - previous_ns) / 1e9;
    if (r.seconds <= 0) return r;
    r.events = static_cast<double>(s.new_events) / r.seconds;
    r.bytes = static_cast<double>(s.new_bytes) / r.seconds;
    return r;
}

std::string readers_count(const RingRefresh& r) {
    if (!r.readers) return "readers ?";
    std::size_t alive = 0, stale = 0, dead = 0;
    for (const ReaderEntry& e : r.readers->readers)
        (e.liveness == ReaderLiveness::Alive ? alive : e.liveness == ReaderLiveness::Stale ? stale : dead)++;
    return fmt::format("readers {} alive {} stale {} dead", alive, stale, dead);
}

std::string summary_line(const RingView& view, const RingRefresh& r, const Rates& rates,
                         const std::string& label = {}) {
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

void draw(const std::vector<std::string>& lines) {
    winsize ws{};
    int columns = 80, rows = 24;
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
        columns = ws.ws_col;
        rows = ws.ws_row;
    }
    std::string out = "\x1b[H\x1b[2J";
    if (columns < kMinColumns) {
        out += fmt::format("too narrow ({} col)", columns).substr(0, static_cast<std::size_t>(columns));
    } else {
        for (int i = 0; i < static_cast<int>(lines.size()) && i < rows; ++i) {
            if (i > 0) out += "\r\n";
            out += lines[static_cast<std::size_t>(i)].substr(0, static_cast<std::size_t>(columns));
        }
    }
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
}

// Sleeps until the next refresh; false when the user asked to quit.
bool wait_for_key(int timeout_ms, bool keys) {
    pollfd p{STDIN_FILENO, POLLIN, 0};
    const int ready = ::poll(&p, keys ? 1 : 0, timeout_ms);
    if (stop_requested()) return false;
    if (keys && ready > 0) {
        char c = 0;
        while (::read(STDIN_FILENO, &c, 1) == 1)
            if (c == 'q' || c == 'Q') return false;
    }
    return true;
}

// Moves `view` to the ring now at its name when a writer restarted there.
// What cannot be opened there is said once (until it changes), and the old
// ring stays on screen meanwhile. True when it moved.
bool follow_name(std::unique_ptr<RingView>& view, std::string& said) {
    auto moved = view->reopen_if_renamed();
    if (!moved) {
        if (moved.error().message() != said) {
            said = moved.error().message();
            std::fputs(fmt::format("evring: {}\n", printable(said)).c_str(), stderr);
        }
        return false;
    }
    said.clear();
    if (!*moved) return false;
    view = std::move(*moved);
    return true;
}

// A ring set: a row per member, and the set's total.
struct MemberRates {
    std::uint32_t index;
    RingView* view;
    const RingRefresh* refresh;
    Rates rates;
};

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

int run_top_set(RingSetView& set, int interval_ms, std::uint64_t count) {
    install_stop_handlers();
    const bool terminal = ::isatty(STDOUT_FILENO) != 0;
    RawInput input;
    if (terminal) std::fputs("\x1b[?25l", stdout);
    std::map<std::uint32_t, std::uint64_t> previous_ns;  // per member: its last sample
    int code = kExitOk;
    for (std::uint64_t refresh = 0; count == 0 || refresh < count; ++refresh) {
        if (auto s = set.refresh(); !s) {  // follows the manifest and the set at the name
            code = runtime_error(s.error());
            break;
        }
        std::vector<MemberRates> rows;
        Rates total;
        for (RingSetView::Member& m : set.members()) {
            if (!m.latest) continue;
            if (m.moved) previous_ns.erase(m.index);  // a new ring: a new baseline
            const Rates rates = rates_of(m.latest->sample, previous_ns[m.index]);
            previous_ns[m.index] = m.latest->sample.wall_ns;
            total.events += rates.events;
            total.bytes += rates.bytes;
            rows.push_back({m.index, m.view.get(), &*m.latest, rates});
        }
        if (terminal) {
            draw(set_frame_lines(set, rows, total));
        } else if (refresh > 0 || count == 1) {
            std::string text;
            for (const MemberRates& m : rows)
                text += summary_line(*m.view, *m.refresh, m.rates,
                                     fmt::format("{} member {}", printable(set.location()), m.index)) + "\n";
            text += fmt::format("{} {} total: {} ev/s {:.2f} MiB/s, {} members\n",
                                utc_time(static_cast<std::uint64_t>(std::time(nullptr)) * 1'000'000'000ULL),
                                printable(set.location()), rate_text(total.events), mib(total.bytes),
                                set.members().size());
            if (std::fputs(text.c_str(), stdout) < 0 || std::fflush(stdout) != 0) break;
        }
        if (count != 0 && refresh + 1 == count) break;
        if (!wait_for_key(interval_ms, input.active())) break;
    }
    if (terminal) std::fputs("\x1b[?25h\r\n", stdout);
    std::fflush(stdout);
    return code;
}

}  // namespace

int run_top(const TopOptions& options) {
    int interval_ms = 1000;
    if (options.interval) {
        auto value = parse_int_in("--interval", *options.interval, 1, 3600);
        if (!value) return usage_error(value.error());
        interval_ms = *value * 1000;
    }
    std::uint64_t count = 0;
    if (options.count) {
        auto value = parse_count("--count", *options.count);
        if (!value) return usage_error(value.error());
        count = *value;
    }
    auto set = RingSetView::open_if_set(options.ring);
    if (set && *set) {
        if (options.where)
            return usage_error(Error(EINVAL, fmt::format("--where: top of a ring set counts every member's events; "
                                                         "'{}' is a ring set (give one member's ring, {}/mN)",
                                                         options.ring, options.ring)));
        return run_top_set(**set, interval_ms, count);
    }
    auto opened = RingView::open(options.ring, options.where);
    if (!opened) return opened.error().errno_value() == EINVAL && options.where ? usage_error(opened.error())
                                                                                : runtime_error(opened.error());
    std::unique_ptr<RingView> view = std::move(*opened);
    std::string said;  // the last reopen error reported
    install_stop_handlers();
    const bool terminal = ::isatty(STDOUT_FILENO) != 0;
    RawInput input;
    if (terminal) std::fputs("\x1b[?25l", stdout);  // hide the cursor while drawing
    std::uint64_t previous_ns = 0;
    int code = kExitOk;
    for (std::uint64_t refresh = 0; count == 0 || refresh < count; ++refresh) {
        if (refresh > 0 && follow_name(view, said)) previous_ns = 0;  // a new ring: a new baseline
        auto r = view->refresh();
        if (!r) {
            code = runtime_error(r.error());
            break;
        }
        const Rates rates = rates_of(r->sample, previous_ns);
        previous_ns = r->sample.wall_ns;
        if (terminal) {
            draw(frame_lines(*view, *r, rates));
        } else if (refresh > 0 || count == 1) {  // the first sample only sets the baseline
            std::string line = summary_line(*view, *r, rates) + "\n";
            if (std::fputs(line.c_str(), stdout) < 0 || std::fflush(stdout) != 0) break;  // a closed pipe ends it
        }
        if (count != 0 && refresh + 1 == count) break;
        if (!wait_for_key(interval_ms, input.active())) break;
    }
    if (terminal) std::fputs("\x1b[?25h\r\n", stdout);
    std::fflush(stdout);
    return code;
}

Command add_top(CLI::App& app) {
    auto o = std::make_shared<TopOptions>();
    auto* c = app.add_subcommand("top", "A live view of a ring: rates by event type, window, writers, readers");
    c->add_option("RING", o->ring, "Ring name or path")->required();
    c->add_option("--interval", o->interval, "Seconds between refreshes (default 1)")->type_name("SECONDS");
    c->add_option("--count", o->count, "Stop after N refreshes")->type_name("N");
    c->add_option("--where", o->where, "Count only events this expression keeps (docs/cli.md)")->type_name("EXPR");
    return {c, [o] { return run_top(*o); }};
}

}  // namespace evring::cli
