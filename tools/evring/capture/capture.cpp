// The trigger side of captures (capture.hpp): options, windows and their
// limits, the copies' threads.
#include "capture/capture.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include <cerrno>

#include "commands.hpp"
#include "evring/clock.hpp"
#include "export/export_cmd.hpp"
#include "output/escape.hpp"
#include "output/values.hpp"

namespace evring::cli {
namespace {

Status need_trigger(const std::optional<std::string>& value, std::string_view option) {
    if (!value) return {};
    return Error(EINVAL, fmt::format("{} '{}' goes with --trigger (it shapes the captures a trigger starts)", option,
                                     printable(*value)));
}

Result<std::uint64_t> duration(const std::optional<std::string>& text, std::string_view option,
                               std::uint64_t fallback) {
    if (!text) return fallback;
    if (!text->empty() && (*text)[0] == '-')
        return Error(EINVAL, fmt::format("bad {} '{}': a duration cannot be negative", option, printable(*text)));
    return parse_duration_nanos(option, *text);
}

}  // namespace

std::string capture_seconds(std::uint64_t nanos) {
    return fmt::format("{:.3f} s", static_cast<double>(nanos) / 1e9);
}

Result<std::optional<CapturePlan>> plan_captures(const CaptureOptions& options, const std::string& output) {
    if (!options.trigger) {
        for (auto [value, option] : {std::pair{&options.before, "--before"}, {&options.after, "--after"},
                                     {&options.cooldown, "--cooldown"}, {&options.max_captures, "--max-captures"}})
            if (auto s = need_trigger(*value, option); !s) return std::move(s).error();
        return std::optional<CapturePlan>();
    }
    CapturePlan plan;
    plan.dir = output;
    auto before = duration(options.before, "--before", plan.before_nanos);
    if (!before) return std::move(before).error();
    auto after = duration(options.after, "--after", plan.after_nanos);
    if (!after) return std::move(after).error();
    auto cooldown = duration(options.cooldown, "--cooldown", 0);
    if (!cooldown) return std::move(cooldown).error();
    plan.before_nanos = *before;
    plan.after_nanos = *after;
    plan.cooldown_nanos = *cooldown;
    if (options.max_captures) {
        auto n = parse_int_in("--max-captures", *options.max_captures, 1, 1'000'000);
        if (!n) return std::move(n).error();
        plan.max_captures = static_cast<std::uint64_t>(*n);
    }
    struct stat st {};
    if (::stat(output.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
        return Error(EINVAL, fmt::format("-o '{}': with --trigger, -o names the directory for the capture files, and "
                                         "this is not a directory", printable(output)));
    return std::optional<CapturePlan>(std::move(plan));
}

CaptureSink::~CaptureSink() {
    close_open();
    reap(true);
}

bool CaptureSink::event(const SourceEvent& event) {
    reap(false);
    const std::uint64_t t = event.descriptor.record_epoch_nanos;
    if (open_ != nullptr && t <= open_->window.end()) {
        open_->window.extend(t + plan_.after_nanos);
        ++open_->triggers;
        return true;
    }
    close_open();
    if (done()) return false;
    if (plan_.max_captures != 0 && started_ >= plan_.max_captures) {
        ++skipped_;
        return true;
    }
    if (started_ > 0 && plan_.cooldown_nanos != 0 && t < last_end_ + plan_.cooldown_nanos) {
        ++skipped_;
        return true;
    }
    if (copying_.size() >= kMaxCopying) {
        if (!said_busy_)
            fmt::print(stderr, "evring: trigger seqno {} not captured: {} captures are still being written (later "
                               "such triggers are counted at the end)\n", event.descriptor.seqno, copying_.size());
        said_busy_ = true;
        ++skipped_;
        return true;
    }
    start_capture(event);
    return status_.ok();
}

void CaptureSink::start_capture(const SourceEvent& event) {
    if (started_ == 0 && ::mkdir(plan_.dir.c_str(), 0755) != 0 && errno != EEXIST) {
        status_ = Error::from_errno(errno, fmt::format("cannot create the capture directory '{}'", plan_.dir));
        return;
    }
    const std::uint64_t t = event.descriptor.record_epoch_nanos;
    auto capture = std::make_unique<Capture>(t > plan_.before_nanos ? t - plan_.before_nanos : 0,
                                             t + plan_.after_nanos);
    capture->trigger_seqno = event.descriptor.seqno;
    capture->trigger_nanos = t;
    capture->start_seqno_floor = seqno_floor(capture->window.start());
    // The first free name, so that a second run into DIR adds files.
    for (;; ++next_number_) {
        capture->path = fmt::format("{}/capture-{:04}.evrec", plan_.dir, next_number_);
        struct stat st {};
        if (::stat(capture->path.c_str(), &st) != 0) break;
    }
    ++next_number_;
    ++started_;
    fmt::print(stderr, "evring: trigger at seqno {}{}: capturing {} before and {} after into {}\n",
               event.descriptor.seqno, event.member != 0 ? fmt::format(" (member {})", event.member) : std::string(),
               capture_seconds(plan_.before_nanos), capture_seconds(plan_.after_nanos), printable(capture->path));
    Capture& c = *capture;
    c.thread = std::thread([&c, this] { copy_capture(c, context_); });
    open_ = capture.get();
    copying_.push_back(std::move(capture));
}

void CaptureSink::close_open() {
    if (open_ == nullptr) return;
    last_end_ = open_->window.end();
    open_->window.close();
    open_ = nullptr;
}

bool CaptureSink::done() const {
    return plan_.max_captures != 0 && started_ >= plan_.max_captures && open_ == nullptr;
}

void CaptureSink::notice(std::string_view text) { fmt::print(stderr, "evring: {}\n", printable(text)); }

bool CaptureSink::idle() {
    // Caught up: every event committed so far was tested, so a window whose
    // end passed kCloseGrace ago can take no more triggers.
    const std::uint64_t now = wall_clock_nanos();
    if (open_ != nullptr &&
        now > open_->window.end() + static_cast<std::uint64_t>(std::chrono::nanoseconds(kCloseGrace).count()))
        close_open();
    sample();
    reap(false);
    return status_.ok() && !done();
}

void CaptureSink::sample() {
    if (source_ == nullptr) return;
    const std::uint64_t now = wall_clock_nanos();
    if (!samples_.empty() && now < samples_.back().first + 10'000'000) return;
    samples_.emplace_back(now, member_next_seqnos(*source_));
    while (samples_.size() > 1 && samples_[1].first + plan_.before_nanos + 1'000'000'000 < now) samples_.pop_front();
}

std::vector<std::uint64_t> CaptureSink::seqno_floor(std::uint64_t nanos) const {
    // A sample (T, n) taken caught up: a member's seqnos below n were
    // committed, and so stamped, by T. For T <= nanos none of them is in the
    // window. A first sample before any event (n == 1) bounds every later
    // window.
    std::vector<std::uint64_t> floor;
    if (samples_.empty()) return floor;
    for (std::uint64_t next : samples_.front().second) floor.push_back(next == 1 ? 1 : 0);
    for (const auto& [when, next] : samples_)
        if (when <= nanos) floor = next;
    return floor;
}

void CaptureSink::reap(bool wait) {
    for (auto it = copying_.begin(); it != copying_.end();) {
        Capture& c = **it;
        if (!wait && !c.finished.load(std::memory_order_acquire)) {
            ++it;
            continue;
        }
        if (&c == open_) close_open();
        c.thread.join();
        fmt::print(stderr, "evring: {}\n", c.summary);
        if (!c.status && status_) status_ = c.status;
        it = copying_.erase(it);
    }
}

Status CaptureSink::finish() {
    close_open();
    reap(true);
    fmt::print(stderr, "evring: {} capture(s) in {}{}\n", started_, printable(plan_.dir),
               skipped_ != 0 ? fmt::format("; {} trigger(s) not captured (--max-captures, --cooldown or captures "
                                           "still being written)", skipped_)
                             : std::string());
    return status_;
}

}  // namespace evring::cli
