// The writer claim (writer_claim.hpp): the default publisher of a ring held
// by an exclusive RingWriter reserves with plain stores, and every other
// writer — another publisher, another thread, another process, a forked
// child — revokes the claim first, so no sequence number or payload byte is
// ever handed out twice. Deterministic cases first, then threads, then
// processes.
#include <sys/mman.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "evring/ring/iterator.hpp"
#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_writer.hpp"
#include "evring/ring/shared_word.hpp"
#include "evring/ring/writer_claim.hpp"
#include "support/child_process.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

#if defined(__SANITIZE_THREAD__)
constexpr std::uint64_t kPerWriter = 2'000;
#else
constexpr std::uint64_t kPerWriter = 10'000;
#endif

struct OwnedRing {
    explicit OwnedRing(WriterProcesses mode = WriterProcesses::One) {
        CreateOptions options;
        options.mode = mode;
        // 2^17 descriptors, 16 MiB: the writers of one test never lap it.
        writer.emplace(RingWriter::create(test::small_spec(dir.file("ring"), 17, 24), options).value());
    }
    const MappedRing& ring() const { return writer->ring(); }
    WriterClaim& claim() const { return extension_in(&ring().header())->claim; }
    test::TempDir dir;
    std::optional<RingWriter> writer;
};

// An event whose payload repeats its tag, so that the checks below can tell
// whether two events were handed the same bytes.
void publish_tagged(Publisher& publisher, std::uint64_t tag) {
    const std::size_t size = 16 + static_cast<std::size_t>(tag % 7) * 8;
    Reservation r = publisher.reserve(size);
    ASSERT_TRUE(r);
    r.descriptor().event_type = 5;
    r.descriptor().content_ext = {tag, 0, 0, 0};
    for (std::size_t i = 0; i < size; i += 8) std::memcpy(r.payload() + i, &tag, 8);
    publisher.commit(r);
}

// Every seqno from 1 to the last is present exactly once, payload ranges do
// not overlap, and each payload still holds its own tag.
void expect_every_event_once(const MappedRing& ring, std::uint64_t expected_events) {
    Iterator it(ring);
    ASSERT_EQ(it.newest_seqno(), expected_events);
    ASSERT_EQ(it.oldest_seqno(), 1u);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    std::vector<std::uint64_t> tags;
    for (std::uint64_t s = 1; s <= expected_events; ++s) {
        EventDescriptor d{};
        ASSERT_TRUE(it.read_descriptor(s, d)) << "seqno " << s;
        ASSERT_EQ(d.seqno, s);
        ranges.emplace_back(d.payload_buf_offset, d.payload_buf_offset + d.payload_size);
        const std::byte* payload = ring.payload_buffer() + (d.payload_buf_offset & ring.payload_mask());
        for (std::size_t i = 0; i < d.payload_size; i += 8) {
            std::uint64_t word;
            std::memcpy(&word, payload + i, 8);
            ASSERT_EQ(word, d.content_ext[0]) << "seqno " << s << " byte " << i;
        }
        tags.push_back(d.content_ext[0]);
    }
    std::sort(ranges.begin(), ranges.end());
    for (std::size_t i = 1; i < ranges.size(); ++i) ASSERT_LE(ranges[i - 1].second, ranges[i].first);
    std::sort(tags.begin(), tags.end());
    EXPECT_EQ(std::adjacent_find(tags.begin(), tags.end()), tags.end()) << "a tag was published twice";
}

TEST(WriterClaim, TheFirstPublisherOfAnExclusivelyHeldRingClaimsIt) {
    OwnedRing owned;
    Publisher publisher(owned.ring());
    EXPECT_TRUE(publisher.holds_claim());
    for (std::uint64_t n = 1; n <= 1000; ++n) publish_tagged(publisher, n);
    EXPECT_TRUE(publisher.holds_claim());
    EXPECT_EQ(shared::load_relaxed(owned.claim().busy), 0u);
    expect_every_event_once(owned.ring(), 1000);
}

