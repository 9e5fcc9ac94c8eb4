// lib/source/wait_thread.hpp — a wait set's own thread and its descriptor
// (wait_set.hpp's fd()).
//
// The owner thread posts plans (wait_plan.hpp); the waiter thread sleeps on
// the newest one and, when it may have something, makes the eventfd
// readable. Invariants, all kept under `mutex_`:
// - The descriptor is readable only for the current plan: post() drains it
//   before replacing the plan, and the thread signals only when the plan it
//   slept on is still the posted one (a late wake of an older plan is
//   dropped), so after post() of a plan that is not ready the descriptor is
//   not readable until something happens.
// - A plan that is ready is signalled by post() itself, before it returns.
// - `control_` changes (release) with every post and at stop, and the
//   thread sleeps with the value it read under the mutex, so it cannot
//   sleep on through a post (the futex compares it).
// - settle(): the thread takes each plan under the mutex and drops the one
//   it held before, so once it has taken the generation posted last it
//   holds nothing of older plans (remove() relies on it).
//
// Thread safety: every member function is for the owner thread; the
// descriptor may be polled from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "evring/error.hpp"
#include "source/wait_plan.hpp"

namespace evring::detail {

class Waiter {
public:
    static Result<std::unique_ptr<Waiter>> start();
    // Stops and joins the thread, makes the descriptor readable once (for
    // whoever holds a duplicate), and closes it.
    ~Waiter();
    Waiter(const Waiter&) = delete;
    Waiter& operator=(const Waiter&) = delete;

    int fd() const noexcept { return eventfd_; }
    void post(std::shared_ptr<const WaitPlan> plan);
    // Returns once the thread holds nothing of plans posted before the last.
    void settle();
    // Readable now (until the next post).
    void notify();
    // Counted as each sleep starts, so an idle thread's sleeps show too.
    std::uint64_t sleeps() const noexcept { return sleeper_.sleeps(); }
    std::uint64_t fires() const noexcept { return fires_.load(std::memory_order_relaxed); }

private:
    explicit Waiter(int eventfd) : eventfd_(eventfd) {}
    void run();
    void signal() noexcept;  // under mutex_
    void drain() noexcept;   // under mutex_

    std::mutex mutex_;
    std::condition_variable taken_cv_;
    std::shared_ptr<const WaitPlan> plan_;
    std::uint64_t generation_ = 0;  // of plan_
    std::uint64_t taken_ = 0;       // the generation the thread holds
    std::uint64_t fired_ = 0;       // the generation signalled (0: none)
    bool stopping_ = false;
    std::uint32_t control_ = 0;     // a private futex word
    int eventfd_ = -1;
    Sleeper sleeper_;  // the thread's alone, but for sleeps()
    std::atomic<std::uint64_t> fires_{0};
    std::thread thread_;
};

}  // namespace evring::detail
