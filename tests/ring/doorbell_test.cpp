// Doorbell: readers that sleep on a futex in the ring and writers that wake them.
#include <fcntl.h>
#include <linux/audit.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include <gtest/gtest.h>

#include "evring/ring/doorbell.hpp"
#include "evring/ring/iterator.hpp"
#include "evring/ring/shared_word.hpp"
#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_extension.hpp"
#include "support/seccomp_filter.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using namespace std::chrono_literals;

std::uint32_t doorbell_value(const MappedRing& ring) {
    // Relaxed: the test only inspects the word; no data is published through it.
    return shared::load_relaxed(extension_in(&ring.header())->doorbell);
}

void commit_one(Publisher& publisher) {
    auto r = publisher.reserve(8);
    ASSERT_TRUE(r);
    std::memset(r.payload(), 0x5a, 8);
    publisher.commit(r);
}

// Waits (without timing assumptions) until some reader announced a sleep.
void wait_until_announced(const MappedRing& ring) {
    while ((doorbell_value(ring) & 1u) == 0) std::this_thread::yield();
}

TEST(Doorbell, NewRingAnnouncesTheDoorbellOutsideTheRing01Header) {
    test::RingPair rings;
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(&rings.reader->header());
    for (std::size_t i = sizeof(RingHeader); i < kRingExtensionOffset; ++i)
        ASSERT_EQ(bytes[i], 0) << "byte " << i << " of the header section is not zero";
    EXPECT_EQ(ring_features(*extension_in(&rings.reader->header())), kRingFeatureDoorbell);
    EXPECT_EQ(std::memcmp(bytes + kRingExtensionOffset, "EVRGEXT1", 8), 0);
    EXPECT_EQ(doorbell_value(*rings.reader), 0u);
}

TEST(Doorbell, ReadOnlyReaderGetsItsOwnWritableViewAndSleepsOnTheFutex) {
    test::RingPair rings;
    Doorbell bell = Doorbell::attach(*rings.reader);
    EXPECT_EQ(bell.mode(), Doorbell::Mode::Futex) << bell.fallback_reason();
}

TEST(Doorbell, WaitReturnsAtOnceWhenTheEventIsCommitted) {
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    commit_one(publisher);
    Doorbell bell = Doorbell::attach(*rings.reader);
    EXPECT_TRUE(bell.wait(1, 1h));
    EXPECT_EQ(bell.sleeps(), 0u);
}

TEST(Doorbell, WaitWithZeroTimeoutNeverSleeps) {
    test::RingPair rings;
    Doorbell bell = Doorbell::attach(*rings.reader);
    EXPECT_FALSE(bell.wait(1, 0ns));
    EXPECT_EQ(bell.sleeps(), 0u);
    EXPECT_EQ(doorbell_value(*rings.reader), 0u) << "no sleep, so nothing announced";
}

TEST(Doorbell, WaitWithNothingCommittedReturnsFalseAfterTheTimeout) {
    test::RingPair rings;
    Doorbell bell = Doorbell::attach(*rings.reader);
    EXPECT_FALSE(bell.wait(1, 1ms));
    EXPECT_EQ(bell.sleeps(), 1u);
    EXPECT_EQ(doorbell_value(*rings.reader) & 1u, 1u) << "the sleep stays announced";
}

TEST(Doorbell, ASecondSleepWithinTheMinimumIntervalDoesNotAnnounceItself) {
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    Doorbell bell = Doorbell::attach(*rings.reader);
    bell.set_min_sleep_interval(1h);
    EXPECT_FALSE(bell.wait(1, 1ms));  // the first sleep announces and times out
    commit_one(publisher);             // wakes: clears the announcement, epoch 1
    ASSERT_EQ(doorbell_value(*rings.reader), 2u);
    EXPECT_TRUE(bell.wait(2, 1ms)) << "a rate-limited wait asks the caller to re-poll";
    EXPECT_EQ(doorbell_value(*rings.reader), 2u) << "no announcement, so no writer wake";
    EXPECT_EQ(bell.sleeps(), 1u);
}

TEST(Doorbell, CommitsWithoutSleepersLeaveTheDoorbellLineUnwritten) {
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    for (int i = 0; i < 100; ++i) commit_one(publisher);
    EXPECT_EQ(doorbell_value(*rings.reader), 0u);
}

