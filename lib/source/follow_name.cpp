// follow_name: keep following a ring name across writer restarts, like
// `tail -F` (follow.hpp). The old ring is read to its end first (its writer
// exited), or, when the name now leads to another ring file while ours still
// has a writer, up to what that writer committed. Also wait_for_name: the
// same wait before the first ring exists. reopen_if_renamed
// (source_renamed.hpp) is the test "has the name moved", shared with the
// commands that follow a name without this loop.
#include <sys/stat.h>
#include <time.h>

#include <fmt/format.h>

#include <vector>

#include "source/ring_set_source.hpp"
#include "source/ring_source.hpp"
#include "util/device_id.hpp"
#include "source/source_renamed.hpp"
#include "source/follow_loop.hpp"

namespace evring {

bool follows_names(const EventSource& source) {
    if (source.kind() == SourceKind::Ring) return true;
    const auto* set = dynamic_cast<const RingSetSource*>(&source);
    return set != nullptr && !set->frozen();
}

Result<std::unique_ptr<EventSource>> reopen_if_renamed(const SourceIdentity& old, const SourceOptions& options) {
    if (old.kind != SourceKind::Ring && old.kind != SourceKind::RingSet) return std::unique_ptr<EventSource>();
    auto path = resolve_location(old.location, options.directory);
    if (!path) return std::unique_ptr<EventSource>();
    struct stat st {};
    if (::stat(path->c_str(), &st) != 0) return std::unique_ptr<EventSource>();  // not created yet
    // A live set is a directory; a set snapshot (a file) follows no name.
    if (old.kind == SourceKind::RingSet && !S_ISDIR(st.st_mode)) return std::unique_ptr<EventSource>();
    if (static_cast<std::uint64_t>(st.st_ino) == old.inode && detail::device_id(st) == old.device)
        return std::unique_ptr<EventSource>();  // still ours
    auto fresh = open_source(old.location, options);
    if (!fresh) return std::move(fresh).error();
    if ((*fresh)->kind() != old.kind)
        return Error(EINVAL, fmt::format("'{}' is now a {}, not a {}", old.location, describe((*fresh)->kind()),
                                         describe(old.kind)));
    return std::move(fresh).value();
}

}  // namespace evring

namespace evring::detail {
namespace {

// "ring" or "ring set": what the messages of a followed name call it.
const char* followed_kind(const EventSource& source) {
    return source.kind() == SourceKind::RingSet ? "ring set" : "ring";
}

void sleep_for(std::chrono::nanoseconds interval) {
    const auto ns = interval.count();
    timespec pause{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    ::nanosleep(&pause, nullptr);
}

}  // namespace

std::unique_ptr<EventSource> FollowLoop::try_reopen(std::string& problem) {
    auto fresh = reopen_if_renamed(source_->identity(), options_.reopen);
    if (!fresh) {
        problem = fresh.error().message();
        return nullptr;
    }
    return std::move(fresh).value();
}

Result<std::optional<FollowEnd>> FollowLoop::wait_for_new_ring() {
    if (!sink_.idle()) return std::optional<FollowEnd>(FollowEnd::Sink);
    sink_.notice(fmt::format("waiting for a new {} named '{}'", followed_kind(*source_), source_->identity().location));
    std::string last_problem;
    for (;;) {
        if (stop_requested()) return std::optional<FollowEnd>(FollowEnd::Stopped);
        std::string problem;
        std::unique_ptr<EventSource> fresh = try_reopen(problem);
        if (fresh) {
            if (auto s = switch_to(std::move(fresh)); !s) return std::move(s).error();
            return std::optional<FollowEnd>();
        }
        // Said once per distinct problem, not every poll.
        if (!problem.empty() && problem != last_problem) sink_.notice(problem + "; still waiting");
        last_problem = problem;
        sleep_for(options_.max_sleep);
    }
}

bool FollowLoop::name_moved() {
    const auto now = std::chrono::steady_clock::now();
    if (now < next_name_check_ || !follows_names(*source_)) return false;
    next_name_check_ = now + std::chrono::seconds(1);
    std::string problem;
    std::unique_ptr<EventSource> fresh = try_reopen(problem);
    if (!fresh) return false;
    sink_.notice(fmt::format("'{}' now names another {} file while the writer of the one followed still runs; "
                             "following the new one", source_->identity().location, followed_kind(*source_)));
    if (auto s = switch_to(std::move(fresh)); !s) {
        sink_.notice(s.error().message());
        return false;
    }
    return true;
}

Status FollowLoop::switch_to(std::unique_ptr<EventSource> fresh) {
    add_counters(result_.counters, source_->counters());
    result_.damaged = result_.damaged || source_->damaged();
    sink_.replaced(*source_, *fresh);
    source_ = std::move(fresh);
    ++result_.rings;
    sink_.notice(fmt::format("a new writer created {} '{}' ({}): following it from its oldest event",
                             followed_kind(*source_), source_->identity().location, source_->identity().path));
    if (auto s = position(Position::oldest()); !s) return s;
    // What the new writer wrote and overwrote before we got here; a set's
    // members count their own sequence numbers, so each member has its own
    // gap, naming it (a relay publishes it with the member).
    std::vector<SourceGap> gaps;
    if (const auto* set = dynamic_cast<const RingSetSource*>(source_.get())) {
        for (const std::uint32_t member : set->members()) {
            const RingSource* ring = set->member_source(member);
            if (ring == nullptr || ring->next_seqno() <= 1) continue;
            gaps.push_back(SourceGap{1, ring->next_seqno() - 1, GapReason::RingReplaced, {}, member});
        }
    } else if (const std::uint64_t oldest = source_->next_seqno(); oldest > 1) {
        gaps.push_back(SourceGap{1, oldest - 1, GapReason::RingReplaced, {}});
    }
    for (const SourceGap& gap : gaps) {
        extra_.count_gap(gap);
        if (!sink_.gap(gap)) return Error(EPIPE, "the output stopped");
    }
    return {};
}

}  // namespace evring::detail

namespace evring {
namespace {

bool names_something(std::string_view location, const DirectoryOptions& directory) {
    if (!location_scheme(location).empty()) return true;
    auto path = resolve_location(location, directory);
    struct stat st {};
    return path && ::stat(path->c_str(), &st) == 0;
}

}  // namespace

bool wait_for_name(std::string_view location, const FollowOptions& options,
                   const std::function<void(std::string_view)>& notice,
                   std::chrono::nanoseconds timeout) {
    if (names_something(location, options.reopen.directory)) return true;
    if (notice) notice(fmt::format("waiting for ring '{}' to be created", location));
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        if (options.stop_flag != nullptr && options.stop_flag->load(std::memory_order_relaxed))
            return false;
        const auto waited = std::chrono::steady_clock::now() - start;
        if (waited >= timeout) return false;
        detail::sleep_for(std::min<std::chrono::nanoseconds>(options.max_sleep, timeout - waited));
        if (names_something(location, options.reopen.directory)) return true;
    }
}

}  // namespace evring
