// Batches with threads and processes (publisher_batch_test.cpp has the
// deterministic cases): writers publishing batches beside writers of single
// events, readers that keep up, are lapped, or find payloads overwritten,
// sleeping readers woken by batches, the writer claim revoked by a second
// thread batching through the claiming publisher, and writers in other
// processes. Readers check every payload's checksum, that every sequence
// number is read or counted lost, and that each batch arrives whole: its
// events under consecutive sequence numbers with one timestamp. Run under
// ThreadSanitizer too (the concurrency suite).
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "evring/ring/doorbell.hpp"
#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_writer.hpp"
#include "evring/ring/shared_word.hpp"
#include "support/checked_payload.hpp"
#include "support/child_process.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using namespace std::chrono_literals;

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr std::uint64_t kScale = 10;  // sanitizers are ~10x slower
#else
constexpr std::uint64_t kScale = 1;
#endif

constexpr std::size_t kMaxFiller = 200;
constexpr std::uint16_t kType = 12;

// Flow tags of every test event: writer, its event counter, its batch
// number (0 for a single event), the event's index in its batch.
struct Tags {
    std::uint64_t writer, counter, batch, index;
};

// A writer's events: `count` checked payloads, in batches of 1..64 events
// (batch sizes from the writer's own sequence; writer 0 of a mixed run
// publishes single events instead).
class BatchWriter {
public:
    BatchWriter(std::uint32_t writer, bool singles) : writer_(writer), singles_(singles) {}

    void publish(Publisher& publisher, std::uint64_t count) {
        std::vector<std::vector<std::byte>> payloads(Publisher::kMaxBatchEvents,
                                                     std::vector<std::byte>(sizeof(test::CheckedHeader) + kMaxFiller));
        std::vector<BatchEvent> batch(Publisher::kMaxBatchEvents);
        std::uint64_t batch_number = 0;
        for (std::uint64_t counter = 0; counter < count;) {
            ++batch_number;
            const std::size_t n = singles_ ? 1 : std::min<std::uint64_t>(1 + (batch_number * 37) % 64, count - counter);
            for (std::size_t i = 0; i < n; ++i, ++counter) {
                const std::size_t size = test::checked_payload_size(counter, kMaxFiller);
                test::fill_checked_payload(payloads[i].data(), size, writer_, counter);
                batch[i] = {payloads[i].data(), {writer_, counter, singles_ ? 0 : batch_number, i},
                            static_cast<std::uint32_t>(size), kType};
            }
            if (singles_) {
                Reservation r = publisher.reserve(batch[0].payload_size);
                r.descriptor().event_type = kType;
                r.descriptor().content_ext = batch[0].content_ext;
                std::memcpy(r.payload(), batch[0].payload, batch[0].payload_size);
                publisher.commit(r);
            } else {
                ASSERT_NE(publisher.publish_batch(std::span<const BatchEvent>(batch).first(n)), 0u);
            }
        }
    }

private:
    std::uint32_t writer_;
    bool singles_;
};

struct Tally {
    std::uint64_t read = 0, lost = 0, expired = 0, verified = 0;
    std::uint64_t bad_checksum = 0, out_of_order = 0, writer_order_violations = 0;
    std::uint64_t torn_batches = 0;  // a batch's events not consecutive, or with two timestamps
    std::uint64_t abandoned = 0;
};

// Where the previous event of a batch was seen: its seqno and time.
struct BatchSeen {
    std::uint64_t seqno, nanos, index;
};

void check_event(const MappedRing& ring, const EventDescriptor& event, std::vector<std::byte>& buffer,
                 std::vector<std::int64_t>& last_counter, std::map<std::pair<std::uint64_t, std::uint64_t>, BatchSeen>& batches,
                 Tally& tally) {
    if (copy_payload(ring, event, buffer.data(), buffer.size()) != PayloadResult::Ok) {
        ++tally.expired;
        return;
    }
    test::CheckedHeader h{};
    if (!test::verify_checked_payload(buffer.data(), event.payload_size, h) || h.writer != event.content_ext[0] ||
        h.counter != event.content_ext[1] || h.writer >= last_counter.size()) {
        ++tally.bad_checksum;
        return;
    }
    ++tally.verified;
    if (static_cast<std::int64_t>(h.counter) <= last_counter[h.writer]) ++tally.writer_order_violations;
    last_counter[h.writer] = static_cast<std::int64_t>(h.counter);
    const std::uint64_t batch = event.content_ext[2], index = event.content_ext[3];
    if (batch == 0) return;
    auto [it, first_seen] = batches.try_emplace({h.writer, batch}, BatchSeen{event.seqno, event.record_epoch_nanos, index});
    if (first_seen) return;
    const BatchSeen& seen = it->second;
    if (event.seqno - seen.seqno != index - seen.index || event.record_epoch_nanos != seen.nanos) ++tally.torn_batches;
    it->second = {event.seqno, event.record_epoch_nanos, index};
}

