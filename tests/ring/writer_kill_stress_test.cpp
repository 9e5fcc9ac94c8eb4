// Writers that die: several writer processes record into one ring while the
// test SIGKILLs them at random moments (and starts replacements); reader
// processes sleep on the doorbell and must each finish, read every committed
// event exactly once with a valid checksum, and report every slot whose
// writer died between reserve and commit as Abandoned.
//
// Deterministic in outcome: the ring is large enough never to be lapped and
// its payload buffer never wraps, so the ring itself is the ground truth at
// the end (a slot holds its own seqno iff it was committed). A slot's writer
// pauses at most ~1 ms between reserve and commit, far below the readers'
// 500 ms abandonment bound; one writer is killed at a known point between
// reserve and commit so that at least one abandoned slot always exists.
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "evring/ring/doorbell.hpp"
#include "evring/ring/iterator.hpp"
#include "evring/ring/shared_word.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/publisher.hpp"
#include "support/checked_payload.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using namespace std::chrono_literals;

constexpr unsigned kDescriptorShift = 17;     // 131072 slots: never lapped
constexpr unsigned kPayloadShift = 24;        // 16 MiB: never wraps
constexpr std::uint64_t kEventLimit = 90'000;  // writers stop reserving here
constexpr int kWriters = 3;
constexpr int kReaders = 2;
constexpr int kKills = 30;
constexpr std::uint16_t kEventType = 7;
constexpr std::uint16_t kSentinelType = 9;
constexpr auto kAbandonAfter = 500ms;

// Payload: seqno, writer, length of filler, checksum over all three + filler.
struct Stamp {
    std::uint64_t seqno;
    std::uint32_t writer;
    std::uint32_t length;
    std::uint64_t checksum;
};

std::uint64_t stamp_checksum(const Stamp& s, const std::byte* filler) {
    std::uint64_t h = test::fnv1a(&s.seqno, 8);
    h = test::fnv1a(&s.writer, 4, h);
    h = test::fnv1a(&s.length, 4, h);
    return test::fnv1a(filler, s.length, h);
}

struct ReaderReport {
    std::uint8_t read[kEventLimit + 64];
    std::uint8_t abandoned[kEventLimit + 64];
    std::uint64_t bad_checksum, not_ok_copy, gaps, out_of_range;
    std::uint64_t sleeps;
    int finished;
};

void sleep_for(std::chrono::nanoseconds d) {
    timespec ts{static_cast<time_t>(d.count() / 1'000'000'000), static_cast<long>(d.count() % 1'000'000'000)};
    ::nanosleep(&ts, nullptr);
}

std::uint64_t newest(const MappedRing& ring) {
    // Relaxed: a progress hint for the writers' stopping rule.
    return shared::load_relaxed(ring.header().control.last_seqno);
}

// Writer process body. `hold_fd` >= 0: after its first reservation, report it
// on the pipe and wait (to be killed there).
[[noreturn]] void run_writer(const MappedRing& ring, std::uint32_t id, int hold_fd) {
    Publisher publisher(ring);
    std::mt19937_64 rng(id * 7919u + 1);
    std::byte* payload = nullptr;
    for (std::uint64_t n = 0; newest(ring) < kEventLimit; ++n) {
        const std::uint32_t length = static_cast<std::uint32_t>(rng() % 41);
        Reservation r = publisher.reserve(sizeof(Stamp) + length);
        if (!r) ::_exit(3);
        r.descriptor().event_type = kEventType;
        payload = r.payload();
        Stamp s{r.seqno(), id, length, 0};
        for (std::uint32_t i = 0; i < length; ++i)
            payload[sizeof s + i] = static_cast<std::byte>((r.seqno() * 31 + i) & 0xff);
        s.checksum = stamp_checksum(s, payload + sizeof s);
        std::memcpy(payload, &s, sizeof s);
        if (hold_fd >= 0) {
            const std::uint64_t seqno = r.seqno();
            if (::write(hold_fd, &seqno, sizeof seqno) != sizeof seqno) ::_exit(4);
            for (;;) ::pause();
        }
        // Widen the window between reserve and commit, as a slow writer would.
        if (rng() % 16 == 0) sleep_for(1ms);
        publisher.commit(r);
        if (n % 8 == 7) sleep_for(1ms);  // throttle: the ring must not fill
    }
    ::_exit(0);
}

[[noreturn]] void run_reader(const MappedRing& ring, ReaderReport& report) {
    Iterator it(ring);
    it.seek(1);
    it.set_abandon_after(kAbandonAfter);
    Doorbell bell = Doorbell::attach(ring);
    if (bell.mode() != Doorbell::Mode::Futex) ::_exit(5);
    std::vector<std::byte> buffer(4096);
    const auto give_up = std::chrono::steady_clock::now() + 100s;
    EventDescriptor event{};
    for (;;) {
        switch (it.try_next(event)) {
        case NextResult::NotReady:
            if (std::chrono::steady_clock::now() > give_up) ::_exit(6);
            bell.wait(it.next_seqno(), 10ms);
            continue;
        case NextResult::Gap:
            ++report.gaps;
            continue;
        case NextResult::Abandoned:
            if (it.last_abandoned_seqno() >= kEventLimit + 64) ++report.out_of_range;
            else ++report.abandoned[it.last_abandoned_seqno()];
            continue;
        case NextResult::Success:
            break;
        }
        if (event.event_type == kSentinelType) break;
        if (event.seqno >= kEventLimit + 64) {
            ++report.out_of_range;
            continue;
        }
        ++report.read[event.seqno];
        if (copy_payload(ring, event, buffer.data(), buffer.size()) != PayloadResult::Ok) {
            ++report.not_ok_copy;
            continue;
        }
        Stamp s;
        std::memcpy(&s, buffer.data(), sizeof s);
        if (event.payload_size != sizeof s + s.length || s.seqno != event.seqno ||
            s.checksum != stamp_checksum(s, buffer.data() + sizeof s))
            ++report.bad_checksum;
    }
    report.sleeps = bell.sleeps();
    report.finished = 1;
    ::_exit(0);
}

