// WaitSet and WaitArm (wait_set.hpp): looking at the members in the owner
// thread, and handing what to sleep on to the sleeper (wait_plan.hpp).
#include "evring/source/wait_set.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <optional>

#include "evring/ring/ring_extension.hpp"
#include "evring/source/event_source.hpp"
#include "ring/sigbus_guard.hpp"
#include "source/wait_plan.hpp"
#include "source/wait_thread.hpp"

namespace evring {

using Clock = std::chrono::steady_clock;

void WaitArm::watch_ring(std::shared_ptr<const RingReader> reader, std::uint64_t next_seqno) {
    rings_.push_back({std::move(reader), next_seqno});
}

void WaitArm::recheck_within(std::chrono::nanoseconds delay) noexcept { recheck_ = std::min(recheck_, delay); }

void WaitArm::watch(std::chrono::nanoseconds period, std::function<bool()> changed) {
    probes_.push_back({period, std::move(changed)});
}

void EventSource::arm_wait(WaitArm& arm) {
    if (pending_) return arm.set_ready();  // a held notice comes first
    if (healing_) return arm.recheck_within(kHealPoll);  // see wait_for_recording
    prepare_wait(arm);
}

// Always correct, if not frugal: a source that can still produce is asked
// again every 100 ms (the follow loop's own pace), any other is ready.
void EventSource::prepare_wait(WaitArm& arm) {
    if (live())
        arm.recheck_within(detail::kLivenessInterval);
    else
        arm.set_ready();
}

struct WaitSet::Impl {
    std::vector<EventSource*> members;
    std::vector<EventSource*> ready;
    // The set's doorbells, by the reader they ring for; kept while a member
    // still watches that ring, so each is attached once.
    std::map<const RingReader*, std::shared_ptr<detail::WaitBell>> bells;
    std::uint64_t plans = 0;
    std::uint64_t looks = 0;
    detail::Sleeper sleeper;        // wait() without a thread sleeps here
    std::uint32_t own_control = 0;  // ... on this word, which nothing changes
    // Declared last: stopped first, while the rest is still there.
    std::unique_ptr<detail::Waiter> waiter;

    std::shared_ptr<detail::WaitBell> bell_for(const std::shared_ptr<const RingReader>& reader,
                                               std::map<const RingReader*, std::shared_ptr<detail::WaitBell>>& used);
    std::shared_ptr<const detail::WaitPlan> look();
    void publish();
};

std::shared_ptr<detail::WaitBell> WaitSet::Impl::bell_for(
    const std::shared_ptr<const RingReader>& reader,
    std::map<const RingReader*, std::shared_ptr<detail::WaitBell>>& used) {
    if (auto it = used.find(reader.get()); it != used.end()) return it->second;
    auto bell = std::make_shared<detail::WaitBell>();
    if (auto it = bells.find(reader.get()); it != bells.end()) {
        bell = it->second;
    } else {
        bell->reader = reader;
        // Doorbell::attach reads the ring's header unguarded (as RingSource
        // does at open): touch it under the guard first, so a file cut short
        // under the reader leaves the bell unattached (the set then wakes at
        // once and the source reports the truncation) instead of a SIGBUS.
        const MappedRing& ring = reader->ring();
        if (guard_sigbus([&] { (void)ring_features(*extension_in(&ring.header())); }))
            bell->doorbell.emplace(Doorbell::attach(ring));
    }
    used.emplace(reader.get(), bell);
    return bell;
}

// Looks at every member (in this, the owner thread): fills `ready`, and
// makes the plan to sleep on when none is.
std::shared_ptr<const detail::WaitPlan> WaitSet::Impl::look() {
    ++looks;
    ready.clear();
    auto plan = std::make_shared<detail::WaitPlan>();
    plan->serial = ++plans;
    std::map<const RingReader*, std::shared_ptr<detail::WaitBell>> used;
    const auto now = Clock::now();
    for (EventSource* source : members) {
        WaitArm arm;
        source->arm_wait(arm);
        if (arm.ready()) {
            ready.push_back(source);
            continue;
        }
        for (const WaitArm::Ring& ring : arm.rings())
            plan->rings.push_back({bell_for(ring.reader, used), ring.next_seqno});
        plan->probes.insert(plan->probes.end(), arm.probes().begin(), arm.probes().end());
        if (arm.recheck() != std::chrono::nanoseconds::max()) {
            const auto by = now + arm.recheck();
            plan->wake_by = plan->wake_by ? std::min(*plan->wake_by, by) : by;
        }
    }
    plan->ready = !ready.empty();
    bells = std::move(used);  // bells no member watches any more go (when no plan holds them)
    return plan;
}

WaitSet::WaitSet() : impl_(std::make_unique<Impl>()) {}
WaitSet::~WaitSet() = default;

Status WaitSet::add(EventSource& source) {
    auto& members = impl_->members;
    if (std::find(members.begin(), members.end(), &source) != members.end())
        return Error(EEXIST, "the source '" + source.identity().location + "' is in this wait set already");
    members.push_back(&source);
    if (impl_->waiter) impl_->waiter->post(impl_->look());  // watched from now on
    return {};
}

bool WaitSet::remove(EventSource& source) {
    auto& members = impl_->members;
    const auto it = std::find(members.begin(), members.end(), &source);
    if (it == members.end()) return false;
    members.erase(it);
    if (impl_->waiter) {
        impl_->waiter->post(impl_->look());
        impl_->waiter->settle();  // the thread holds nothing of the source now (probes included)
    }
    impl_->ready.clear();
    return true;
}

std::size_t WaitSet::size() const noexcept { return impl_->members.size(); }

const std::vector<EventSource*>& WaitSet::ready() { return wait(std::chrono::nanoseconds::zero()); }

const std::vector<EventSource*>& WaitSet::wait(std::chrono::nanoseconds timeout) {
    Impl& s = *impl_;
    const auto start = Clock::now();
    const auto deadline = timeout >= Clock::time_point::max() - start ? Clock::time_point::max() : start + timeout;
    for (;;) {
        auto plan = s.look();
        if (s.waiter) s.waiter->post(plan);
        if (!s.ready.empty()) return s.ready;
        const auto now = Clock::now();
        if (now >= deadline) return s.ready;
        if (!s.waiter) {
            (void)s.sleeper.sleep(*plan, s.own_control, s.own_control, deadline);
            continue;  // woken or timed out: look again (a last look at the deadline)
        }
        // The set's thread sleeps on the plan; this thread on its descriptor.
        pollfd p{s.waiter->fd(), POLLIN, 0};
        const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now);
        const timespec ts{static_cast<time_t>(left.count() / 1'000'000'000), static_cast<long>(left.count() % 1'000'000'000)};
        (void)::ppoll(&p, 1, deadline == Clock::time_point::max() ? nullptr : &ts, nullptr);
    }
}

Result<int> WaitSet::fd() {
    if (!impl_->waiter) {
        auto started = detail::Waiter::start();
        if (!started) return std::move(started).error();
        impl_->waiter = std::move(started).value();
        impl_->waiter->post(impl_->look());
    }
    return impl_->waiter->fd();
}

void WaitSet::notify() {
    if (impl_->waiter) impl_->waiter->notify();
}

WaitSet::Stats WaitSet::stats() const {
    Stats stats;
    stats.looks = impl_->looks;
    stats.sleeps = impl_->sleeper.sleeps() + (impl_->waiter ? impl_->waiter->sleeps() : 0);
    stats.fires = impl_->waiter ? impl_->waiter->fires() : 0;
    return stats;
}

}  // namespace evring