// Reads seqnos 1..last_seqno (spinning, or sleeping on the doorbell).
Tally read_until(const MappedRing& ring, std::uint64_t last_seqno, std::uint32_t writers, std::atomic<bool>& go,
                 bool sleeping = false) {
    Tally tally;
    Iterator it(ring);
    it.seek(1);
    it.set_abandon_after(std::chrono::hours(1));  // no writer dies here: a preempted one must be waited for
    std::optional<Doorbell> bell;
    if (sleeping) bell.emplace(Doorbell::attach(ring));
    std::vector<std::int64_t> last_counter(writers, -1);
    std::map<std::pair<std::uint64_t, std::uint64_t>, BatchSeen> batches;
    std::vector<std::byte> buffer(sizeof(test::CheckedHeader) + kMaxFiller);
    EventDescriptor event{};
    std::uint64_t expected = 1;
    while (!go.load(std::memory_order_acquire)) {
    }
    while (it.next_seqno() <= last_seqno) {
        switch (it.try_next(event)) {
        case NextResult::NotReady:
            if (bell) (void)bell->wait(it.next_seqno(), 100ms);
            continue;
        case NextResult::Gap:
            tally.lost += it.last_gap_lost();
            expected = it.next_seqno();
            continue;
        case NextResult::Abandoned:
            ++tally.abandoned;
            expected = it.next_seqno();
            continue;
        case NextResult::Success:
            break;
        }
        ++tally.read;
        if (event.seqno != expected) ++tally.out_of_order;
        expected = event.seqno + 1;
        check_event(ring, event, buffer, last_counter, batches, tally);
    }
    return tally;
}

// `writers` threads (writer 0 of single events when `mixed`) through one
// publisher, `readers` reader threads, all released together.
std::vector<Tally> run(const MappedRing& writer_ring, const MappedRing& reader_ring, std::uint64_t per_writer,
                       std::uint32_t writers, bool mixed, std::size_t readers = 2, bool sleeping = false) {
    Publisher publisher(writer_ring);
    std::atomic<bool> go{false};
    std::vector<Tally> tallies(readers);
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < readers; ++i)
        threads.emplace_back([&, i] {
            tallies[i] = read_until(reader_ring, per_writer * writers, writers, go, sleeping && i == 0);
        });
    for (std::uint32_t w = 0; w < writers; ++w)
        threads.emplace_back([&, w] {
            while (!go.load(std::memory_order_acquire)) {
            }
            BatchWriter(w, mixed && w == 0).publish(publisher, per_writer);
        });
    go.store(true, std::memory_order_release);
    for (auto& t : threads) t.join();
    return tallies;
}

void expect_whole(const Tally& t, std::uint64_t total) {
    EXPECT_EQ(t.read, total);
    EXPECT_EQ(t.lost, 0u);
    EXPECT_EQ(t.verified, total);
    EXPECT_EQ(t.expired, 0u);
    EXPECT_EQ(t.bad_checksum, 0u);
    EXPECT_EQ(t.out_of_order, 0u);
    EXPECT_EQ(t.writer_order_violations, 0u);
    EXPECT_EQ(t.torn_batches, 0u);
    EXPECT_EQ(t.abandoned, 0u);
}

TEST(BatchConcurrency, BatchingAndSingleWritersShareARingAndEveryEventIsReadOnceWithItsBatchWhole) {
    test::RingPair rings(test::small_params(18, 26));
    const std::uint64_t per_writer = 60'000 / kScale;
    for (const Tally& t : run(*rings.writer, *rings.reader, per_writer, 3, true)) expect_whole(t, 3 * per_writer);
}