TEST(Doorbell, FirstCommitAfterAnAnnouncementWakesOnceAndAdvancesTheEpoch) {
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    shared::fetch_or_seq_cst(extension_in(&rings.writer->header())->doorbell, 1u);  // a reader announcing a sleep
    commit_one(publisher);
    EXPECT_EQ(doorbell_value(*rings.reader), 2u) << "epoch 1, nobody announced";
    commit_one(publisher);
    EXPECT_EQ(doorbell_value(*rings.reader), 2u) << "a second commit must not wake again";
}

// membarrier(2) fails with EPERM from now on in this process, as under a
// seccomp policy that refuses it; every other call is allowed.
bool refuse_membarrier() {
    sock_filter program[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_membarrier, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    return test::install_seccomp_filter(program);
}

// A writer process that cannot register for membarrier makes W9 a full fence:
// commit then loads a word that always sends it to the slow path
// (Publisher::doorbell_watch_), which must still leave the doorbell alone
// without sleepers and wake exactly once after an announcement. Run in a
// fresh process (a death test re-executes the binary), since registration
// is decided once per process. Exit codes: 0 passed, 2 registration was not
// refused, 3 the doorbell was written without a sleeper, 4 no wake, 5 a
// second wake.
// The rings are gone (their temporary directory removed) before the exit
// code is returned: std::_Exit runs no destructor.
int check_commit_without_membarrier() {
    if (!refuse_membarrier() || register_doorbell_writer()) return 2;
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    for (int i = 0; i < 100; ++i) commit_one(publisher);
    if (doorbell_value(*rings.reader) != 0) return 3;
    shared::fetch_or_seq_cst(extension_in(&rings.writer->header())->doorbell, 1u);  // a reader announcing a sleep
    commit_one(publisher);
    if (doorbell_value(*rings.reader) != 2) return 4;
    commit_one(publisher);
    if (doorbell_value(*rings.reader) != 2) return 5;
    return 0;
}

void commit_without_membarrier() { std::_Exit(check_commit_without_membarrier()); }

TEST(Doorbell, WriterThatCannotRegisterForMembarrierFencesAndStillWakes) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(commit_without_membarrier(), testing::ExitedWithCode(0), "");
}

TEST(Doorbell, SleepingReaderThreadIsWokenByACommit) {
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    std::atomic<bool> returned{false};
    bool result = false;
    std::thread reader([&] {
        Doorbell bell = Doorbell::attach(*rings.reader);
        result = bell.wait(1, 60s);
        returned.store(true, std::memory_order_release);  // publishes `result`
    });
    wait_until_announced(*rings.reader);
    commit_one(publisher);
    reader.join();
    EXPECT_TRUE(returned.load(std::memory_order_acquire));
    EXPECT_TRUE(result);
}

TEST(Doorbell, SleepingReaderProcessIsWokenByAWriterInAnotherProcess) {
    test::RingPair rings;
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // The writer: its own mapping of the file, ringing after its commit.
        MappedRing ring = test::map_path(rings.path, Access::ReadWrite);
        wait_until_announced(ring);
        Publisher publisher(ring);
        auto r = publisher.reserve(8);
        publisher.commit(r);
        ::_exit(0);
    }
    Doorbell bell = Doorbell::attach(*rings.reader);
    ASSERT_EQ(bell.mode(), Doorbell::Mode::Futex);
    bool woken = false;
    for (int i = 0; i < 60 && !woken; ++i) woken = bell.wait(1, 1s);
    int status = 0;
    ::waitpid(child, &status, 0);
    EXPECT_TRUE(woken);
    EXPECT_TRUE(bell.event_ready(1));
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(Doorbell, ManySleepsAndCommitsNeverLoseAWakeup) {
    // Reader and writer alternate strictly: each commit happens only after the
    // reader announced its sleep, so a lost wakeup would hang for the 60 s
    // timeout and fail the EXPECT below.
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    constexpr int kRounds = 2000;
    std::atomic<int> failures{0};
    std::thread reader([&] {
        Doorbell bell = Doorbell::attach(*rings.reader);
        for (std::uint64_t seqno = 1; seqno <= kRounds; ++seqno) {
            while (!bell.event_ready(seqno))
                if (!bell.wait(seqno, 60s)) failures.fetch_add(1, std::memory_order_relaxed);  // count only
        }
    });
    for (int i = 0; i < kRounds; ++i) {
        // Either the reader announced, or it already saw the previous event
        // and is about to announce: both orders are legal and exercised.
        if (i % 2 == 0) wait_until_announced(*rings.reader);
        commit_one(publisher);
    }
    reader.join();
    EXPECT_EQ(failures.load(), 0);
}

