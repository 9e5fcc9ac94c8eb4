// Registering readers, publishing progress, listing them with liveness and
// lag, reclaiming dead readers' slots: one process, deterministic.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "evring/source/follow.hpp"
#include "evring/ring/iterator.hpp"
#include "registry/reader_kinds.hpp"
#include "registry/reader_listing.hpp"
#include "registry/reader_registration.hpp"
#include "sink/registering_sink.hpp"
#include "evring/source/source_open.hpp"
#include "registry/registry_slot.hpp"
#include "support/registry_ring.hpp"

namespace evring::test {
namespace {

// Writes a complete, consistent entry into slot `index` of the registry
// file, as a reader that then died would leave it (no lock held).
void plant_entry(const std::string& registry, std::uint32_t index, std::uint64_t pid,
                 std::uint64_t next) {
    RegistrySlot slot{};
    slot.version = 2;
    slot.state = kSlotActive;
    slot.next_seqno = next;
    slot.generation = 1;
    slot.pid = pid;
    slot.heartbeat_ns = 1;
    detail::pack_text(slot.name, "ghost");
    poke(registry, registry_slot_offset(index), &slot, sizeof slot);
}

TEST(ReaderRegistration, ListsARegisteredReaderWithWhatItPublished) {
    RegistryRing ring;
    ring.publish(10);
    ReaderRegistration seen = attach(ring, "risk-engine");
    ASSERT_TRUE(seen.registered()) << seen.warning();
    EXPECT_EQ(seen.slot(), 0u);
    EXPECT_EQ(seen.registry_path(), ring.registry_path());
    seen.update(4, 1, 2);

    const ReaderListing listing = listing_of(ring);
    EXPECT_EQ(listing.state, RegistryState::Valid);
    EXPECT_EQ(listing.capacity, kRegistryDefaultCapacity);
    ASSERT_EQ(listing.readers.size(), 1u);
    const ReaderEntry& r = listing.readers[0];
    EXPECT_EQ(r.name, "risk-engine");
    EXPECT_EQ(r.kind, reader_kinds::kWatch);
    EXPECT_EQ(r.detail, "to the terminal");
    EXPECT_EQ(r.pid, static_cast<std::uint64_t>(::getpid()));
    EXPECT_TRUE(r.pid_in_our_namespace);
    EXPECT_EQ(r.uid, ::getuid());
    EXPECT_EQ(r.liveness, ReaderLiveness::Alive);
    EXPECT_TRUE(r.consistent);
    EXPECT_EQ(r.problem, "");
    EXPECT_EQ(r.next_seqno, 4u);
    EXPECT_EQ(r.lost, 1u);
    EXPECT_EQ(r.abandoned, 2u);
    EXPECT_EQ(r.updates, 1u);
    EXPECT_EQ(r.generation, 1u);
    ASSERT_TRUE(r.lag.has_value());
    EXPECT_EQ(r.lag->events, 7u);  // 4..10
}

TEST(ReaderRegistration, AReaderWithoutAPositionHasNoLagYet) {
    RegistryRing ring;
    ReaderRegistration seen = attach(ring, "new");
    const ReaderListing listing = listing_of(ring);
    ASSERT_EQ(listing.readers.size(), 1u);
    EXPECT_EQ(listing.readers[0].next_seqno, 0u);
    EXPECT_FALSE(listing.readers[0].lag.has_value());
}

TEST(ReaderRegistration, FreesItsSlotWhenItGoes) {
    RegistryRing ring;
    { ReaderRegistration seen = attach(ring, "brief"); }
    const ReaderListing listing = listing_of(ring);
    EXPECT_EQ(listing.state, RegistryState::Valid);
    EXPECT_TRUE(listing.readers.empty());
    ReaderRegistration next = attach(ring, "next");
    EXPECT_EQ(next.slot(), 0u);
    EXPECT_EQ(listing_of(ring).readers.at(0).generation, 2u);
}

TEST(ReaderRegistration, AMovedRegistrationKeepsItsSlot) {
    RegistryRing ring;
    ReaderRegistration a = attach(ring, "a");
    ReaderRegistration b = std::move(a);
    EXPECT_FALSE(a.registered());
    ASSERT_TRUE(b.registered());
    b.update(1, 0, 0);
    ASSERT_EQ(listing_of(ring).readers.size(), 1u);
    b.unregister();
    EXPECT_TRUE(listing_of(ring).readers.empty());
}

// Hands the ring's events from seqno 1 on, `count` of them, to
// seen.on_event as a reader's loop would, and returns `field` of the
// registry's first entry after each.
template <class Field>
std::vector<std::uint64_t> listed_after_each_event(const RegistryRing& ring,
                                                   ReaderRegistration& seen, int count,
                                                   Field field) {
    Iterator it(ring.reader->ring());
    it.seek(1);
    EventDescriptor event{};
    std::vector<std::uint64_t> values;
    for (int i = 0; i < count; ++i) {
        if (it.try_next(event) != NextResult::Success) {
            ADD_FAILURE() << "the ring holds no event " << i + 1;
            break;
        }
        seen.on_event(it, event);
        values.push_back(field(listing_of(ring).readers.at(0)));
    }
    return values;
}

TEST(ReaderRegistration, OnEventPublishesEveryNEvents) {
    RegistryRing ring;
    ring.publish(20);
    ReaderRegistration seen = attach(ring, "paced", paced(4, std::chrono::hours(1)));
    const auto published =
        listed_after_each_event(ring, seen, 9, [](const ReaderEntry& r) { return r.next_seqno; });
    // The first event publishes at once, then every fourth.
    EXPECT_EQ(published, (std::vector<std::uint64_t>{2, 2, 2, 2, 6, 6, 6, 6, 10}));
}

TEST(ReaderRegistration, OnEventAlsoPublishesWhenEventTimeMovesOn) {
    RegistryRing ring;
    ring.publish(8, 1'000'000'000, 600'000);  // 0.6 ms apart
    ReaderRegistration seen = attach(ring, "timed", paced(1000, std::chrono::milliseconds(1)));
    const auto updates =
        listed_after_each_event(ring, seen, 6, [](const ReaderEntry& r) { return r.updates; });
    // Published at events 1, 3 and 5: each 1.2 ms of event time after the last.
    EXPECT_EQ(updates, (std::vector<std::uint64_t>{1, 1, 2, 2, 3, 3}));
}

TEST(ReaderRegistration, OnIdlePublishesAChangedPositionAndOtherwiseOnlyTheDueHeartbeat) {
    RegistryRing ring;
    ring.publish(3);
    RegistrationOptions options = quiet();
    options.update_every = std::chrono::hours(1);
    ReaderRegistration seen = attach(ring, "idle", options);
    Iterator it(ring.reader->ring());
    it.seek(4);
    seen.on_idle(it);
    EXPECT_EQ(listing_of(ring).readers.at(0).updates, 1u);
    seen.on_idle(it);  // same position, heartbeat not due
    EXPECT_EQ(listing_of(ring).readers.at(0).updates, 1u);
    it.seek(2);
    seen.on_idle(it);
    EXPECT_EQ(listing_of(ring).readers.at(0).next_seqno, 2u);

    options.update_every = std::chrono::nanoseconds(0);  // heartbeat always due
    ReaderRegistration eager = attach(ring, "eager", options);
    eager.on_idle(it);
    eager.on_idle(it);
    EXPECT_EQ(listing_of(ring).readers.at(1).updates, 2u);
}

TEST(ReaderRegistration, TheIteratorFreeEntryPointsPaceAndPublishTheSame) {
    RegistryRing ring;
    ring.publish(20);
    ReaderRegistration seen = attach(ring, "source", paced(3, std::chrono::hours(1)));
    std::vector<std::uint64_t> published;
    for (std::uint64_t next = 2; next <= 8; ++next) {
        seen.on_event(1'000, next, next / 2, 1);
        published.push_back(listing_of(ring).readers.at(0).next_seqno);
    }
    // The first event publishes at once, then every third.
    EXPECT_EQ(published, (std::vector<std::uint64_t>{2, 2, 2, 5, 5, 5, 8}));
    EXPECT_EQ(listing_of(ring).readers.at(0).lost, 4u);
    seen.on_idle(9, 4, 2);  // a changed count publishes
    const ReaderEntry entry = listing_of(ring).readers.at(0);
    EXPECT_EQ(entry.next_seqno, 9u);
    EXPECT_EQ(entry.abandoned, 2u);
    EXPECT_EQ(entry.updates, 4u);
    seen.on_idle(9, 4, 2);  // nothing changed, heartbeat not due
    EXPECT_EQ(listing_of(ring).readers.at(0).updates, 4u);
}

TEST(ReaderRegistration, SetDetailRewritesTheDetail) {
    RegistryRing ring;
    ReaderRegistration seen = attach(ring, "relay");
    seen.set_detail("nats://127.0.0.1:4222 FEED (reconnecting)");
    EXPECT_EQ(listing_of(ring).readers.at(0).detail, "nats://127.0.0.1:4222 FEED (reconnecting)");
}

TEST(ReaderListing, AnOldHeartbeatMarksALiveReaderStale) {
    RegistryRing ring;
    ReaderRegistration seen = attach(ring, "stopped");
    poke_value(ring.registry_path(), registry_slot_offset(0) + offsetof(RegistrySlot, heartbeat_ns),
               std::uint64_t{1});
    const ReaderListing listing = listing_of(ring);
    ASSERT_EQ(listing.readers.size(), 1u);
    EXPECT_EQ(listing.readers[0].liveness, ReaderLiveness::Stale);
    EXPECT_GT(listing.readers[0].heartbeat_age_ns, 1'000'000'000u);
}

TEST(ReaderListing, AnEntryItCannotCopyStablyIsStaleWhileItsOwnerLives) {
    RegistryRing ring;
    ReaderRegistration seen = attach(ring, "mid-update");
    poke_value(ring.registry_path(), registry_slot_offset(0), std::uint64_t{7});  // odd version
    const ReaderListing listing = listing_of(ring);
    ASSERT_EQ(listing.readers.size(), 1u);
    EXPECT_FALSE(listing.readers[0].consistent);
    EXPECT_EQ(listing.readers[0].liveness, ReaderLiveness::Stale);
}

TEST(ReaderListing, ReclaimsTheSlotOfADeadReader) {
    RegistryRing ring;
    ReaderRegistration live = attach(ring, "live");
    plant_entry(ring.registry_path(), 5, 4242, 1);
    ListingOptions keep;
    keep.reclaim_dead = false;
    ReaderListing listing = listing_of(ring, keep);
    ASSERT_EQ(listing.readers.size(), 2u);
    EXPECT_EQ(listing.readers[1].slot, 5u);
    EXPECT_EQ(listing.readers[1].name, "ghost");
    EXPECT_EQ(listing.readers[1].liveness, ReaderLiveness::Dead);
    EXPECT_FALSE(listing.readers[1].reclaimed);

    listing = listing_of(ring);
    ASSERT_EQ(listing.readers.size(), 2u);
    EXPECT_TRUE(listing.readers[1].reclaimed);
    EXPECT_EQ(listing.readers[0].liveness, ReaderLiveness::Alive);
    EXPECT_FALSE(listing.readers[0].reclaimed);

    listing = listing_of(ring);
    EXPECT_EQ(names_of(listing), std::vector<std::string>{"live"});
}

TEST(ReaderListing, ADeadReaderLeftMidUpdateIsReclaimedToo) {
    RegistryRing ring;
    { ReaderRegistration gone = attach(ring, "gone"); }
    poke_value(ring.registry_path(), registry_slot_offset(0),
               std::uint64_t{9});  // died mid-rewrite
    ReaderListing listing = listing_of(ring);
    ASSERT_EQ(listing.readers.size(), 1u);
    EXPECT_FALSE(listing.readers[0].consistent);
    EXPECT_EQ(listing.readers[0].liveness, ReaderLiveness::Dead);
    EXPECT_TRUE(listing.readers[0].reclaimed);
    EXPECT_TRUE(listing_of(ring).readers.empty());
}

TEST(ReaderRegistration, TakesADeadReadersSlotWhenNoneIsFree) {
    RegistryRing ring;
    { ReaderRegistration first = attach(ring, "first", quiet(2)); }
    plant_entry(ring.registry_path(), 0, 4242, 1);
    plant_entry(ring.registry_path(), 1, 4243, 1);
    ReaderRegistration seen = attach(ring, "heir", quiet(2));
    ASSERT_TRUE(seen.registered()) << seen.warning();
    const ReaderListing listing = listing_of(ring);
    ASSERT_EQ(listing.readers.size(), 2u);
    EXPECT_EQ(listing.readers[seen.slot()].name, "heir");
}

TEST(ReaderRegistration, AFullRegistryLeavesTheReaderUnregisteredAndSaysWhy) {
    RegistryRing ring;
    ReaderRegistration a = attach(ring, "a", quiet(2));
    ReaderRegistration b = attach(ring, "b", quiet(2));
    ASSERT_TRUE(a.registered() && b.registered());
    EXPECT_NE(a.slot(), b.slot());
    ReaderRegistration c = attach(ring, "c", quiet(2));
    EXPECT_FALSE(c.registered());
    EXPECT_NE(c.warning().find("is full: all 2 slots belong to live readers"), std::string::npos)
        << c.warning();
    c.update(1, 2, 3);  // inert: does nothing, costs nothing
    auto strict = ReaderRegistration::register_reader(
        ring.path, ring.reader->fd(), ring.reader->ring(), reader_info("d"), quiet(2));
    ASSERT_FALSE(strict.ok());
    EXPECT_EQ(strict.error().errno_value(), ENOSPC);
    a.unregister();
    EXPECT_TRUE(attach(ring, "e", quiet(2)).registered());
}

TEST(ReaderRegistration, InertRegistrationsIgnoreEveryCall) {
    ReaderRegistration inert;
    EXPECT_FALSE(inert.registered());
    RegistryRing ring;
    ring.publish(2);
    Iterator it(ring.reader->ring());
    EventDescriptor event{};
    it.seek(1);
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    inert.on_event(it, event);
    inert.on_idle(it);
    inert.heartbeat();
    inert.set_detail("x");
    inert.unregister();
    EXPECT_EQ(listing_of(ring).state, RegistryState::Missing);
}

TEST(ReaderLag, CountsEventsBytesAndTimeBehindTheNewestEvent) {
    RegistryRing ring;
    ring.publish(10, 5'000'000'000, 1000);  // 8-byte payloads take 16 bytes each
    const MappedRing& mapped = ring.reader->ring();
    const RingHead head = ring_head(mapped);
    EXPECT_EQ(head.newest_seqno, 10u);
    ASSERT_TRUE(head.newest_committed.has_value());
    EXPECT_EQ(head.newest_committed->seqno, 10u);

    const ReaderLag behind = reader_lag(mapped, head, 4);
    EXPECT_EQ(behind.events, 7u);
    EXPECT_EQ(behind.bytes, std::optional<std::uint64_t>(6 * 16 + 8));
    EXPECT_EQ(behind.nanos, std::optional<std::uint64_t>(6000));
    EXPECT_FALSE(behind.lapped || behind.ahead);

    const ReaderLag caught_up = reader_lag(mapped, head, 11);
    EXPECT_EQ(caught_up.events, 0u);
    EXPECT_EQ(caught_up.bytes, std::optional<std::uint64_t>(0));
    EXPECT_EQ(caught_up.nanos, std::optional<std::uint64_t>(0));

    const ReaderLag ahead = reader_lag(mapped, head, 30);
    EXPECT_TRUE(ahead.ahead);
    EXPECT_EQ(ahead.events, 0u);
}

TEST(ReaderLag, ALappedReaderHasAnEventCountButNoBytesOrTime) {
    RegistryRing ring(small_params(6, 16));  // 64 descriptors
    ring.publish(100);
    const MappedRing& mapped = ring.reader->ring();
    const ReaderLag lag = reader_lag(mapped, ring_head(mapped), 5);
    EXPECT_TRUE(lag.lapped);
    EXPECT_EQ(lag.events, 96u);
    EXPECT_FALSE(lag.bytes.has_value());
    EXPECT_FALSE(lag.nanos.has_value());
}

TEST(ReaderListing, ShowsLagComputedAgainstTheRing) {
    RegistryRing ring;
    ring.publish(10, 5'000'000'000, 1000);
    ReaderRegistration seen = attach(ring, "slow");
    seen.update(8, 0, 0);
    const ReaderListing listing = listing_of(ring);
    EXPECT_EQ(listing.head.newest_seqno, 10u);
    ASSERT_TRUE(listing.readers.at(0).lag.has_value());
    EXPECT_EQ(listing.readers[0].lag->events, 3u);
    EXPECT_EQ(listing.readers[0].lag->nanos, std::optional<std::uint64_t>(2000));
}

TEST(ReaderRegistration, LeavesTheRingFileByteForByteUnchanged) {
    RegistryRing ring;
    ring.publish(5);
    struct stat before {};
    ASSERT_EQ(::stat(ring.path.c_str(), &before), 0);
    const std::string bytes = file_bytes(ring.path);
    {
        ReaderRegistration seen = attach(ring, "careful");
        seen.update(3, 0, 0);
        seen.heartbeat();
        ASSERT_EQ(listing_of(ring).readers.size(), 1u);
    }
    listing_of(ring);
    struct stat after {};
    ASSERT_EQ(::stat(ring.path.c_str(), &after), 0);
    EXPECT_TRUE(file_bytes(ring.path) == bytes);
    EXPECT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
    EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
    EXPECT_EQ(after.st_mode, before.st_mode);
}

TEST(ReaderListing, AMissingRegistryListsNothingAndCreatesNothing) {
    RegistryRing ring;
    const ReaderListing listing = listing_of(ring);
    EXPECT_EQ(listing.state, RegistryState::Missing);
    EXPECT_EQ(listing.problem, "");
    EXPECT_TRUE(listing.readers.empty());
    EXPECT_NE(::access(ring.registry_path().c_str(), F_OK), 0);
}

// The follow loop's readers (watch, record, relay, mirror): registered while
// the loop runs, each event published as its seqno + 1 (taken from the event,
// not asked of the source), freed when the sink goes.
TEST(RegisteringSink, PublishesEachEventsSeqnoPlusOneWhileTheLoopRuns) {
    RegistryRing ring;
    // A second apart: every event is due for publication (update_every is 100 ms).
    ring.publish(5, 1'700'000'000'000'000'000ULL, 1'000'000'000);
    struct Inner final : FollowSink {
        const RegistryRing* ring = nullptr;
        std::vector<std::uint64_t> published;  // the registry's next_seqno as each event arrives
        bool event(const SourceEvent&) override {
            const ReaderListing listing = listing_of(*ring);
            published.push_back(listing.readers.size() == 1 ? listing.readers[0].next_seqno : 0);
            return true;
        }
    } inner;
    inner.ring = &ring;
    auto source = open_source(ring.path, {});
    ASSERT_TRUE(source) << source.error().message();
    FollowOptions options;
    options.start = Position::oldest();
    options.count = 5;
    {
        RegisteringSink seen(inner, reader_info("follower", reader_kinds::kWatch, "test"));
        auto result = follow(*source, options, seen);
        ASSERT_TRUE(result) << result.error().message();
        EXPECT_TRUE(seen.registered());
        EXPECT_EQ(inner.published, (std::vector<std::uint64_t>{2, 3, 4, 5, 6}));
        const ReaderListing listing = listing_of(ring);
        EXPECT_EQ(names_of(listing), std::vector<std::string>{"follower"});
    }
    EXPECT_TRUE(listing_of(ring).readers.empty());
}

TEST(RegisteringSink, DisabledItOnlyPassesEventsOn) {
    RegistryRing ring;
    ring.publish(3);
    struct Inner final : FollowSink {
        std::uint64_t events = 0;
        bool event(const SourceEvent&) override { return ++events > 0; }
    } inner;
    auto source = open_source(ring.path, {});
    ASSERT_TRUE(source) << source.error().message();
    FollowOptions options;
    options.start = Position::oldest();
    options.count = 3;
    RegisteringSink seen(inner, reader_info("quiet"), false);
    ASSERT_TRUE(follow(*source, options, seen));
    EXPECT_EQ(inner.events, 3u);
    EXPECT_FALSE(seen.registered());
    EXPECT_TRUE(listing_of(ring).readers.empty());
}

// A stopped reader's loss shows while the writer laps it (issue 32): the
// listing counts the events overwritten ahead of its published position.
TEST(ReaderListing, ALappedReaderIsCountedWhatLeftTheRingAheadOfIt) {
    RegistryRing ring;  // 256 descriptors
    ring.publish(10);
    ReaderRegistration seen = attach(ring, "stopped");
    seen.update(5, 1, 0);
    ring.publish(590);  // the oldest kept is now 600 - 256 + 1 = 345
    ReaderEntry r = listing_of(ring).readers.at(0);
    ASSERT_TRUE(r.lag.has_value());
    EXPECT_TRUE(r.lag->lapped);
    EXPECT_EQ(r.lag->overwritten, 340u) << "345 - 5";
    EXPECT_EQ(r.lost_reported, 1u);
    EXPECT_EQ(r.lost, 341u);
    // Reading again, it reports the gap itself; nothing is counted twice.
    seen.update(601, 1 + 340 + 256, 0);
    r = listing_of(ring).readers.at(0);
    EXPECT_FALSE(r.lag->lapped);
    EXPECT_EQ(r.lag->overwritten, 0u);
    EXPECT_EQ(r.lost, 597u);
}

TEST(ReaderKindNames, AreStable) {
    EXPECT_STREQ(reader_kinds::name(reader_kinds::kRecord), "record");
    EXPECT_STREQ(reader_kinds::name(99), "unknown");
    EXPECT_STREQ(to_string(ReaderLiveness::Stale), "stale");
    EXPECT_STREQ(to_string(RegistryState::OtherRing), "other-ring");
}

}  // namespace
}  // namespace evring::test
