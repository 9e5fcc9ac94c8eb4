// A writer and a reader in two processes over one ring file. The reader is
// paused (SIGSTOP) while the writer laps it; when it resumes it must report a
// Gap whose lost count is exactly the number of sequence numbers it skipped.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include <gtest/gtest.h>

#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/publisher.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

constexpr std::uint16_t kDataType = 20;
constexpr std::uint16_t kEndType = 21;

// What the reader child reports through a pipe.
struct ReaderReport {
    std::uint64_t read;
    std::uint64_t lost;
    std::uint64_t gaps;
    std::uint64_t gap_count_mismatches;  // Gap's lost count != seqnos actually skipped
    std::uint64_t payload_mismatches;
    std::uint64_t last_seqno;
};

void write_all(int fd, const void* data, std::size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
        ssize_t n = ::write(fd, p, size);
        if (n <= 0) _exit(3);
        p += n;
        size -= static_cast<std::size_t>(n);
    }
}

[[noreturn]] void reader_child(const std::string& path, int ready_fd, int report_fd) {
    MappedRing ring = test::map_path(path, Access::ReadOnly);
    Iterator it(ring);
    it.seek(1);
    ReaderReport report{};
    std::uint64_t previous = 0;
    char ready = 'r';
    write_all(ready_fd, &ready, 1);
    EventDescriptor event{};
    for (;;) {
        NextResult r = it.try_next(event);
        if (r == NextResult::NotReady) continue;
        if (r == NextResult::Gap) {
            ++report.gaps;
            report.lost += it.last_gap_lost();
            // The iterator now expects previous + 1 + lost.
            if (it.next_seqno() != previous + 1 + it.last_gap_lost()) ++report.gap_count_mismatches;
            previous = it.next_seqno() - 1;
            continue;
        }
        ++report.read;
        if (event.seqno != previous + 1) ++report.gap_count_mismatches;
        previous = event.seqno;
        std::uint64_t value = 0;
        if (copy_payload(ring, event, &value, sizeof value) == PayloadResult::Ok && value != event.seqno * 3)
            ++report.payload_mismatches;
        if (event.event_type == kEndType) break;
    }
    report.last_seqno = previous;
    write_all(report_fd, &report, sizeof report);
    _exit(0);
}

void write_events(Publisher& publisher, std::uint64_t count, std::uint16_t type = kDataType) {
    for (std::uint64_t i = 0; i < count; ++i) {
        Reservation r = publisher.reserve(sizeof(std::uint64_t));
        r.descriptor().event_type = type;
        const std::uint64_t value = r.seqno() * 3;
        std::memcpy(r.payload(), &value, sizeof value);
        publisher.commit(r);
    }
}

TEST(CrossProcess, PausedReaderGetsAGapWithTheExactLostCount) {
    test::TempDir dir;
    const std::string path = dir.file("ring");
    ::close(test::create_ring_file(path, test::small_params(8, 16)));  // 256 descriptors
    int ready[2], report[2];
    ASSERT_EQ(::pipe(ready), 0);
    ASSERT_EQ(::pipe(report), 0);
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) reader_child(path, ready[1], report[1]);

    MappedRing ring = test::map_path(path, Access::ReadWrite);
    Publisher publisher(ring);
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    write_events(publisher, 100);  // read normally
    // Wait until the reader has caught up, observed through the ring: pause
    // it only once it is idle so the lap below is the only loss.
    ASSERT_EQ(::kill(child, SIGSTOP), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, WUNTRACED), child);
    write_events(publisher, 256 * 10);  // laps the paused reader ten times
    ASSERT_EQ(::kill(child, SIGCONT), 0);
    write_events(publisher, 50);
    write_events(publisher, 1, kEndType);
    const std::uint64_t total = 100 + 2560 + 50 + 1;

    ReaderReport result{};
    ASSERT_EQ(::read(report[0], &result, sizeof result), static_cast<ssize_t>(sizeof result));
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_GE(result.gaps, 1u);
    EXPECT_GT(result.lost, 2560u - 256u) << "at least the lapped events are lost";
    EXPECT_EQ(result.gap_count_mismatches, 0u);
    EXPECT_EQ(result.read + result.lost, total);
    EXPECT_EQ(result.last_seqno, total);
    EXPECT_EQ(result.payload_mismatches, 0u);
    for (int fd : {ready[0], ready[1], report[0], report[1]}) ::close(fd);
}

}  // namespace
}  // namespace evring
