// Ring ownership across processes: racing writers, a killed writer, shared
// writers in two processes, and a reader with only read permission.
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <thread>
#include <vector>
#include <string>

#include <gtest/gtest.h>

#include "files/ring_list.hpp"
#include "evring/ring/ring_reader.hpp"
#include "evring/ring/ring_writer.hpp"
#include "support/child_process.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::exit_code_of;
using test::Pipe;
using test::spawn;
using test::TempDir;

Result<RingWriter> create(const std::string& path, WriterProcesses mode = WriterProcesses::One,
                          bool keep = false) {
    CreateOptions options;
    options.mode = mode;
    options.keep_on_close = keep;
    return RingWriter::create(test::small_spec(path), options);
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

TEST(WriterRace, ExactlyOneOfTwoWritersWinsAndTheLoserNamesTheWinner) {
    TempDir dir;
    constexpr int kRounds = 40;
    for (int round = 0; round < kRounds; ++round) {
        const std::string path = dir.file("race-" + std::to_string(round));
        const bool over_zombie = round % 2 == 1;
        if (over_zombie) {
            auto kept = create(path, WriterProcesses::One, /*keep=*/true);
            ASSERT_TRUE(kept.ok()) << kept.error().message();
        }
        Pipe start;
        Pipe hold;
        Pipe reports[2];
        pid_t children[2];
        for (int i = 0; i < 2; ++i) {
            children[i] = spawn([&, i] {
                start.close_write();
                hold.close_write();
                reports[1 - i].close_write();
                start.wait_for_close();  // released together
                auto writer = create(path);
                reports[i].send(writer.ok() ? "won" : "lost: " + writer.error().message());
                reports[i].close_write();
                if (writer.ok()) hold.wait_for_close();  // keep the ring until both reported
                return 0;
            });
        }
        start.close_write();
        for (Pipe& p : reports) p.close_write();
        std::string outcome[2] = {reports[0].receive_all(), reports[1].receive_all()};
        hold.close_write();
        for (pid_t child : children) EXPECT_EQ(exit_code_of(child), 0);

        const int winners = (outcome[0] == "won") + (outcome[1] == "won");
        ASSERT_EQ(winners, 1) << "round " << round << ": " << outcome[0] << " / " << outcome[1];
        const int winner = outcome[0] == "won" ? 0 : 1;
        const std::string& loss = outcome[1 - winner];
        EXPECT_NE(loss.find("(pid " + std::to_string(children[winner]) + ")"), std::string::npos)
            << "round " << round << (over_zombie ? " (over a zombie)" : "") << ": " << loss;
        EXPECT_FALSE(exists(path)) << "the winner removes its ring when it exits";
    }
}

TEST(WriterDeath, ReaderNoticesAKilledWriterAndTheNextWriterReclaimsTheZombie) {
    TempDir dir;
    const std::string path = dir.file("ring");
    Pipe ready;
    pid_t child = spawn([&]() -> int {
        ready.close_read();
        auto writer = create(path);
        ready.send(writer.ok() ? "ok" : writer.error().message());
        ready.close_write();
        for (;;) ::pause();
    });
    ready.close_write();
    ASSERT_EQ(ready.receive_all(), "ok");

    auto reader = RingReader::open(path);
    ASSERT_TRUE(reader.ok()) << reader.error().message();
    EXPECT_TRUE(reader->writer_alive());
    EXPECT_EQ(reader->writer_pids(), std::vector<pid_t>{child});
    ASSERT_GE(reader->writer_exit_fd(), 0);
    pollfd exit_poll{reader->writer_exit_fd(), POLLIN, 0};
    EXPECT_EQ(::poll(&exit_poll, 1, 0), 0) << "the writer is still running";

    ASSERT_EQ(::kill(child, SIGKILL), 0);
    // The one timing requirement: a follower learns of the death
    // within 100 ms.
    EXPECT_EQ(::poll(&exit_poll, 1, 100), 1) << "no exit notice within 100 ms";
    EXPECT_FALSE(reader->writer_alive());
    EXPECT_TRUE(reader->writer_pids().empty());
    EXPECT_EQ(exit_code_of(child), 128 + SIGKILL);

    ASSERT_TRUE(exists(path)) << "a killed writer leaves its ring behind";
    auto listed = list_rings(dir.path());
    ASSERT_TRUE(listed.ok());
    ASSERT_EQ(listed->size(), 1u);
    EXPECT_FALSE((*listed)[0].writer_alive);

    auto next = create(path);
    ASSERT_TRUE(next.ok()) << next.error().message();
    EXPECT_TRUE(next->reclaimed_zombie());
}

TEST(SharedWriters, TwoProcessesShareARingAndTheLastToLeaveRemovesIt) {
    TempDir dir;
    const std::string path = dir.file("ring");
    auto mine = create(path, WriterProcesses::Many);
    ASSERT_TRUE(mine.ok()) << mine.error().message();
    Pipe joined;
    Pipe leave;
    pid_t child = spawn([&] {
        joined.close_read();
        leave.close_write();
        auto writer = create(path, WriterProcesses::Many);
        joined.send(writer.ok() && !writer->created() ? "joined" : "failed");
        joined.close_write();
        leave.wait_for_close();
        return 0;
    });
    joined.close_write();
    leave.close_read();
    ASSERT_EQ(joined.receive_all(), "joined");

    auto reader = RingReader::open(path);
    ASSERT_TRUE(reader.ok());
    auto pids = reader->writer_pids();
    std::sort(pids.begin(), pids.end());
    std::vector<pid_t> expected{::getpid(), child};
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(pids, expected);
    EXPECT_TRUE(reader->writer_alive());
    EXPECT_EQ(reader->writer_exit_fd(), -1) << "shared rings have no single writer to watch";

    mine = create(dir.file("elsewhere"));  // our shared writer closes first
    EXPECT_TRUE(exists(path));
    EXPECT_TRUE(reader->writer_alive());
    leave.close_write();
    EXPECT_EQ(exit_code_of(child), 0);
    EXPECT_FALSE(exists(path));
    EXPECT_FALSE(reader->writer_alive());
}

TEST(SharedWriters, ThreadsOfOneProcessAllJoinOneRing) {
    TempDir dir;
    const std::string path = dir.file("ring");
    constexpr int kThreads = 4;
    std::vector<std::optional<Result<RingWriter>>> writers(kThreads);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i)
        threads.emplace_back([&, i] { writers[i].emplace(create(path, WriterProcesses::Many)); });
    for (auto& t : threads) t.join();
    int created = 0;
    for (auto& w : writers) {
        ASSERT_TRUE(w->ok()) << w->error().message();
        created += (*w)->created();
    }
    EXPECT_EQ(created, 1);
}

TEST(ReadOnlyReader, SeesTheWriterWithOnlyReadPermission) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch to an unprivileged user";
    TempDir dir;
    ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
    const std::string path = dir.file("ring");
    auto writer = create(path);
    ASSERT_TRUE(writer.ok());
    pid_t child = spawn([&] {
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) return 10;
        ::prctl(PR_SET_DUMPABLE, 1);  // as an ordinary process started by that user
        auto reader = RingReader::open(path);
        if (!reader) return 11;
        if (reader->ring().access() != Access::ReadOnly) return 12;
        if (!reader->writer_alive()) return 13;
        auto intruder = create(path);
        if (intruder.ok()) return 14;
        return 0;
    });
    EXPECT_EQ(exit_code_of(child), 0);
    // The reader's probes left the writer's exclusive lock in place.
    auto again = create(path);
    EXPECT_FALSE(again.ok());
}

}  // namespace
}  // namespace evring
