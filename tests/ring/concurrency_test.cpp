// Several writer threads and several reader threads on one ring. Readers
// check every payload's checksum, the sequence order, each writer's own
// order, and that every sequence number is either read or counted as lost.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/publisher.hpp"
#include "evring/ring/shared_word.hpp"
#include "support/checked_payload.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr std::uint64_t kScale = 10;  // sanitizers are ~10x slower
#else
constexpr std::uint64_t kScale = 1;
#endif

constexpr std::uint32_t kWriters = 3;
constexpr std::size_t kReaders = 2;
constexpr std::size_t kMaxFiller = 240;

struct ReaderTally {
    std::uint64_t read = 0;
    std::uint64_t lost = 0;
    std::uint64_t expired = 0;
    std::uint64_t verified = 0;
    std::uint64_t bad_checksum = 0;
    std::uint64_t out_of_order = 0;
    std::uint64_t writer_order_violations = 0;
};

void write_checked_events(Publisher& publisher, std::uint32_t writer, std::uint64_t count,
                          std::atomic<bool>& go) {
    while (!go.load(std::memory_order_acquire)) {
    }
    for (std::uint64_t counter = 0; counter < count; ++counter) {
        const std::size_t size = test::checked_payload_size(counter, kMaxFiller);
        Reservation r = publisher.reserve(size);
        r.descriptor().event_type = 10;
        r.descriptor().content_ext = {writer, counter, 0, 0};
        test::fill_checked_payload(r.payload(), size, writer, counter);
        publisher.commit(r);
    }
}

ReaderTally read_until(const MappedRing& ring, std::uint64_t last_seqno, std::atomic<bool>& go) {
    ReaderTally tally;
    Iterator it(ring);
    it.seek(1);
    // No writer dies here: a writer thread preempted between reserve and
    // commit for longer than the default bound (likely under sanitizers on a
    // loaded machine) must be waited for, not reported abandoned.
    it.set_abandon_after(std::chrono::hours(1));
    std::vector<std::int64_t> last_counter(kWriters, -1);
    std::vector<std::byte> buffer(sizeof(test::CheckedHeader) + kMaxFiller);
    EventDescriptor event{};
    std::uint64_t expected = 1;
    while (!go.load(std::memory_order_acquire)) {
    }
    while (it.next_seqno() <= last_seqno) {
        switch (it.try_next(event)) {
        case NextResult::NotReady:
            continue;
        case NextResult::Gap:
            tally.lost += it.last_gap_lost();
            expected = it.next_seqno();
            continue;
        case NextResult::Abandoned:  // no writer dies in this test
            ADD_FAILURE() << "event " << it.last_abandoned_seqno() << " reported abandoned";
            expected = it.next_seqno();
            continue;
        case NextResult::Success:
            break;
        }
        ++tally.read;
        if (event.seqno != expected) ++tally.out_of_order;
        expected = event.seqno + 1;
        if (copy_payload(ring, event, buffer.data(), buffer.size()) != PayloadResult::Ok) {
            ++tally.expired;
            continue;
        }
        test::CheckedHeader h{};
        if (!test::verify_checked_payload(buffer.data(), event.payload_size, h) ||
            h.writer != event.content_ext[0] || h.counter != event.content_ext[1]) {
            ++tally.bad_checksum;
            continue;
        }
        ++tally.verified;
        // A writer reserves its events in order, so their seqnos increase too.
        if (static_cast<std::int64_t>(h.counter) <= last_counter[h.writer]) ++tally.writer_order_violations;
        last_counter[h.writer] = static_cast<std::int64_t>(h.counter);
    }
    return tally;
}

struct RunResult {
    std::vector<ReaderTally> tallies;
    std::uint64_t total;
};

RunResult run(const RingParams& params, std::uint64_t per_writer, std::uint32_t writers = kWriters) {
    test::RingPair rings(params);
    Publisher publisher(*rings.writer);
    std::atomic<bool> go{false};
    const std::uint64_t total = per_writer * writers;
    std::vector<ReaderTally> tallies(kReaders);
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < kReaders; ++i)
        threads.emplace_back([&, i] { tallies[i] = read_until(*rings.reader, total, go); });
    for (std::uint32_t w = 0; w < writers; ++w)
        threads.emplace_back([&, w] { write_checked_events(publisher, w, per_writer, go); });
    go.store(true, std::memory_order_release);  // release all threads together
    for (auto& t : threads) t.join();
    return {tallies, total};
}

