// evring top: a live view of one ring (or ring set), redrawn every interval
// with plain ANSI (home, each line over the last frame's, cut to the
// terminal's width and height), or one summary line per interval when stdout
// is not a terminal. What the lines say: top_frames.hpp.
//
// On a terminal, stdin (when it is one) is put in non-canonical, no-echo mode
// so `q` quits without Enter; Ctrl-C still raises SIGINT (ISIG stays on),
// which the stop handlers turn into a flag. The terminal's modes and cursor
// are restored on every way out (Screen's destructor).
// tests/cli/top_terminal_test.sh reads the view back from a tmux pane.
//
// Like `watch --follow-name` and `metrics --listen`, top follows the name: a
// writer that restarts under it makes a new ring file, which top shows from
// the next refresh on (source_renamed.hpp), its rates measured afresh.
#include <sys/ioctl.h>
#include <poll.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <map>
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
#include "ops/top_frames.hpp"
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

// Standard output while top runs: on a terminal, keys arrive without Enter
// and the cursor is hidden while frames are drawn; both are given back when
// the Screen goes, on every way out of the command.
class Screen {
public:
    Screen() {
        if (terminal_) std::fputs("\x1b[?25l", stdout);
    }
    Screen(const Screen&) = delete;
    Screen& operator=(const Screen&) = delete;
    ~Screen() {
        if (terminal_) std::fputs("\x1b[?25h\r\n", stdout);  // then input_'s destructor: the modes
        std::fflush(stdout);
    }
    bool terminal() const { return terminal_; }
    bool keys() const { return input_.active(); }

private:
    bool terminal_ = ::isatty(STDOUT_FILENO) != 0;
    RawInput input_;
};

// One frame: each line over the previous frame's (erasing what is left of
// it), then the rest of the screen erased. Clearing the whole screen first
// would make it flicker at every refresh. A pseudo terminal whose size was
// never set reports 0: then 80x24.
void draw(const std::vector<std::string>& lines) {
    winsize ws{};
    int columns = 80, rows = 24;
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
        if (ws.ws_col > 0) columns = ws.ws_col;
        if (ws.ws_row > 0) rows = ws.ws_row;
    }
    std::string out = "\x1b[H";
    if (columns < kMinColumns) {
        out += fmt::format("too narrow ({} col)", columns).substr(0, static_cast<std::size_t>(columns));
        out += "\x1b[K";
    } else {
        for (int i = 0; i < static_cast<int>(lines.size()) && i < rows; ++i) {
            if (i > 0) out += "\r\n";
            out += lines[static_cast<std::size_t>(i)].substr(0, static_cast<std::size_t>(columns));
            out += "\x1b[K";
        }
    }
    out += "\x1b[J";
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
}

// Sleeps until the next refresh or a key; false when the user asked to quit.
// The stop signals are blocked from the look at the flag until ppoll unblocks
// them atomically: a Ctrl-C that lands while a frame is drawn ends the wait
// at once instead of after a whole --interval (up to an hour).
bool wait_for_key(int timeout_ms, bool keys) {
    sigset_t stops, before;
    sigemptyset(&stops);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stops, s);
    ::pthread_sigmask(SIG_BLOCK, &stops, &before);
    int ready = 0;
    if (!stop_requested()) {
        pollfd p{STDIN_FILENO, POLLIN, 0};
        const timespec timeout{timeout_ms / 1000, static_cast<long>(timeout_ms % 1000) * 1'000'000};
        ready = ::ppoll(&p, keys ? 1 : 0, &timeout, &before);
    }
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);  // a signal still pending is handled here
    if (stop_requested()) return false;
    if (keys && ready > 0) {
        char c = 0;
        while (::read(STDIN_FILENO, &c, 1) == 1)
            if (c == 'q' || c == 'Q') return false;
    }
    return true;
}

// Refreshes until `count` refreshes (0: until q or a stop signal), waiting
// `interval_ms` between them; `refresh(i)` shows refresh i and returns false
// to end early.
template <class Refresh>
void refresh_loop(const Screen& screen, int interval_ms, std::uint64_t count, Refresh&& refresh) {
    for (std::uint64_t i = 0; count == 0 || i < count; ++i) {
        if (!refresh(i)) return;
        if (count != 0 && i + 1 == count) return;
        if (!wait_for_key(interval_ms, screen.keys())) return;
    }
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

int run_top_set(RingSetView& set, int interval_ms, std::uint64_t count) {
    install_stop_handlers();
    Screen screen;
    std::map<std::uint32_t, std::uint64_t> previous_ns;  // per member: its last sample
    int code = kExitOk;
    refresh_loop(screen, interval_ms, count, [&](std::uint64_t refresh) {
        if (auto s = set.refresh(); !s) {  // follows the manifest and the set at the name
            code = runtime_error(s.error());
            return false;
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
        if (screen.terminal()) {
            draw(set_frame_lines(set, rows, total));
        } else if (refresh > 0 || count == 1) {
            const std::string text = set_summary_lines(set, rows, total);
            if (std::fputs(text.c_str(), stdout) < 0 || std::fflush(stdout) != 0) return false;
        }
        return true;
    });
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
    auto set = RingSetView::open_if_set(options.ring, options.where);  // --where applies per member
    if (!set && options.where && set.error().errno_value() == EINVAL) return usage_error(set.error());
    if (set && *set) return run_top_set(**set, interval_ms, count);
    auto opened = RingView::open(options.ring, options.where);
    if (!opened) return opened.error().errno_value() == EINVAL && options.where ? usage_error(opened.error())
                                                                                : runtime_error(opened.error());
    std::unique_ptr<RingView> view = std::move(*opened);
    std::string said;  // the last reopen error reported
    install_stop_handlers();
    Screen screen;
    std::uint64_t previous_ns = 0;
    int code = kExitOk;
    refresh_loop(screen, interval_ms, count, [&](std::uint64_t refresh) {
        if (refresh > 0 && follow_name(view, said)) previous_ns = 0;  // a new ring: a new baseline
        auto r = view->refresh();
        if (!r) {
            code = runtime_error(r.error());
            return false;
        }
        const Rates rates = rates_of(r->sample, previous_ns);
        previous_ns = r->sample.wall_ns;
        if (screen.terminal()) {
            draw(frame_lines(*view, *r, rates));
        } else if (refresh > 0 || count == 1) {  // the first sample only sets the baseline
            std::string line = summary_line(*view, *r, rates) + "\n";
            if (std::fputs(line.c_str(), stdout) < 0 || std::fflush(stdout) != 0) return false;  // a closed pipe ends it
        }
        return true;
    });
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