pid_t spawn(auto&& body) {
    const pid_t pid = ::fork();
    if (pid == 0) body();
    return pid;
}

TEST(WriterKillStress, ReadersFinishAndSeeEveryCommittedEventOnceAndEveryAbandonedSlot) {
    test::RingPair rings(test::small_params(kDescriptorShift, kPayloadShift));
    const MappedRing& ring = *rings.writer;
    const std::size_t report_bytes = sizeof(ReaderReport) * kReaders;
    void* shared = ::mmap(nullptr, report_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(shared, MAP_FAILED);
    auto* reports = static_cast<ReaderReport*>(shared);  // zero-filled by mmap

    std::vector<pid_t> readers;
    for (int i = 0; i < kReaders; ++i)
        readers.push_back(spawn([&, i] { run_reader(*rings.reader, reports[i]); }));

    // One writer killed at a known point between reserve and commit.
    int hold[2];
    ASSERT_EQ(::pipe(hold), 0);
    const pid_t held = spawn([&] { run_writer(ring, 1000, hold[1]); });
    std::uint64_t held_seqno = 0;
    ASSERT_EQ(::read(hold[0], &held_seqno, sizeof held_seqno), static_cast<ssize_t>(sizeof held_seqno));
    ::kill(held, SIGKILL);
    ::waitpid(held, nullptr, 0);
    ::close(hold[0]);
    ::close(hold[1]);

    std::mt19937 rng(12345);
    std::uint32_t next_id = 0;
    std::vector<pid_t> writers;
    for (int i = 0; i < kWriters; ++i)
        writers.push_back(spawn([&] { run_writer(ring, next_id, -1); }));
    next_id = kWriters;
    int kills = 1;
    while (kills < kKills + 1 && newest(ring) < kEventLimit) {
        sleep_for(std::chrono::milliseconds(10 + rng() % 50));
        const std::size_t victim = rng() % writers.size();
        ::kill(writers[victim], SIGKILL);
        int status = 0;
        ::waitpid(writers[victim], &status, 0);
        if (WIFSIGNALED(status)) ++kills;
        const std::uint32_t id = next_id++;
        writers[victim] = spawn([&, id] { run_writer(ring, id, -1); });
    }
    for (pid_t w : writers) {
        int status = 0;
        ::waitpid(w, &status, 0);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writer status " << status;
    }
    // The sentinel: the last event, so every dead slot has a later commit.
    Publisher publisher(ring);
    Reservation sentinel = publisher.reserve(8);
    sentinel.descriptor().event_type = kSentinelType;
    publisher.commit(sentinel);
    for (pid_t r : readers) {
        int status = 0;
        ::waitpid(r, &status, 0);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "reader status " << status;
    }

    // Ground truth from the ring (never lapped): committed iff it holds its seqno.
    std::uint64_t committed = 0, dead = 0;
    for (std::uint64_t seqno = 1; seqno < sentinel.seqno(); ++seqno) {
        // Relaxed: every writer has exited; this is a plain inspection.
        const bool is_committed =
            shared::load_relaxed(ring.descriptors()[(seqno - 1) & ring.descriptor_mask()].words[0]) == seqno;
        (is_committed ? committed : dead) += 1;
        for (int i = 0; i < kReaders; ++i) {
            ASSERT_EQ(reports[i].read[seqno], is_committed ? 1 : 0) << "reader " << i << " seqno " << seqno;
            ASSERT_EQ(reports[i].abandoned[seqno], is_committed ? 0 : 1) << "reader " << i << " seqno " << seqno;
        }
    }
    EXPECT_GE(dead, 1u);
    for (int i = 0; i < kReaders; ++i) {
        EXPECT_EQ(reports[i].finished, 1);
        EXPECT_EQ(reports[i].bad_checksum, 0u);
        EXPECT_EQ(reports[i].not_ok_copy, 0u);
        EXPECT_EQ(reports[i].gaps, 0u);
        EXPECT_EQ(reports[i].out_of_range, 0u);
    }
    std::cout << "[figures] events committed " << committed << ", verified by each of " << kReaders
              << " readers; writers killed " << kills << "; abandoned slots " << dead
              << " (all reported by every reader); reader doorbell sleeps " << reports[0].sleeps
              << ", " << reports[1].sleeps << "\n";
    ::munmap(shared, report_bytes);
}

}  // namespace
}  // namespace evring