TEST(BatchConcurrency, LappedReadersCountEveryLostEventOfBatchesExactly) {
    // 256 descriptors: readers are lapped all the time; the payload buffer does
    // not wrap during the run, so every event read carries a valid payload.
    // One writer thread (docs/format.md, "Lapped writers").
    test::RingPair rings(test::small_params(8, 27));
    const std::uint64_t total = 600'000 / kScale;
    for (const Tally& t : run(*rings.writer, *rings.reader, total, 1, false)) {
        EXPECT_EQ(t.read + t.lost, total) << "every seqno is read or counted lost";
        EXPECT_EQ(t.verified, t.read);
        EXPECT_EQ(t.bad_checksum, 0u);
        EXPECT_EQ(t.out_of_order, 0u);
        EXPECT_EQ(t.writer_order_violations, 0u);
        EXPECT_EQ(t.torn_batches, 0u);
    }
}

TEST(BatchConcurrency, WrappedBatchPayloadsAreReportedExpiredNeverCorrupt) {
    // A 16 KiB buffer: a batch of 64 events of up to 232 bytes is most of it,
    // so batches overwrite the bytes readers are copying all the time.
    test::RingPair rings(test::small_params(8, 14));
    const std::uint64_t total = 600'000 / kScale;
    std::uint64_t expired = 0;
    for (const Tally& t : run(*rings.writer, *rings.reader, total, 1, false)) {
        EXPECT_EQ(t.read + t.lost, total) << "every seqno is read or counted lost";
        EXPECT_EQ(t.verified + t.expired, t.read);
        EXPECT_EQ(t.bad_checksum, 0u) << "a torn or overwritten payload was reported valid";
        EXPECT_EQ(t.out_of_order, 0u);
        EXPECT_EQ(t.torn_batches, 0u);
        expired += t.expired;
    }
    RecordProperty("expired_payloads", static_cast<int>(expired));
}

TEST(BatchConcurrency, ASleepingReaderIsWokenByBatches) {
    // Reader 0 sleeps on the doorbell whenever it has drained the ring (a
    // missed wake-up would leave it asleep until its 100 ms timeout, counted
    // below); the writers publish batches and single events.
    test::RingPair rings(test::small_params(18, 26));
    const std::uint64_t per_writer = 20'000 / kScale;
    for (const Tally& t : run(*rings.writer, *rings.reader, per_writer, 2, true, 2, true))
        expect_whole(t, 2 * per_writer);
}

TEST(BatchConcurrency, ABatchWakesAReaderAsleepOnItsFirstEventEveryTime) {
    // Strict alternation: each batch is published only once the reader has
    // announced its sleep, so a batch that failed to ring would leave the
    // reader asleep until its 60 s timeout: it then gives up, and the test
    // fails.
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    constexpr std::uint64_t kRounds = 500, kPerBatch = 5;
    std::atomic<bool> timed_out{false};
    std::thread reader([&] {
        Doorbell bell = Doorbell::attach(*rings.reader);
        bell.set_min_sleep_interval(0ns);
        for (std::uint64_t seqno = 1; seqno <= kRounds * kPerBatch; seqno += kPerBatch)
            while (!bell.event_ready(seqno + kPerBatch - 1))
                if (!bell.wait(seqno, 60s)) {
                    timed_out.store(true);
                    return;
                }
    });
    const std::uint64_t word[2] = {7, 8};
    const BatchEvent batch[kPerBatch] = {{word, {}, 16, 1}, {word, {}, 16, 2}, {word, {}, 16, 3}, {word, {}, 8, 4},
                                         {word, {}, 0, 5}};
    const std::uint32_t& doorbell = extension_in(&rings.reader->header())->doorbell;
    std::uint64_t not_rung = 0;
    for (std::uint64_t i = 0; i < kRounds && !timed_out.load(); ++i) {
        std::uint32_t announced = 0;
        while (((announced = shared::load_relaxed(doorbell)) & 1u) == 0 && !timed_out.load())
            std::this_thread::yield();
        ASSERT_EQ(publisher.publish_batch(batch), i * kPerBatch + 1);
        // Only a writer's wake advances the epoch (bits 1..31); the reader's
        // next announcement sets bit 0 alone.
        if ((shared::load_relaxed(doorbell) >> 1) == (announced >> 1)) ++not_rung;
    }
    reader.join();
    EXPECT_EQ(not_rung, 0u) << "a batch did not wake the reader asleep on it";
    EXPECT_FALSE(timed_out.load()) << "a batch left its reader asleep";
}