TEST(Doorbell, ManySleepsAcrossProcessesNeverLoseAWakeup) {
    // As above with the writer in another process, which takes the light
    // (membarrier) path when the kernel offers it.
    test::RingPair rings;
    constexpr std::uint64_t kRounds = 1000;
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        MappedRing ring = test::map_path(rings.path, Access::ReadWrite);
        Publisher publisher(ring);
        for (std::uint64_t i = 0; i < kRounds; ++i) {
            if (i % 2 == 0) wait_until_announced(ring);
            auto r = publisher.reserve(8);
            publisher.commit(r);
        }
        ::_exit(0);
    }
    Doorbell bell = Doorbell::attach(*rings.reader);
    int timeouts = 0;
    for (std::uint64_t seqno = 1; seqno <= kRounds; ++seqno)
        while (!bell.event_ready(seqno))
            if (!bell.wait(seqno, 60s)) ++timeouts;
    int status = 0;
    ::waitpid(child, &status, 0);
    EXPECT_EQ(timeouts, 0);
    EXPECT_EQ(bell.mode(), Doorbell::Mode::Futex) << bell.fallback_reason();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(Doorbell, RingWithoutExtensionBlockFallsBackToPolling) {
    test::RingPair rings;
    // What a ring made by another implementation looks like: zeroes.
    std::memset(static_cast<void*>(extension_in(&rings.writer->header())), 0, sizeof(RingExtension));
    EXPECT_EQ(writer_doorbell_word(*rings.writer), nullptr);
    Doorbell bell = Doorbell::attach(*rings.reader);
    EXPECT_EQ(bell.mode(), Doorbell::Mode::Polling);
    EXPECT_NE(bell.fallback_reason().find("does not announce a doorbell"), std::string::npos)
        << bell.fallback_reason();
    bell.set_poll_interval(100us);
    EXPECT_FALSE(bell.wait(1, 1ms));
    EXPECT_GE(bell.sleeps(), 1u);
    Publisher publisher(*rings.writer);
    commit_one(publisher);
    EXPECT_EQ(doorbell_value(*rings.reader), 0u) << "a writer must not ring an unannounced bell";
    EXPECT_TRUE(bell.wait(1, 1h));
}

TEST(Doorbell, ReaderWithoutWritePermissionFallsBackToPolling) {
    test::RingPair rings;
    ASSERT_EQ(::chmod(rings.path.c_str(), 0444), 0);
    // A child that is not root (root may open any file for writing) and keeps
    // the parent's read-only mapping.
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        if (::geteuid() == 0 && ::setuid(65534) != 0) ::_exit(2);
        Doorbell bell = Doorbell::attach(*rings.reader);
        const bool ok = bell.mode() == Doorbell::Mode::Polling &&
                        bell.fallback_reason().find("for writing") != std::string::npos;
        ::_exit(ok ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "1: did not fall back to polling; 2: setuid failed";
}

TEST(Doorbell, PathNamingADifferentSmallerFileFallsBackToPolling) {
    test::RingPair rings;
    // Replace the file at the path by a short one, as when the path names a
    // compressed snapshot: attach must not map (and fault on) it.
    ASSERT_EQ(::unlink(rings.path.c_str()), 0);
    const int fd = ::open(rings.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "not a ring", 10), 10);
    ::close(fd);
    Doorbell bell = Doorbell::attach(*rings.reader);
    EXPECT_EQ(bell.mode(), Doorbell::Mode::Polling);
    EXPECT_NE(bell.fallback_reason().find("not the mapped ring file"), std::string::npos)
        << bell.fallback_reason();
}

TEST(Doorbell, OneShotWaitForEventsSeesACommittedEvent) {
    test::RingPair rings;
    EXPECT_FALSE(wait_for_events(*rings.reader, 1, 0ns));
    Publisher publisher(*rings.writer);
    commit_one(publisher);
    EXPECT_TRUE(wait_for_events(*rings.reader, 1, 1h));
}

TEST(Doorbell, ReaderDrainsWithIteratorThenSleeps) {
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    for (int i = 0; i < 5; ++i) commit_one(publisher);
    Iterator it(*rings.reader);
    it.seek(1);
    Doorbell bell = Doorbell::attach(*rings.reader);
    EventDescriptor event{};
    int read = 0;
    while (it.try_next(event) == NextResult::Success) ++read;
    EXPECT_EQ(read, 5);
    EXPECT_FALSE(bell.wait(it.next_seqno(), 0ns));
    commit_one(publisher);
    EXPECT_TRUE(bell.wait(it.next_seqno(), 1h));
    EXPECT_EQ(it.try_next(event), NextResult::Success);
}

}  // namespace
}  // namespace evring
