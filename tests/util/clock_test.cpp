#include "evring/clock.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace evring {
namespace {

// How far `value` lies outside [before, after]; 0 when inside. Preemption
// only widens the bracket, so this bound does not depend on machine load.
std::uint64_t distance_outside(std::uint64_t before, std::uint64_t value, std::uint64_t after) {
    if (value < before) return before - value;
    if (value > after) return value - after;
    return 0;
}

// The largest bracketed error over calls spread across at least `span_ns` of
// CLOCK_REALTIME (long enough to cross several re-anchors).
std::uint64_t worst_error_over(std::uint64_t span_ns) {
    std::uint64_t worst = 0;
    const std::uint64_t end = realtime_nanos() + span_ns;
    for (;;) {
        const std::uint64_t before = realtime_nanos();
        const std::uint64_t value = wall_clock_nanos();
        const std::uint64_t after = realtime_nanos();
        worst = std::max(worst, distance_outside(before, value, after));
        if (after >= end) return worst;
        for (int i = 0; i < 2000; ++i) (void)wall_clock_nanos();  // calls between samples
    }
}

bool kernel_uses_tsc() {
    const int fd = ::open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                          O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char text[16] = {};
    const ssize_t n = ::read(fd, text, sizeof text - 1);
    ::close(fd);
    return n > 0 && std::strncmp(text, "tsc\n", 4) == 0;
}

// Calls the clock until it leaves calibration (bounded by 10 s of wall time).
ClockSource settled_source() {
    const std::uint64_t give_up = realtime_nanos() + 10'000'000'000u;
    while (wall_clock_source() == ClockSource::Calibrating && realtime_nanos() < give_up)
        (void)wall_clock_nanos();
    return wall_clock_source();
}

class WallClock : public ::testing::Test {
protected:
    void TearDown() override {
        ::unsetenv("EVRING_CLOCK");
        restart_wall_clock();
    }
};

TEST_F(WallClock, StaysWithinOneMicrosecondOfRealtimeAcrossReanchors) {
    settled_source();
    EXPECT_LE(worst_error_over(300'000'000), 1000u) << "source: " << to_string(wall_clock_source());
}

TEST_F(WallClock, UsesTheTscWhenTheKernelClocksourceIsTsc) {
    if (!kernel_uses_tsc()) GTEST_SKIP() << "the kernel's clocksource is not tsc on this machine";
    restart_wall_clock();
    EXPECT_EQ(settled_source(), ClockSource::Tsc);
}

TEST_F(WallClock, EnvironmentVariableRealtimeForcesClockGettime) {
    ::setenv("EVRING_CLOCK", "realtime", 1);
    restart_wall_clock();
    EXPECT_EQ(wall_clock_source(), ClockSource::Realtime);
    EXPECT_LE(worst_error_over(10'000'000), 0u);
}

TEST_F(WallClock, RestartRecalibratesFromScratch) {
    ::setenv("EVRING_CLOCK", "realtime", 1);
    restart_wall_clock();
    ASSERT_EQ(wall_clock_source(), ClockSource::Realtime);
    ::unsetenv("EVRING_CLOCK");
    restart_wall_clock();
    const ClockSource source = settled_source();
    EXPECT_NE(source, ClockSource::Calibrating);
    if (kernel_uses_tsc()) {
        EXPECT_EQ(source, ClockSource::Tsc);
    }
    EXPECT_LE(worst_error_over(100'000'000), 1000u);
}

TEST_F(WallClock, ManyThreadsReadConsistentTimesWhileItIsRestarted) {
    std::atomic<bool> stop{false};
    std::vector<std::uint64_t> worst(2, 0);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < worst.size(); ++t) {
        threads.emplace_back([&, t] {
            // Relaxed: a stop flag, nothing is published through it.
            while (!stop.load(std::memory_order_relaxed)) {
                const std::uint64_t before = realtime_nanos();
                const std::uint64_t value = wall_clock_nanos();
                const std::uint64_t after = realtime_nanos();
                worst[t] = std::max(worst[t], distance_outside(before, value, after));
            }
        });
    }
    for (int i = 0; i < 5; ++i) {
        restart_wall_clock();
        settled_source();
        (void)worst_error_over(60'000'000);
    }
    stop.store(true, std::memory_order_relaxed);  // relaxed: see the load above
    for (auto& thread : threads) thread.join();
    for (std::uint64_t w : worst) EXPECT_LE(w, 1000u);
}

}  // namespace
}  // namespace evring