// Tags published into an owned ring, checked as writer_claim_test does: every
// seqno once, payload ranges disjoint, each payload its own tag.
void expect_every_tag_once(const MappedRing& ring, std::uint64_t events) {
    Iterator it(ring);
    ASSERT_EQ(it.newest_seqno(), events);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    std::vector<std::uint64_t> tags;
    for (std::uint64_t s = 1; s <= events; ++s) {
        EventDescriptor d{};
        ASSERT_TRUE(it.read_descriptor(s, d)) << "seqno " << s;
        ranges.emplace_back(d.payload_buf_offset, d.payload_buf_offset + d.payload_size);
        std::uint64_t word = 0;
        std::memcpy(&word, ring.payload_buffer() + (d.payload_buf_offset & ring.payload_mask()), 8);
        ASSERT_EQ(word, d.content_ext[0]) << "seqno " << s;
        tags.push_back(d.content_ext[0]);
    }
    std::sort(ranges.begin(), ranges.end());
    for (std::size_t i = 1; i < ranges.size(); ++i) ASSERT_LE(ranges[i - 1].second, ranges[i].first);
    std::sort(tags.begin(), tags.end());
    EXPECT_EQ(std::adjacent_find(tags.begin(), tags.end()), tags.end()) << "a tag was published twice";
}

// `batches` batches of 16 tagged events (tag = thread << 32 | event number).
void publish_tagged_batches(Publisher& publisher, std::uint64_t thread, std::uint64_t batches) {
    std::uint64_t tags[16];
    BatchEvent batch[16];
    for (std::uint64_t b = 0; b < batches; ++b) {
        for (std::size_t i = 0; i < 16; ++i) {
            tags[i] = thread << 32 | (b * 16 + i + 1);
            batch[i] = {&tags[i], {tags[i], 0, 0, 0}, 8, 5};
        }
        ASSERT_NE(publisher.publish_batch(batch), 0u);
    }
}

TEST(BatchConcurrency, ThreadsBatchingThroughTheClaimingPublisherNeverShareAnEvent) {
    test::TempDir dir;
    RingWriter owned = RingWriter::create(test::small_spec(dir.file("ring"), 17, 24), CreateOptions{}).value();
    Publisher common(owned.ring());
    ASSERT_TRUE(common.holds_claim());
    const std::uint64_t batches = 2'000 / kScale;
    std::atomic<int> waiting{3};
    std::vector<std::thread> threads;
    for (std::uint64_t t = 0; t < 3; ++t)
        threads.emplace_back([&, t] {
            --waiting;
            while (waiting.load() > 0) {
            }
            publish_tagged_batches(common, t + 1, batches);
        });
    for (auto& t : threads) t.join();
    EXPECT_FALSE(common.holds_claim()) << "the second thread to reserve revokes the claim";
    expect_every_tag_once(owned.ring(), 3 * 16 * batches);
}

TEST(BatchConcurrency, ProcessesBatchingIntoOneRingAreReadWholeByAThird) {
    test::RingPair rings(test::small_params(18, 26));
    const std::uint64_t per_writer = 40'000 / kScale;
    test::Pipe start;
    std::vector<pid_t> children;
    for (std::uint32_t w = 0; w < 2; ++w)
        children.push_back(test::spawn([&, w] {
            start.close_write();
            start.wait_for_close();
            MappedRing ring = test::map_path(rings.path, Access::ReadWrite);
            Publisher publisher(ring);
            BatchWriter(w, false).publish(publisher, per_writer);
            return ::testing::Test::HasFailure() ? 1 : 0;
        }));
    std::atomic<bool> go{true};
    start.close_write();  // releases both writers
    const Tally t = read_until(*rings.reader, 2 * per_writer, 2, go);
    for (const pid_t child : children) EXPECT_EQ(test::exit_code_of(child), 0);
    expect_whole(t, 2 * per_writer);
}

}  // namespace
}  // namespace evring
