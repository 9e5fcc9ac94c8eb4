// The ops commands' process-free parts: Prometheus label escaping and the
// descriptor sampler behind `top` and `metrics` (exact tallies, the bounded
// scan scaled up, abandoned reservations), on a ring written by this test.
#include <cstring>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_writer.hpp"
#include "ops/metrics_text.hpp"
#include "ops/ring_sample.hpp"
#include "support/temp_ring.hpp"

namespace evring::cli {
namespace {

TEST(MetricsText, LabelValuesEscapeBackslashQuoteAndNewlineOnly) {
    EXPECT_EQ(escape_label("plain-ring_1"), "plain-ring_1");
    EXPECT_EQ(escape_label("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
    EXPECT_EQ(escape_label("tab\there"), "tab\there");
}

struct Ring {
    Ring() : path(dir.file("ring")) {
        CreateOptions options;
        auto made = RingWriter::create(test::small_spec(path, 10, 20), options);
        if (!made) ADD_FAILURE() << made.error().message();
        writer.emplace(std::move(made).value());
    }
    // n events; every third is type 3 with 24 bytes, the others type 2 with 8.
    void publish(std::uint64_t n) {
        Publisher publisher(writer->ring());
        for (std::uint64_t i = 0; i < n; ++i) {
            const bool big = ++written % 3 == 0;
            Reservation r = publisher.reserve(big ? 24 : 8);
            r.descriptor().event_type = big ? 3 : 2;
            publisher.commit(r);
        }
    }
    test::TempDir dir;
    std::string path;
    std::optional<RingWriter> writer;
    std::uint64_t written = 0;
};

TEST(RingSampler, FirstSampleCountsTheRingThenOnlyNewEventsExactly) {
    Ring ring;
    ring.publish(30);
    RingSampler sampler(ring.writer->ring());
    auto first = sampler.sample();
    ASSERT_TRUE(first.ok()) << first.error().message();
    EXPECT_EQ(first->new_events, 30u);
    EXPECT_FALSE(first->estimated);
    EXPECT_EQ(first->types.at(2).events, 20);
    EXPECT_EQ(first->types.at(3).events, 10);
    EXPECT_EQ(first->types.at(3).bytes, 240);
    ring.publish(6);
    auto second = sampler.sample();
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(second->new_events, 6u);
    EXPECT_EQ(second->scanned, 6u);
    EXPECT_EQ(second->types.at(3).events, 2);
    EXPECT_EQ(sampler.totals().at(2).events, 24);
    EXPECT_EQ(sampler.totals().at(3).events, 12);
    auto idle = sampler.sample();
    ASSERT_TRUE(idle.ok());
    EXPECT_EQ(idle->new_events, 0u);
    EXPECT_TRUE(idle->types.empty());
}

TEST(RingSampler, MoreEventsThanTheScanBoundAreScaledFromTheNewest) {
    Ring ring;
    RingSampler sampler(ring.writer->ring(), 30);
    ASSERT_TRUE(sampler.sample().ok());
    ring.publish(300);
    auto s = sampler.sample();
    ASSERT_TRUE(s.ok());
    EXPECT_TRUE(s->estimated);
    EXPECT_EQ(s->scanned, 30u);
    EXPECT_EQ(s->new_events, 300u);
    EXPECT_DOUBLE_EQ(s->types.at(2).events + s->types.at(3).events, 300.0);
    EXPECT_DOUBLE_EQ(s->types.at(3).events, 100.0);  // 10 of the 30 scanned, times 10
}

TEST(RingSampler, AnUncommittedReservationIsRetriedNotCountedAtOnce) {
    Ring ring;
    RingSampler sampler(ring.writer->ring());
    ASSERT_TRUE(sampler.sample().ok());
    Publisher publisher(ring.writer->ring());
    Reservation held = publisher.reserve(8);  // seqno 1: not committed yet
    ring.publish(2);
    auto s = sampler.sample();
    ASSERT_TRUE(s.ok());
    // Seqno 1, not committed in the middle of the range, is passed (counted as
    // published, not by type); 2 and 3 are counted by type.
    EXPECT_EQ(s->new_events, 3u);
    EXPECT_EQ(s->types.at(2).events, 2);  // events 1 and 2 of ring.publish are both type 2
    Reservation trailing = publisher.reserve(8);  // seqno 4: the newest, not committed yet
    auto t = sampler.sample();
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->new_events, 0u);  // looked at again next time, not counted yet
    trailing.descriptor().event_type = 2;
    publisher.commit(trailing);
    auto u = sampler.sample();
    ASSERT_TRUE(u.ok());
    EXPECT_EQ(u->new_events, 1u);
    EXPECT_EQ(u->types.at(2).events, 1);
    EXPECT_EQ(sampler.abandoned(), 0u);
    (void)held;
}

}  // namespace
}  // namespace evring::cli
