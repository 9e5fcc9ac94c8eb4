// Racing registration (lib/registry/registry_interest.hpp, docs/interest.md): a
// reader that registers while a writer checks interest sees every event it
// wants from interest_from() on. First the steps interleaved by hand on one
// thread, then with real threads.
#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "evring/ring/interest.hpp"
#include "evring/ring/iterator.hpp"
#include "evring/ring/ring_extension.hpp"
#include "evring/ring/shared_word.hpp"
#include "registry/registry_interest.hpp"
#include "registry/registry_identity.hpp"
#include "support/registry_ring.hpp"

namespace evring {
namespace {

using test::attach;
using test::quiet;
using test::RegistryRing;

constexpr std::uint64_t kTrades = 1, kQuotes = 2;
constexpr EventInterest kTrade{kTrades, 0, false};
constexpr std::uint16_t kTickType = 3, kTradeType = 4;

RegistrationOptions wanting(std::uint64_t interest) {
    RegistrationOptions options = quiet();
    options.interest = interest;
    return options;
}

// The writer of the tests: per attempt i, an always-recorded TICK(i), then a
// TRADE(i) only when some reader wants trades. Returns whether it published.
bool writer_attempt(Publisher& publisher, std::uint64_t i) {
    Reservation tick = publisher.reserve(8);
    tick.descriptor().event_type = kTickType;
    std::memcpy(tick.payload(), &i, 8);
    publisher.commit(tick);
    Publisher* p = publisher.wants(kTrade);  // I7
    if (p == nullptr) return false;
    Reservation trade = p->reserve(8);
    trade.descriptor().event_type = kTradeType;
    std::memcpy(trade.payload(), &i, 8);
    p->commit(trade);
    return true;
}

// What a registrant with `from` reads: the attempt number of the first TICK
// numbered >= from, and which attempts' TRADEs it finds.
struct Seen {
    std::uint64_t first_tick = UINT64_MAX;
    std::vector<std::uint64_t> trades;
};

Seen read_from(const MappedRing& ring, std::uint64_t from) {
    Seen seen;
    Iterator it(ring);
    it.seek(from);
    EventDescriptor event{};
    while (it.try_next(event) == NextResult::Success) {
        std::uint64_t attempt = 0;
        std::memcpy(&attempt, ring.payload_buffer() + (event.payload_buf_offset & ring.payload_mask()), 8);
        if (event.event_type == kTickType && seen.first_tick == UINT64_MAX) seen.first_tick = attempt;
        if (event.event_type == kTradeType) seen.trades.push_back(attempt);
    }
    return seen;
}

// Every attempt from the first TICK the registrant reads on published its TRADE.
void expect_every_trade_from_first_tick(const Seen& seen, std::uint64_t attempts) {
    ASSERT_NE(seen.first_tick, UINT64_MAX) << "no TICK at or after interest_from";
    std::vector<bool> found(attempts, false);
    for (std::uint64_t a : seen.trades)
        if (a < attempts) found[a] = true;
    for (std::uint64_t a = seen.first_tick; a < attempts; ++a) EXPECT_TRUE(found[a]) << "TRADE of attempt " << a;
}

// The registrant's steps, one at a time (registry_interest.hpp): I2 the
// union, I3 the store, I6 the position (I1/I4, the lock, and I5, the
// fences, order nothing on one thread).
struct SteppedRegistrant {
    const detail::RegistryFile& file;
    std::uint64_t& word;
    const RingControl& control;
    std::uint64_t wanted = 0, from = 0;
    void step(int n) {
        bool truncated = false;
        if (n == 0) wanted = detail::union_of_live_slots(file, detail::kNoOwnSlot, truncated);                 // I2
        if (n == 1) shared::store_relaxed(word, wanted);                                    // I3
        if (n == 2) from = shared::load_relaxed(control.last_seqno) + 1;                    // I6
    }
};

TEST(InterestRaceDeterministic, EveryInterleavingOfWriterAndRegistrantKeepsTheGuarantee) {
    // Registrant steps I2, I3, I6 with writer attempts before, between and
    // after each, in every placement of up to two attempts per gap.
    for (int gaps = 0; gaps < 81; ++gaps) {
        SCOPED_TRACE(gaps);
        RegistryRing ring(test::small_params(10, 16));
        ReaderRegistration quotes = attach(ring, "quotes", wanting(interest_word(kQuotes, 15)));
        ASSERT_EQ(ring.publisher->wants(kTrade), nullptr) << "nobody wants trades yet";
        // The registrant's slot is written (E1..E4) by a registration whose
        // own recomputation we undo, so the steps below are the ones that count.
        ReaderRegistration trades = attach(ring, "trades", wanting(interest_word(kTrades, 15)));
        auto& word = extension_in(&ring.writer->header())->interest;
        shared::store_relaxed(word, interest_word(kQuotes, 15));
        auto identity = detail::ring_identity_of(ring.reader->fd(), ring.reader->ring().header());
        ASSERT_TRUE(identity);
        auto opened = detail::open_registry(ring.registry_path(), *identity, false);
        ASSERT_TRUE(opened && opened->verdict.state == RegistryState::Valid);
        SteppedRegistrant registrant{opened->file, word, ring.writer->header().control};
        std::uint64_t attempt = 0;
        int code = gaps;
        for (int step = 0; step <= 3; ++step) {
            const int attempts_here = code % 3;
            code /= 3;
            for (int k = 0; k < attempts_here; ++k) writer_attempt(*ring.publisher, attempt++);
            if (step < 3) registrant.step(step);
        }
        for (int k = 0; k < 2; ++k) writer_attempt(*ring.publisher, attempt++);
        expect_every_trade_from_first_tick(read_from(*ring.writer, registrant.from), attempt);
    }
}

TEST(InterestRaceDeterministic, ALeavingReadersRecomputationNeverDropsANewerRegistrant) {
    // The leaver frees its slot and the registrant writes its own before
    // either recomputes; the lock orders the two recomputations, either way.
    for (const bool leaver_first : {true, false}) {
        SCOPED_TRACE(leaver_first);
        RegistryRing ring;
        ReaderRegistration leaver = attach(ring, "leaver", wanting(interest_word(kQuotes, 15)));
        ReaderRegistration registrant = attach(ring, "trades", wanting(interest_word(kTrades, 15)));
        auto identity = detail::ring_identity_of(ring.reader->fd(), ring.reader->ring().header()).value();
        auto opened = detail::open_registry(ring.registry_path(), identity, true).value();
        auto& word = extension_in(&ring.writer->header())->interest;
        shared::store_relaxed(word, interest_word(kQuotes, 15));  // as if neither had recomputed yet
        if (leaver_first) {
            leaver.unregister();  // frees its slot, recomputes
            (void)detail::recompute_interest(opened.file, ring.path, &ring.writer->header());
        } else {
            (void)detail::recompute_interest(opened.file, ring.path, &ring.writer->header());
            leaver.unregister();
        }
        EXPECT_EQ(shared::load_relaxed(word), interest_word(kTrades, 15));
    }
}

// With threads: the writer runs attempts while the main thread registers a
// reader of trades; from the first TICK at or after its interest_from() on,
// every TRADE is in the ring.
TEST(InterestRaceThreads, ARegistrantSeesEveryTradeFromItsRegistrationOn) {
    for (int round = 0; round < 5; ++round) {
        SCOPED_TRACE(round);
        RegistryRing ring(test::small_params(16, 22));
        ReaderRegistration quotes = attach(ring, "quotes", wanting(interest_word(kQuotes, 15)));
        std::atomic<bool> registered{false};
        std::atomic<std::uint64_t> attempts{0};
        std::thread writer([&] {
            std::uint64_t i = 0, stop_at = UINT64_MAX;
            for (; i < stop_at; ++i) {
                writer_attempt(*ring.publisher, i);
                if (stop_at == UINT64_MAX && registered.load(std::memory_order_acquire)) stop_at = i + 1000;
                if ((i & 15) == 0) std::this_thread::yield();  // keep the run inside the ring
            }
            attempts.store(i, std::memory_order_release);
        });
        while (shared::load_relaxed(ring.writer->header().control.last_seqno) < 2000u * (round + 1)) std::this_thread::yield();
        ReaderRegistration trades = attach(ring, "trades", wanting(interest_word(kTrades, 15)));
        registered.store(true, std::memory_order_release);
        writer.join();
        ASSERT_TRUE(trades.registered()) << trades.warning();
        ASSERT_TRUE(trades.interest_problem().empty()) << trades.interest_problem();
        const Seen seen = read_from(*ring.writer, trades.interest_from());
        expect_every_trade_from_first_tick(seen, attempts.load(std::memory_order_acquire));
        // The writer saw `registered` after some attempt i and stopped at
        // i + 1000: attempts i + 1 .. i + 999 came after the registration
        // (attempt i itself may have come before it).
        EXPECT_GE(seen.trades.size(), 999u);
    }
}

}  // namespace
}  // namespace evring
