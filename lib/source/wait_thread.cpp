// A wait set's thread and descriptor (wait_thread.hpp).
#include "source/wait_thread.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "evring/ring/shared_word.hpp"

namespace evring::detail {

Result<std::unique_ptr<Waiter>> Waiter::start() {
    const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) return Error::from_errno(errno, "creating the wait set's eventfd");
    std::unique_ptr<Waiter> waiter(new Waiter(fd));
    try {
        waiter->thread_ = std::thread([w = waiter.get()] { w->run(); });
    } catch (const std::system_error& e) {
        return Error(e.code().value(), std::string("starting the wait set's thread: ") + e.what());
    }
    return waiter;
}

Waiter::~Waiter() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        shared::store_release(control_, control_ + 1);
    }
    wake_control(&control_);
    if (thread_.joinable()) thread_.join();
    {
        std::lock_guard lock(mutex_);
        signal();  // a loop polling a duplicate wakes and finds the set gone
    }
    ::close(eventfd_);
}

void Waiter::signal() noexcept {
    const std::uint64_t one = 1;
    // Cannot fail short of an overflow of the counter (2^64 - 2), which
    // drain() keeps far off; EAGAIN would still leave it readable.
    (void)!::write(eventfd_, &one, sizeof one);
}

void Waiter::drain() noexcept {
    std::uint64_t count = 0;
    (void)!::read(eventfd_, &count, sizeof count);  // EAGAIN when it was not readable
}

void Waiter::post(std::shared_ptr<const WaitPlan> plan) {
    {
        std::lock_guard lock(mutex_);
        drain();
        const bool ready = plan->ready;
        plan_ = std::move(plan);
        ++generation_;
        if (ready) {
            signal();
            fired_ = generation_;
            fires_.fetch_add(1, std::memory_order_relaxed);
        }
        // Release: pairs with the sleeper's acquire load (wait_sleep.cpp).
        shared::store_release(control_, control_ + 1);
    }
    wake_control(&control_);
}

void Waiter::settle() {
    std::unique_lock lock(mutex_);
    taken_cv_.wait(lock, [&] { return taken_ >= generation_; });
}

void Waiter::notify() {
    std::lock_guard lock(mutex_);
    signal();
}

void Waiter::run() {
    std::shared_ptr<const WaitPlan> plan;
    for (;;) {
        std::uint64_t generation = 0;
        std::uint32_t seen = 0;
        bool parked = false;
        bool stop = false;
        {
            std::lock_guard lock(mutex_);
            stop = stopping_;
            plan = stop ? nullptr : plan_;  // drops the plan held before: settle() relies on it
            generation = taken_ = generation_;
            seen = shared::load_relaxed(control_);  // under the mutex: the owner's writes are ordered
            parked = !plan || fired_ == generation;
        }
        taken_cv_.notify_all();
        if (stop) break;
        if (parked) {
            wait_control(&control_, seen, std::nullopt);  // until the next post (or stop)
            continue;
        }
        const SleepEnd end = sleeper_.sleep(*plan, control_, seen, std::chrono::steady_clock::time_point::max());
        if (end != SleepEnd::Woken) continue;  // a new plan, or stop
        std::lock_guard lock(mutex_);
        if (generation == generation_ && fired_ != generation) {
            signal();
            fired_ = generation;
            fires_.fetch_add(1, std::memory_order_relaxed);
        }
    }
}

}  // namespace evring::detail