TEST(WriterClaim, RingsNotHeldExclusivelyAreNeverClaimed) {
    OwnedRing shared_writer(WriterProcesses::Many);
    Publisher on_shared(shared_writer.ring());
    EXPECT_FALSE(on_shared.holds_claim());
    test::RingPair mapped(test::small_params(8, 16));  // mapped directly, no RingWriter
    Publisher on_mapped(*mapped.writer);
    EXPECT_FALSE(on_mapped.holds_claim());
    publish_tagged(on_mapped, 1);
    EXPECT_EQ(Iterator(*mapped.reader).newest_seqno(), 1u);
}

TEST(WriterClaim, ASecondPublisherRevokesTheClaimForGood) {
    OwnedRing owned;
    Publisher first(owned.ring());
    for (std::uint64_t n = 1; n <= 10; ++n) publish_tagged(first, n);
    Publisher second(owned.ring());
    EXPECT_FALSE(first.holds_claim());
    EXPECT_FALSE(second.holds_claim());
    EXPECT_EQ(shared::load_relaxed(owned.claim().revoked), kClaimRevoking | kClaimRevokedDrained);
    for (std::uint64_t n = 11; n <= 1010; n += 2) {
        publish_tagged(first, n);
        publish_tagged(second, n + 1);
    }
    expect_every_event_once(owned.ring(), 1010);
    // Revoked stays revoked: a later publisher does not claim again.
    Publisher third(owned.ring());
    EXPECT_FALSE(third.holds_claim());
}

TEST(WriterClaim, AnExplicitlySharedPublisherRevokesToo) {
    OwnedRing owned;
    Publisher automatic(owned.ring());
    ASSERT_TRUE(automatic.holds_claim());
    Publisher shared(owned.ring(), WriterSharing::Shared);
    EXPECT_FALSE(automatic.holds_claim());
}

TEST(WriterClaim, AGivenBackClaimPassesToTheNextPublisher) {
    OwnedRing owned;
    {
        Publisher first(owned.ring());
        ASSERT_TRUE(first.holds_claim());
        publish_tagged(first, 1);
    }
    Publisher next(owned.ring());
    EXPECT_TRUE(next.holds_claim());
    publish_tagged(next, 2);
    expect_every_event_once(owned.ring(), 2);
}

TEST(WriterClaim, AMovedPublisherKeepsTheClaim) {
    OwnedRing owned;
    Publisher first(owned.ring());
    publish_tagged(first, 1);
    Publisher moved(std::move(first));
    EXPECT_TRUE(moved.holds_claim());
    publish_tagged(moved, 2);
    expect_every_event_once(owned.ring(), 2);
}

TEST(WriterClaim, AnotherThreadReservingThroughTheClaimingPublisherRevokes) {
    OwnedRing owned;
    Publisher publisher(owned.ring());
    publish_tagged(publisher, 1);  // this thread owns the plain path now
    std::thread other([&] { publish_tagged(publisher, 2); });
    other.join();
    EXPECT_FALSE(publisher.holds_claim());
    publish_tagged(publisher, 3);
    expect_every_event_once(owned.ring(), 3);
}

