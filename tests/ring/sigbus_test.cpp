// A ring file truncated under a reader: guarded reads return an error, the
// process survives, and unguarded faults still behave as before.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include <gtest/gtest.h>

#include "evring/ring/iterator.hpp"
#include "evring/ring/publisher.hpp"
#include "ring/sigbus_guard.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

void record_events(const MappedRing& ring, int count) {
    Publisher publisher(ring);
    for (int i = 0; i < count; ++i) {
        auto r = publisher.reserve(32);
        std::memset(r.payload(), i, 32);
        publisher.commit(r);
    }
}

void truncate_file(const std::string& path, off_t size) {
    ASSERT_EQ(::truncate(path.c_str(), size), 0) << std::strerror(errno);
}

class SigbusGuard : public ::testing::Test {
protected:
    void SetUp() override {
        auto s = install_sigbus_handler();
        ASSERT_TRUE(s.ok()) << s.error().message();
    }
};

TEST_F(SigbusGuard, GuardedReadsOfAnIntactRingSucceed) {
    test::RingPair rings;
    record_events(*rings.writer, 3);
    Iterator it(*rings.reader);
    it.seek(1);
    EventDescriptor event{};
    auto next = try_next_guarded(it, event);
    ASSERT_TRUE(next.ok()) << next.error().message();
    ASSERT_EQ(*next, NextResult::Success);
    char buf[32];
    auto copied = copy_payload_guarded(*rings.reader, event, buf, sizeof buf);
    ASSERT_TRUE(copied.ok());
    EXPECT_EQ(*copied, PayloadResult::Ok);
}

TEST_F(SigbusGuard, ReadingARingTruncatedUnderItsMappingIsAnErrorNotACrash) {
    test::RingPair rings;
    record_events(*rings.writer, 3);
    Iterator it(*rings.reader);
    it.seek(1);
    EventDescriptor event{};
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    truncate_file(rings.path, 0);

    auto next = try_next_guarded(it, event);
    ASSERT_FALSE(next.ok());
    EXPECT_EQ(next.error().errno_value(), EFAULT);
    EXPECT_NE(next.error().message().find("truncated while mapped"), std::string::npos)
        << next.error().message();
    EXPECT_NE(next.error().message().find(rings.path), std::string::npos);

    char buf[32];
    auto copied = copy_payload_guarded(*rings.reader, event, buf, sizeof buf);
    ASSERT_FALSE(copied.ok());
    EXPECT_NE(copied.error().message().find("copying a payload"), std::string::npos);
}

TEST_F(SigbusGuard, EveryFaultIsCaughtNotOnlyTheFirst) {
    // A handler that left SIGBUS blocked would make the second fault fatal.
    test::RingPair rings;
    record_events(*rings.writer, 1);
    Iterator it(*rings.reader);  // its constructor reads the header and the newest slots
    truncate_file(rings.path, 4096);  // the header page survives, descriptors do not
    EventDescriptor event{};
    for (int i = 0; i < 100; ++i) {
        it.seek(1);
        ASSERT_FALSE(try_next_guarded(it, event).ok()) << "fault " << i;
        ASSERT_FALSE(reset_guarded(it).ok()) << "fault " << i;
    }
    EXPECT_TRUE(guard_sigbus([&] { (void)it.newest_seqno(); })) << "the header page is still there";
}

TEST_F(SigbusGuard, GuardsNestAndTheInnerOneCatchesItsOwnFault) {
    test::RingPair rings;
    record_events(*rings.writer, 1);
    Iterator it(*rings.reader);  // its constructor reads the header and the newest slots
    truncate_file(rings.path, 0);
    bool inner_caught = false;
    const bool outer_ok = guard_sigbus([&] {
        inner_caught = !guard_sigbus([&] { (void)it.newest_seqno(); });
    });
    EXPECT_TRUE(outer_ok);
    EXPECT_TRUE(inner_caught);
}

TEST_F(SigbusGuard, UnguardedFaultStillKillsTheProcessWithSigbus) {
    test::RingPair rings;
    record_events(*rings.writer, 1);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        truncate_file(rings.path, 0);
        Iterator it(*rings.reader);
        (void)it.newest_seqno();  // unguarded: must die as without the handler
        ::_exit(0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
#if defined(__SANITIZE_ADDRESS__)
    // The handler before ours was AddressSanitizer's: it reports and exits 1.
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << "status " << status;
#else
    ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
    EXPECT_EQ(WTERMSIG(status), SIGBUS);
#endif
}

}  // namespace
}  // namespace evring
