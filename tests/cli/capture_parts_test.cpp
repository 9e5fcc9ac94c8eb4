// The parts of flight-recorder captures that need no ring: the window the
// trigger thread moves and the copying thread waits on (capture_window.hpp),
// first on one thread, then with the copy waiting on a thread of its own;
// and the options (capture_options.hpp). The captures themselves:
// tests/cli/capture_test.sh.
#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "capture/capture_options.hpp"
#include "capture/capture_window.hpp"

namespace evring::cli {
namespace {

TEST(CaptureWindow, HoldsEventsUpToItsEndOnceClosed) {
    std::atomic<bool> stop{false};
    CaptureWindow window(100, 200);
    window.extend(150);  // never earlier
    EXPECT_EQ(window.end(), 200u);
    window.close();
    EXPECT_TRUE(window.holds(100, stop));
    EXPECT_TRUE(window.holds(200, stop));
    EXPECT_FALSE(window.holds(201, stop));  // closed: at once, no wait
}

TEST(CaptureWindow, ExtendedWindowHoldsTheLaterEvent) {
    std::atomic<bool> stop{false};
    CaptureWindow window(0, 200);
    window.extend(300);
    window.close();
    EXPECT_TRUE(window.holds(250, stop));
    EXPECT_FALSE(window.holds(301, stop));
}

TEST(CaptureWindow, StopEndsAWaitWithoutHoldingTheEvent) {
    std::atomic<bool> stop{true};
    CaptureWindow window(0, 200);
    EXPECT_FALSE(window.holds(201, stop));  // open, but stopping: not held, no hang
    EXPECT_FALSE(window.closed());
}

// The copy waits at an event past the open window's end until the trigger
// thread decides: extended over it (held), or closed before it (not held).
TEST(CaptureWindow, CopyWaitsForTheTriggerThreadsDecision) {
    for (const bool extend : {true, false}) {
        std::atomic<bool> stop{false};
        CaptureWindow window(0, 200);
        std::atomic<int> answer{-1};
        std::thread copy([&] { answer = window.holds(250, stop) ? 1 : 0; });
        // Whatever the copy has reached, it cannot answer before the decision.
        EXPECT_EQ(answer.load(), -1);
        if (extend) window.extend(260);
        window.close();
        copy.join();
        EXPECT_EQ(answer.load(), extend ? 1 : 0) << (extend ? "extended" : "closed");
    }
}

TEST(CaptureOptions, WithoutTriggerItsOptionsAreRefusedByName) {
    CaptureOptions options;
    options.before = "2s";
    auto plan = plan_captures(options, "caps");
    ASSERT_FALSE(plan);
    EXPECT_NE(plan.error().message().find("--before '2s' goes with --trigger"), std::string::npos);
    options.before.reset();
    auto none = plan_captures(options, "caps");
    ASSERT_TRUE(none);
    EXPECT_FALSE(*none);
}

TEST(CaptureOptions, DurationsAndCountsAreChecked) {
    CaptureOptions options;
    options.trigger = "type == TRADE";
    options.before = "-1s";
    auto negative = plan_captures(options, "caps");
    ASSERT_FALSE(negative);
    EXPECT_NE(negative.error().message().find("bad --before '-1s': a duration cannot be negative"), std::string::npos);
    options.before = "2s";
    options.after = "250ms";
    options.cooldown = "1s";
    options.max_captures = "3";
    auto plan = plan_captures(options, "/no/such/dir/caps");
    ASSERT_TRUE(plan) << plan.error().message();
    ASSERT_TRUE(*plan);
    EXPECT_EQ((*plan)->before_nanos, 2'000'000'000u);
    EXPECT_EQ((*plan)->after_nanos, 250'000'000u);
    EXPECT_EQ((*plan)->cooldown_nanos, 1'000'000'000u);
    EXPECT_EQ((*plan)->max_captures, 3u);
    options.max_captures = "0";
    EXPECT_FALSE(plan_captures(options, "caps"));
}

TEST(CaptureOptions, OutputThatIsAFileIsRefused) {
    CaptureOptions options;
    options.trigger = "type == TRADE";
    auto plan = plan_captures(options, "/dev/null");
    ASSERT_FALSE(plan);
    EXPECT_NE(plan.error().message().find("not a directory"), std::string::npos);
}

}  // namespace
}  // namespace evring::cli