TEST(Concurrency, EveryEventIsReadOnceWithAValidChecksumWhenTheRingIsLargeEnough) {
    const std::uint64_t per_writer = 60'000 / kScale;
    RunResult result = run(test::small_params(18, 26), per_writer);
    for (const ReaderTally& t : result.tallies) {
        EXPECT_EQ(t.read, result.total);
        EXPECT_EQ(t.lost, 0u);
        EXPECT_EQ(t.verified, result.total);
        EXPECT_EQ(t.expired, 0u);
        EXPECT_EQ(t.bad_checksum, 0u);
        EXPECT_EQ(t.out_of_order, 0u);
        EXPECT_EQ(t.writer_order_violations, 0u);
    }
}

TEST(Concurrency, LappedReadersCountEveryLostEventExactly) {
    // 256 descriptors: readers are lapped all the time. The payload buffer is
    // large enough not to wrap during the run, so every event read must carry
    // a valid payload. One writer thread: several writers on a ring this small
    // can lap each other (docs/format.md, "Lapped writers"); several writers
    // are tested on a ring they cannot lap, above.
    const std::uint64_t per_writer = 600'000 / kScale;
    RunResult result = run(test::small_params(8, 27), per_writer, 1);
    for (const ReaderTally& t : result.tallies) {
        EXPECT_EQ(t.read + t.lost, result.total) << "every seqno is read or counted lost";
        EXPECT_EQ(t.verified, t.read);
        EXPECT_EQ(t.bad_checksum, 0u);
        EXPECT_EQ(t.out_of_order, 0u);
        EXPECT_EQ(t.writer_order_violations, 0u);
    }
}

TEST(Concurrency, WrappedPayloadsAreReportedExpiredNeverCorrupt) {
    // A 16 KiB payload buffer wraps every ~60 events. With one writer thread
    // (see docs/format.md, "Lapped writers", for why several writers sharing a
    // tiny buffer cannot give this guarantee), a payload a reader copies is
    // either intact or reported expired.
    const std::uint64_t per_writer = 600'000 / kScale;
    RunResult result = run(test::small_params(8, 14), per_writer, 1);
    std::uint64_t expired = 0;
    for (const ReaderTally& t : result.tallies) {
        EXPECT_EQ(t.read + t.lost, result.total) << "every seqno is read or counted lost";
        EXPECT_EQ(t.verified + t.expired, t.read);
        EXPECT_EQ(t.bad_checksum, 0u) << "a torn or overwritten payload was reported valid";
        EXPECT_EQ(t.out_of_order, 0u);
        EXPECT_EQ(t.writer_order_violations, 0u);
        expired += t.expired;
    }
    RecordProperty("expired_payloads", static_cast<int>(expired));
}

}  // namespace
}  // namespace evring

// The Shared publisher's reservation (shared::fetch_add_pair_relaxed, one
// lock cmpxchg16b where the CPU has it) mixed with writers that bump either
// word alone, as other RING01 implementations do: no update is lost and no
// old value is handed out twice.
TEST(Concurrency, PairedReservationLosesNoUpdateAmongSingleWordWriters) {
    alignas(64) std::uint64_t words[2] = {0, 0};
    constexpr std::uint64_t kEach = 200'000;
    std::vector<std::vector<std::uint64_t>> firsts(2);
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t)
        threads.emplace_back([&, t] {
            firsts[t].reserve(kEach);
            for (std::uint64_t i = 0; i < kEach; ++i)
                firsts[t].push_back(evring::shared::fetch_add_pair_relaxed(words[0], 1, 16).first);
        });
    threads.emplace_back([&] {
        for (std::uint64_t i = 0; i < kEach; ++i) evring::shared::fetch_add_relaxed(words[0], 1);
    });
    threads.emplace_back([&] {
        for (std::uint64_t i = 0; i < kEach; ++i) evring::shared::fetch_add_relaxed(words[1], 16);
    });
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(evring::shared::load_relaxed(words[0]), 3 * kEach);
    EXPECT_EQ(evring::shared::load_relaxed(words[1]), 3 * kEach * 16);
    std::vector<std::uint64_t> all = firsts[0];
    all.insert(all.end(), firsts[1].begin(), firsts[1].end());
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "a sequence number was handed out twice";
}
