// Wait sets (wait_set.hpp), on one thread: which members ready() reports,
// what each kind of source tells a set (EventSource::arm_wait), and when the
// descriptor is readable. The set's thread and writers in other threads and
// processes: wait_set_process_test.cpp.
#include <poll.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_writer.hpp"
#include "evring/source/source_open.hpp"
#include "evring/source/wait_set.hpp"
#include "support/recording_files.hpp"
#include "support/ring_sets.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using namespace std::chrono_literals;
using test::TempDir;

// A live ring this thread writes, and a source reading it from its oldest event.
struct LiveRing {
    explicit LiveRing(const TempDir& dir, const std::string& name) : path(dir.file(name)) {
        CreateOptions create;
        create.keep_on_close = true;
        auto made = RingWriter::create(test::small_spec(path, 8, 16), create);
        EXPECT_TRUE(made.ok()) << made.error().message();
        writer.emplace(std::move(made).value());
        publisher.emplace(writer->ring());
        auto opened = open_source(path, {});
        EXPECT_TRUE(opened.ok()) << opened.error().message();
        source = std::move(opened).value();
        EXPECT_TRUE(source->seek(Position::oldest()).ok());
    }
    // The writer closes the ring (kept: keep_on_close).
    void leave() {
        publisher.reset();
        writer.reset();
    }
    void commit(int n = 1) {
        for (int i = 0; i < n; ++i) publisher->commit(publisher->reserve(8));
    }
    // Reads until NotReady (or End); returns the events read.
    int drain() {
        SourceItem item;
        int events = 0;
        for (;;) {
            const SourceStep step = source->next(item);
            if (step == SourceStep::Event) ++events;
            if (step == SourceStep::NotReady || step == SourceStep::End || step == SourceStep::Failed) return events;
        }
    }
    std::string path;
    std::optional<RingWriter> writer;
    std::optional<Publisher> publisher;
    std::unique_ptr<EventSource> source;
};

bool readable(int fd, std::chrono::milliseconds within = 0ms) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(within.count())) == 1;
}

std::vector<EventSource*> members(std::initializer_list<EventSource*> list) { return list; }

// A source of the test's own: says live() and hands out nothing.
class Quiet final : public EventSource {
public:
    explicit Quiet(bool live) : live_(live) {}
    Result<std::string> seek(const Position&) override { return std::string(); }
    void wait(std::chrono::nanoseconds) override {}
    bool live() const override { return live_; }
    Result<std::uint64_t> now_nanos() override { return std::uint64_t{0}; }
    std::uint64_t next_seqno() const override { return 0; }

protected:
    SourceStep read(SourceItem&, PayloadRead) override { return live_ ? SourceStep::NotReady : SourceStep::End; }

private:
    bool live_;
};

TEST(WaitArm, TheDefaultLooksAtALiveSourceEvery100MsAndFindsAnyOtherReady) {
    Quiet live(true), ended(false);
    WaitArm a, b;
    live.arm_wait(a);
    ended.arm_wait(b);
    EXPECT_FALSE(a.ready());
    EXPECT_EQ(a.recheck(), 100ms);
    EXPECT_TRUE(b.ready());
}

TEST(WaitArm, ALiveRingIsWatchedOnItsDoorbellFromItsNextSequenceNumber) {
    TempDir dir;
    LiveRing ring(dir, "a");
    WaitArm empty;
    ring.source->arm_wait(empty);
    EXPECT_FALSE(empty.ready());
    ASSERT_EQ(empty.rings().size(), 1u);
    EXPECT_EQ(empty.rings()[0].next_seqno, 1u);
    EXPECT_EQ(empty.recheck(), std::chrono::nanoseconds::max()) << "nothing reserved: no need to look again";
    ring.commit();
    WaitArm committed;
    ring.source->arm_wait(committed);
    EXPECT_TRUE(committed.ready());
}

TEST(WaitArm, AReservationNotCommittedYetIsLookedAtAgainLikeTheFollowLoopDoes) {
    TempDir dir;
    LiveRing ring(dir, "a");
    auto reservation = ring.publisher->reserve(8);  // its commit wakes the set; its abandonment would not
    WaitArm arm;
    ring.source->arm_wait(arm);
    EXPECT_FALSE(arm.ready());
    EXPECT_EQ(arm.recheck(), 100ms);
    ring.publisher->commit(reservation);
    WaitArm after;
    ring.source->arm_wait(after);
    EXPECT_TRUE(after.ready());
}

TEST(WaitArm, ARingSetWatchesEveryMemberAndProbesItsManifest) {
    struct Fixture : test::SetFixture {
        void TestBody() override {}
    } set;
    auto writers = set.members(2);
    auto source = set.open_at(Position::oldest());
    WaitArm arm;
    source->arm_wait(arm);
    EXPECT_FALSE(arm.ready());
    EXPECT_EQ(arm.rings().size(), 2u);
    EXPECT_EQ(arm.probes().size(), 1u) << "the manifest's generation (new members)";
    test::publish_at(writers[1], 10);
    WaitArm after;
    source->arm_wait(after);
    EXPECT_TRUE(after.ready());
}

TEST(WaitSet, ReadyListsExactlyTheMembersWithSomethingToRead) {
    TempDir dir;
    LiveRing a(dir, "a"), b(dir, "b");
    WaitSet set;
    ASSERT_TRUE(set.add(*a.source).ok());
    ASSERT_TRUE(set.add(*b.source).ok());
    EXPECT_TRUE(set.ready().empty());
    a.commit();
    EXPECT_EQ(set.ready(), members({a.source.get()}));
    EXPECT_EQ(set.ready(), members({a.source.get()})) << "still ready: not read yet";
    EXPECT_EQ(a.drain(), 1);
    EXPECT_TRUE(set.ready().empty());
    b.commit(3);
    a.commit();
    EXPECT_EQ(set.ready(), members({a.source.get(), b.source.get()})) << "in the order they were added";
    EXPECT_EQ(b.drain(), 3);
    EXPECT_EQ(set.ready(), members({a.source.get()}));
    EXPECT_EQ(set.stats().fires, 0u) << "no descriptor asked for: no thread";
}

