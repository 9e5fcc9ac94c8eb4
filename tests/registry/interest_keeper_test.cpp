// The interest keeper (lib/registry/interest_keeper.hpp): a reader killed by
// SIGKILL while its narrow interest holds the ring's word stops suppressing
// events within a tick, with no other reader coming, going or listing; live
// readers, stopped ones included, keep theirs. First K1..K4 on one thread,
// then real processes killed by SIGKILL under a real RingWriter.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "evring/ring/interest.hpp"
#include "evring/ring/iterator.hpp"
#include "evring/ring/ring_extension.hpp"
#include "evring/ring/ring_writer.hpp"
#include "evring/ring/shared_word.hpp"
#include "registry/interest_keeper.hpp"
#include "registry/registry_file.hpp"
#include "registry/registry_identity.hpp"
#include "registry/registry_interest.hpp"
#include "support/child_process.hpp"
#include "support/registry_ring.hpp"

namespace evring {
namespace {

using namespace std::chrono_literals;
using detail::KeeperOutcome;
using test::Pipe;
using test::RegistryRing;

constexpr std::uint64_t kTrades = 1, kQuotes = 2;
const std::uint64_t kWantsTrades = interest_word(kTrades, 15);
const std::uint64_t kWantsQuotes = interest_word(kQuotes, 15);
const EventInterest kQuote{kQuotes, 0, false};
const EventInterest kTrade{kTrades, 0, false};

RegistrationOptions wanting(std::uint64_t interest) {
    RegistrationOptions options = test::quiet();
    options.interest = interest;
    return options;
}

// A reader of `path` in a child process, registered wanting `interest`,
// then idle until killed. Returns once it is registered.
pid_t start_reader(const std::string& path, std::uint64_t interest) {
    Pipe ready;
    const pid_t child = test::spawn([&] {
        ready.close_read();
        auto ring = RingReader::open(path);
        if (!ring) return 2;
        ReaderRegistration seen =
            ReaderRegistration::attach(*ring, test::reader_info("narrow"), wanting(interest));
        if (!seen.registered()) return 3;
        ready.send(std::uint64_t{1});
        for (;;) ::pause();
    });
    ready.close_write();
    std::uint64_t registered = 0;
    if (!ready.receive(registered)) ADD_FAILURE() << "the reader did not register: exit " << test::exit_code_of(child);
    return child;
}

void kill_reader(pid_t child) {
    ::kill(child, SIGKILL);
    EXPECT_EQ(test::exit_code_of(child), 128 + SIGKILL);
}

// Polls `done` every millisecond for up to `bound`; the time it took, or
// nullopt when it never became true.
template <class F>
std::optional<std::chrono::milliseconds> time_until(F done, std::chrono::milliseconds bound) {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
        if (done()) return waited;
        if (waited > bound) return std::nullopt;
        std::this_thread::sleep_for(1ms);
    }
}

std::uint64_t word_of(const MappedRing& ring) {
    return shared::load_relaxed(extension_in(const_cast<RingHeader*>(&ring.header()))->interest);
}

// The registry of `ring` as the keeper opens it.
detail::OpenedRegistry registry_of(const RegistryRing& ring, bool writable) {
    auto identity = detail::ring_identity_of(ring.reader->fd(), ring.reader->ring().header());
    EXPECT_TRUE(identity.ok());
    auto opened = detail::open_registry(ring.registry_path(), *identity, writable);
    EXPECT_TRUE(opened.ok());
    EXPECT_EQ(opened->verdict.state, RegistryState::Valid) << opened->verdict.reason;
    return std::move(opened).value();
}

// K1..K4 by hand (RegistryRing maps its ring without a RingWriter, so no
// keeper runs in this process).

TEST(KeepInterest, ADeadReadersInterestIsRecomputedAway) {
    RegistryRing ring;
    ReaderRegistration live = test::attach(ring, "live", wanting(kWantsTrades));
    const pid_t dying = start_reader(ring.path, kWantsQuotes);
    EXPECT_EQ(word_of(*ring.writer), interest_union(kWantsTrades, kWantsQuotes));
    kill_reader(dying);
    EXPECT_EQ(word_of(*ring.writer), interest_union(kWantsTrades, kWantsQuotes)) << "nobody looked yet";
    auto registry = registry_of(ring, true);
    std::uint64_t& word = extension_in(&ring.writer->header())->interest;
    EXPECT_EQ(detail::keep_interest(&registry.file, word), KeeperOutcome::Recomputed);
    EXPECT_EQ(word_of(*ring.writer), kWantsTrades) << "the live reader still narrows it";
    EXPECT_EQ(detail::keep_interest(&registry.file, word), KeeperOutcome::Unchanged);
    live.unregister();
    EXPECT_EQ(word_of(*ring.writer), kInterestEverything);
}

TEST(KeepInterest, AStoppedReaderIsAliveAndKeepsItsInterest) {
    RegistryRing ring;
    const pid_t stopped = start_reader(ring.path, kWantsQuotes);
    ::kill(stopped, SIGSTOP);
    auto registry = registry_of(ring, true);
    std::uint64_t& word = extension_in(&ring.writer->header())->interest;
    EXPECT_EQ(detail::keep_interest(&registry.file, word), KeeperOutcome::Unchanged);
    EXPECT_EQ(word_of(*ring.writer), kWantsQuotes);
    ::kill(stopped, SIGCONT);
    kill_reader(stopped);
}

TEST(KeepInterest, AHeldInterestLockIsTriedNotWaitedFor) {
    RegistryRing ring;
    const pid_t dying = start_reader(ring.path, kWantsQuotes);
    kill_reader(dying);
    auto holder = registry_of(ring, true);  // another open file description
    auto held = detail::InterestLock::take(holder.file.fd());
    ASSERT_TRUE(held.ok()) << held.error().message();
    auto registry = registry_of(ring, true);
    std::uint64_t& word = extension_in(&ring.writer->header())->interest;
    EXPECT_EQ(detail::keep_interest(&registry.file, word), KeeperOutcome::Busy);
    EXPECT_EQ(word_of(*ring.writer), kWantsQuotes);
}

TEST(KeepInterest, WithoutARegistryOrTheRightToLockItOnlyWidens) {
    RegistryRing ring;
    const pid_t dying = start_reader(ring.path, kWantsQuotes);
    kill_reader(dying);
    std::uint64_t& word = extension_in(&ring.writer->header())->interest;
    auto read_only = registry_of(ring, false);
    EXPECT_EQ(detail::keep_interest(&read_only.file, word), KeeperOutcome::Widened);
    EXPECT_EQ(word_of(*ring.writer), kInterestEverything);
    shared::store_relaxed(word, kWantsQuotes);
    EXPECT_EQ(detail::keep_interest(nullptr, word), KeeperOutcome::Widened) << "no registry of this ring";
    EXPECT_EQ(word_of(*ring.writer), kInterestEverything);
    EXPECT_EQ(detail::keep_interest(nullptr, word), KeeperOutcome::Unchanged) << "a word that does not narrow";
}

// Real processes, a real RingWriter and its keeper.

int keeper_threads() {
    int found = 0;
    DIR* tasks = ::opendir("/proc/self/task");
    if (tasks == nullptr) return -1;
    while (const dirent* task = ::readdir(tasks)) {
        std::ifstream comm(std::string("/proc/self/task/") + task->d_name + "/comm");
        std::string name;
        if (std::getline(comm, name) && name == "evring-interest") ++found;
    }
    ::closedir(tasks);
    return found;
}

// The case: one narrow reader, killed; 50 QUOTEs written after.
// Returns the time the writer took to see the word widen (fails the test
// when it did not within 10 s).
std::chrono::milliseconds killed_reader_stops_suppressing(const std::string& path) {
    auto writer = RingWriter::create(test::small_spec(path));
    EXPECT_TRUE(writer.ok()) << writer.error().message();
    Publisher publisher(writer->ring());
    const pid_t reader = start_reader(path, kWantsTrades);
    EXPECT_EQ(publisher.wants(kQuote), nullptr) << "the live reader wants trades only";
    EXPECT_EQ(publisher.wants(kTrade), &publisher);
    kill_reader(reader);
    const auto took = time_until([&] { return publisher.wants(kQuote) != nullptr; }, 10'000ms);
    EXPECT_TRUE(took.has_value()) << "QUOTEs still skipped 10 s after the only reader was killed";
    std::uint64_t written = 0;
    for (int i = 0; i < 50; ++i) {
        if (Publisher* p = publisher.wants(kQuote)) {
            Reservation r = p->reserve(8);
            r.descriptor().event_type = 7;
            p->commit(r);
            ++written;
        }
    }
    EXPECT_EQ(written, 50u);
    Iterator it(writer->ring());
    it.seek(1);
    EventDescriptor event;
    std::uint64_t quotes = 0;
    while (it.try_next(event) == NextResult::Success) quotes += event.event_type == 7;
    EXPECT_EQ(quotes, 50u) << "QUOTEs in the ring";
    return took.value_or(10'000ms);
}

TEST(InterestKeeper, AKilledNarrowReaderStopsSuppressingWithinATick) {
    test::TempDir dir;
    const auto took = killed_reader_stops_suppressing(dir.file("ring"));
    std::printf("the writer saw the dead reader's interest go %lld ms after the kill (tick %lld ms)\n",
                static_cast<long long>(took.count()), static_cast<long long>(detail::kKeeperTick.count()));
}

TEST(InterestKeeper, LiveReadersStillNarrowAfterAnotherIsKilled) {
    test::TempDir dir;
    const std::string path = dir.file("ring");
    auto writer = RingWriter::create(test::small_spec(path));
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    Publisher publisher(writer->ring());
    auto ring = RingReader::open(path);
    ASSERT_TRUE(ring.ok());
    ReaderRegistration live = ReaderRegistration::attach(*ring, test::reader_info("live"), wanting(kWantsTrades));
    ASSERT_TRUE(live.registered()) << live.warning();
    const pid_t stopped = start_reader(path, interest_word(4, 15));
    ::kill(stopped, SIGSTOP);
    const pid_t dying = start_reader(path, kWantsQuotes);
    ASSERT_NE(publisher.wants(kQuote), nullptr);
    kill_reader(dying);
    const std::uint64_t survivors = interest_union(kWantsTrades, interest_word(4, 15));
    EXPECT_TRUE(time_until([&] { return publisher.interest() == survivors; }, 10'000ms))
        << "the word is " << std::hex << publisher.interest() << ", not the survivors' " << survivors;
    EXPECT_EQ(publisher.wants(kQuote), nullptr) << "the stopped and the live reader still narrow it";
    ::kill(stopped, SIGCONT);
    kill_reader(stopped);
}

TEST(InterestKeeper, OneThreadWhileTheProcessWritesNoneAfter) {
    test::TempDir dir;
    {
        auto a = RingWriter::create(test::small_spec(dir.file("a")));
        auto b = RingWriter::create(test::small_spec(dir.file("b")));
        ASSERT_TRUE(a.ok() && b.ok());
        EXPECT_TRUE(time_until([] { return keeper_threads() == 1; }, 5'000ms)) << keeper_threads() << " keepers";
    }
    EXPECT_TRUE(time_until([] { return keeper_threads() == 0; }, 5'000ms))
        << "the keeper outlived the process's last writer";
}

// The keeper maps each ring through a description of its own: a mapping of
// the writer's would keep the writer's locks, and so "a writer lives", after
// the writer closed.
TEST(InterestKeeper, ClosingAWriterReleasesItsLocksAtOnce) {
    test::TempDir dir;
    const std::string path = dir.file("ring");
    CreateOptions keep;
    keep.keep_on_close = true;
    auto writer = RingWriter::create(test::small_spec(path), keep);
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    auto reader = RingReader::open(path);
    ASSERT_TRUE(reader.ok()) << reader.error().message();
    EXPECT_TRUE(reader->writer_alive());
    { RingWriter closing = std::move(writer).value(); }
    EXPECT_FALSE(reader->writer_alive()) << "the writer closed, yet its locks are held";
}

TEST(InterestKeeper, AChildForkedFromAWriterKeepsItsOwnRings) {
    test::TempDir dir;
    auto parent_writer = RingWriter::create(test::small_spec(dir.file("parent")));
    ASSERT_TRUE(parent_writer.ok());
    const std::string path = dir.file("child");
    const pid_t child = test::spawn([&] {
        (void)killed_reader_stops_suppressing(path);
        return ::testing::Test::HasFailure() ? 1 : 0;
    });
    EXPECT_EQ(test::exit_code_of(child), 0) << "the forked child's keeper did not widen its ring's word";
}

}  // namespace
}  // namespace evring