TEST(WriterClaim, ARevokerWaitsWhileTheOwnerIsMidReservation) {
    OwnedRing owned;
    Publisher owner(owned.ring());
    ASSERT_TRUE(owner.holds_claim());
    // The owner thread between X1 and X4, as if descheduled there.
    shared::store_release(owned.claim().busy, 1u);
    std::atomic<bool> returned{false};
    std::thread revoker([&] {
        Publisher second(owned.ring());
        returned = true;
    });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while ((shared::load_acquire(owned.claim().revoked) & kClaimRevoking) == 0 &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    EXPECT_NE(shared::load_acquire(owned.claim().revoked) & kClaimRevoking, 0u) << "no revocation began";
    EXPECT_FALSE(returned) << "the revoker went on while the owner was on the plain path";
    shared::store_release(owned.claim().busy, 0u);  // X4
    revoker.join();
    EXPECT_TRUE(returned);
    EXPECT_FALSE(owner.holds_claim());
}

TEST(WriterClaim, ABusyClaimOfAWriterThatDiedDoesNotHoldARevokerForever) {
    // What a claim's owner that died mid-reservation leaves: claimed and
    // busy, on a ring that nobody holds any more (no writer locks).
    test::RingPair orphan(test::small_params(8, 16));
    WriterClaim& claim = extension_in(&orphan.writer->header())->claim;
    shared::store_release(claim.claimed, 1u);
    shared::store_release(claim.busy, 1u);
    Publisher late(*orphan.writer, WriterSharing::Shared);  // returns once it sees nobody writes the ring
    EXPECT_EQ(shared::load_relaxed(claim.revoked), kClaimRevoking | kClaimRevokedDrained);
    publish_tagged(late, 1);
    expect_every_event_once(*orphan.reader, 1);
}

TEST(WriterClaim, ThreadsPublishingThroughOneAndSeveralPublishersNeverShareAnEvent) {
    OwnedRing owned;
    Publisher common(owned.ring());
    constexpr int kThreads = 3;
    std::atomic<int> waiting{kThreads + 1};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            --waiting;
            while (waiting.load() > 0) {}
            for (std::uint64_t i = 0; i < kPerWriter; ++i) publish_tagged(common, (std::uint64_t(t) << 32) | (i + 1));
        });
    }
    threads.emplace_back([&] {
        --waiting;
        while (waiting.load() > 0) {}
        Publisher own(owned.ring());  // made while the others publish
        for (std::uint64_t i = 0; i < kPerWriter; ++i) publish_tagged(own, (std::uint64_t(kThreads) << 32) | (i + 1));
    });
    for (auto& t : threads) t.join();
    expect_every_event_once(owned.ring(), (kThreads + 1) * kPerWriter);
}

TEST(WriterClaim, AProcessPublishingIntoTheRingRevokesTheOwnersClaim) {
    OwnedRing owned;
    Publisher owner(owned.ring());
    publish_tagged(owner, 1);
    // A flag in memory shared with the child: it has made its publisher.
    void* shared_page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(shared_page, MAP_FAILED);
    auto* started = static_cast<std::uint32_t*>(shared_page);
    const std::string path = owned.writer->path();
    const pid_t child = test::spawn([&] {
        MappedRing ring = test::map_path(path, Access::ReadWrite);
        Publisher other(ring);
        shared::store_release(*started, 1u);
        for (std::uint64_t i = 0; i < kPerWriter; ++i) publish_tagged(other, (2ull << 32) | (i + 1));
        return 0;
    });
    // The owner publishes while the child revokes and publishes (bounded, so
    // that a slow child start cannot make it lap the ring).
    std::uint64_t n = 1;
    while (shared::load_acquire(*started) == 0)
        if (n < 50'000) publish_tagged(owner, (1ull << 32) | ++n);
    for (std::uint64_t i = 0; i < kPerWriter; ++i) publish_tagged(owner, (1ull << 32) | ++n);
    ASSERT_EQ(test::exit_code_of(child), 0);
    ::munmap(shared_page, 4096);
    EXPECT_FALSE(owner.holds_claim());
    expect_every_event_once(owned.ring(), n + kPerWriter);
}

TEST(WriterClaim, AForkedChildUsingTheInheritedPublisherRevokes) {
    OwnedRing owned;
    Publisher owner(owned.ring());
    publish_tagged(owner, 1);
    const pid_t child = test::spawn([&] {
        for (std::uint64_t i = 0; i < kPerWriter; ++i) publish_tagged(owner, (2ull << 32) | (i + 1));
        return owner.holds_claim() ? 1 : 0;
    });
    ASSERT_EQ(test::exit_code_of(child), 0);
    EXPECT_FALSE(owner.holds_claim());
    for (std::uint64_t i = 0; i < 10; ++i) publish_tagged(owner, (1ull << 32) | (i + 2));
    expect_every_event_once(owned.ring(), 1 + kPerWriter + 10);
}

}  // namespace
}  // namespace evring