TEST(WaitSet, TheDescriptorIsReadableExactlyWhileSomethingIsReadyOrMayBe) {
    TempDir dir;
    LiveRing ring(dir, "a");
    WaitSet set;
    ASSERT_TRUE(set.add(*ring.source).ok());
    auto fd = set.fd();
    ASSERT_TRUE(fd.ok()) << fd.error().message();
    EXPECT_FALSE(readable(*fd)) << "nothing committed";
    ring.commit();
    EXPECT_TRUE(readable(*fd, 10'000ms)) << "a commit wakes the set's thread";
    EXPECT_EQ(set.ready(), members({ring.source.get()}));
    EXPECT_TRUE(readable(*fd)) << "ready() found it ready: the descriptor stays readable";
    EXPECT_EQ(ring.drain(), 1);
    EXPECT_TRUE(set.ready().empty());
    EXPECT_FALSE(readable(*fd)) << "read to NotReady, and ready() said so";
    set.notify();
    EXPECT_TRUE(readable(*fd));
    EXPECT_TRUE(set.ready().empty());
    EXPECT_FALSE(readable(*fd)) << "a notify lasts until the next ready()";
    EXPECT_EQ(set.fd().value(), *fd) << "one descriptor for the set's life";
}

// A ring set in a wait set, end to end: a commit on one member makes the
// set's descriptor readable, and the event comes out of the merged reader
// (which may hold it back a while for the other member: the set looks again).
TEST(WaitSet, ARingSetsMemberCommitMakesTheDescriptorReadableAndItsEventArrives) {
    struct Fixture : test::SetFixture {
        void TestBody() override {}
    } fixture;
    auto writers = fixture.members(2);
    auto source = fixture.open_at(Position::oldest());
    WaitSet set;
    ASSERT_TRUE(set.add(*source).ok());
    auto fd = set.fd();
    ASSERT_TRUE(fd.ok()) << fd.error().message();
    EXPECT_TRUE(set.ready().empty());
    EXPECT_FALSE(readable(*fd));
    test::publish_at(writers[1], 10);
    int events = 0;
    const auto give_up = std::chrono::steady_clock::now() + 20s;
    while (events == 0 && std::chrono::steady_clock::now() < give_up) {
        if (!readable(*fd, 100ms)) continue;
        for (EventSource* ready : set.ready()) {
            ASSERT_EQ(ready, source.get());
            SourceItem item;
            for (SourceStep step; (step = source->next(item)) != SourceStep::NotReady;) {
                ASSERT_NE(step, SourceStep::Failed) << source->error().message();
                events += step == SourceStep::Event;
            }
        }
    }
    EXPECT_EQ(events, 1);
    EXPECT_GT(set.stats().fires, 0u);
}

TEST(WaitSet, AnEndedSourceIsAlwaysReady) {
    TempDir dir;
    test::write_blocks(dir.file("rec"), 20, 5, false);
    auto recording = open_source(dir.file("rec"), {});
    ASSERT_TRUE(recording.ok()) << recording.error().message();
    LiveRing ring(dir, "a");
    ring.commit(2);
    ring.leave();
    auto left = open_source(ring.path, {});  // a ring nobody writes
    ASSERT_TRUE(left.ok()) << left.error().message();
    ASSERT_TRUE((*left)->seek(Position::oldest()).ok());
    WaitSet set;
    ASSERT_TRUE(set.add(**recording).ok());
    ASSERT_TRUE(set.add(**left).ok());
    EXPECT_EQ(set.ready().size(), 2u);
    SourceItem item;
    while ((*recording)->next(item) != SourceStep::End) {}
    int events = 0;
    for (SourceStep step; (step = (*left)->next(item)) != SourceStep::End;) events += step == SourceStep::Event;
    EXPECT_EQ(events, 2);
    EXPECT_EQ(set.ready().size(), 2u) << "End repeats: a set reports it until the member is removed";
    EXPECT_TRUE(set.remove(**recording));
    EXPECT_TRUE(set.remove(**left));
    EXPECT_TRUE(set.ready().empty());
}

TEST(WaitSet, AddRefusesAMemberTwiceAndRemoveSaysWhetherItWasOne) {
    TempDir dir;
    LiveRing ring(dir, "a");
    WaitSet set;
    ASSERT_TRUE(set.add(*ring.source).ok());
    const auto again = set.add(*ring.source);
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().errno_value(), EEXIST);
    EXPECT_NE(again.error().message().find(ring.path), std::string::npos) << again.error().message();
    EXPECT_EQ(set.size(), 1u);
    EXPECT_TRUE(set.remove(*ring.source));
    EXPECT_FALSE(set.remove(*ring.source));
    EXPECT_EQ(set.size(), 0u);
}

TEST(WaitSet, WaitWithoutADescriptorSleepsInTheCallerUntilItsTimeout) {
    TempDir dir;
    LiveRing ring(dir, "a");
    WaitSet set;
    ASSERT_TRUE(set.add(*ring.source).ok());
    EXPECT_TRUE(set.wait(20ms).empty());
    EXPECT_GE(set.stats().sleeps, 1u) << "it slept on the doorbell";
    ring.commit();
    EXPECT_EQ(set.wait(10s), members({ring.source.get()})) << "committed before the wait: at once";
}

}  // namespace
}  // namespace evring
