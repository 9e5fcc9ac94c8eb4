// Named reader positions (evring/cursor/named_position.hpp): the round trip,
// files that are damaged, foreign or forged, modes, and commits killed at
// any point.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cursor/named_position_format.hpp"
#include "cursor/named_position.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

NamedPosition sample(const std::string& name = "billing") {
    NamedPosition p;
    p.name = name;
    p.ring = "/dev/hugepages/evring/demo";
    p.kind = SourceKind::Ring;
    p.instance = 0x1234567890abcdefull;
    p.last_seqno = {41};
    p.instance_ended = true;
    p.commit_nanos = 1'700'000'000'000'000'000ull;
    return p;
}

std::vector<char> read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string load_error(const std::string& dir, const std::string& name) {
    auto loaded = load_named_position(dir, name);
    return loaded ? std::string() : loaded.error().message();
}

TEST(NamedPosition, CommittedPositionLoadsBackWhole) {
    test::TempDir dir;
    auto p = sample();
    p.kind = SourceKind::RingSet;
    p.last_seqno = {7, 0, 9000};
    p.member_instance = {0xa1, 0, 0xc3};  // a set's: the instance of each member's position
    ASSERT_TRUE(commit_named_position(dir.path(), p).ok());
    auto loaded = load_named_position(dir.path(), "billing");
    ASSERT_TRUE(loaded.ok()) << loaded.error().message();
    ASSERT_TRUE(loaded->has_value());
    const NamedPosition& q = **loaded;
    EXPECT_EQ(q.name, p.name);
    EXPECT_EQ(q.ring, p.ring);
    EXPECT_EQ(q.kind, SourceKind::RingSet);
    EXPECT_EQ(q.instance, p.instance);
    EXPECT_EQ(q.last_seqno, p.last_seqno);
    EXPECT_EQ(q.member_instance, p.member_instance);
    EXPECT_TRUE(q.instance_ended);
    EXPECT_EQ(q.commit_nanos, p.commit_nanos);
}

TEST(NamedPosition, UnknownNameHasNoPosition) {
    test::TempDir dir;
    auto loaded = load_named_position(dir.path(), "nobody");
    ASSERT_TRUE(loaded.ok());
    EXPECT_FALSE(loaded->has_value());
}

TEST(NamedPosition, FileIsPrivateToItsOwner) {
    test::TempDir dir;
    ASSERT_TRUE(commit_named_position(dir.path(), sample()).ok());
    struct stat st {};
    ASSERT_EQ(::stat(named_position_path(dir.path(), "billing").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    // A file others may write is not trusted.
    ::chmod(named_position_path(dir.path(), "billing").c_str(), 0644);
    const auto error = load_error(dir.path(), "billing");
    EXPECT_NE(error.find("mode 0644"), std::string::npos) << error;
    EXPECT_NE(error.find("billing.pos"), std::string::npos) << error;
}

TEST(NamedPosition, FileOfAnotherUserIsRefusedAsForged) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
    test::TempDir dir;
    ASSERT_TRUE(commit_named_position(dir.path(), sample()).ok());
    ASSERT_EQ(::chown(named_position_path(dir.path(), "billing").c_str(), 12345, 12345), 0);
    const auto error = load_error(dir.path(), "billing");
    EXPECT_NE(error.find("belongs to uid 12345"), std::string::npos) << error;
}

TEST(NamedPosition, EveryFlippedByteIsRefusedByName) {
    test::TempDir dir;
    ASSERT_TRUE(commit_named_position(dir.path(), sample()).ok());
    const std::string path = named_position_path(dir.path(), "billing");
    const auto good = read_bytes(path);
    for (std::size_t i = 0; i < good.size(); ++i) {
        auto bad = good;
        bad[i] = static_cast<char>(bad[i] ^ 0x40);
        write_bytes(path, bad);
        const auto error = load_error(dir.path(), "billing");
        ASSERT_FALSE(error.empty()) << "byte " << i << " flipped was accepted";
        EXPECT_NE(error.find(path), std::string::npos) << error;
    }
}

TEST(NamedPosition, TruncatedFileIsDamaged) {
    test::TempDir dir;
    ASSERT_TRUE(commit_named_position(dir.path(), sample()).ok());
    const std::string path = named_position_path(dir.path(), "billing");
    const auto good = read_bytes(path);
    for (std::size_t size : {std::size_t{0}, std::size_t{8}, std::size_t{30}, good.size() - 1}) {
        write_bytes(path, std::vector<char>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(size)));
        const auto error = load_error(dir.path(), "billing");
        EXPECT_FALSE(error.empty()) << size;
        EXPECT_NE(error.find(path), std::string::npos) << error;
    }
}

TEST(NamedPosition, ForeignFileIsRefused) {
    test::TempDir dir;
    const std::string path = named_position_path(dir.path(), "billing");
    write_bytes(path, {'{', '"', 'a', '"', ':', '1', '}', '\n'});
    ::chmod(path.c_str(), 0600);
    EXPECT_NE(load_error(dir.path(), "billing").find("foreign"), std::string::npos);
    // A huge file is refused before it is read.
    std::vector<char> big(detail::kMaxNamedFile + 10, 'x');
    write_bytes(path, big);
    EXPECT_NE(load_error(dir.path(), "billing").find("foreign"), std::string::npos);
    // Not a regular file.
    ::unlink(path.c_str());
    ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
    EXPECT_NE(load_error(dir.path(), "billing").find("FIFO"), std::string::npos);
}

TEST(NamedPosition, FileRenamedUnderAnotherNameIsRefusedAsForged) {
    test::TempDir dir;
    ASSERT_TRUE(commit_named_position(dir.path(), sample("alice")).ok());
    ASSERT_EQ(::rename(named_position_path(dir.path(), "alice").c_str(),
                       named_position_path(dir.path(), "bob").c_str()), 0);
    const auto error = load_error(dir.path(), "bob");
    EXPECT_NE(error.find("reader 'alice', not 'bob'"), std::string::npos) << error;
}

TEST(NamedPosition, NewerFormatVersionIsNamed) {
    test::TempDir dir;
    ASSERT_TRUE(commit_named_position(dir.path(), sample()).ok());
    const std::string path = named_position_path(dir.path(), "billing");
    auto bytes = read_bytes(path);
    bytes[8] = 2;
    write_bytes(path, bytes);
    EXPECT_NE(load_error(dir.path(), "billing").find("format version 2"), std::string::npos);
}

TEST(NamedPosition, BadNamesAreRefused) {
    for (const char* name : {"", ".hidden", "a/b", "../x", "tab\there"})
        EXPECT_FALSE(check_reader_name(name).ok()) << name;
    EXPECT_FALSE(check_reader_name(std::string(65, 'a')).ok());
    EXPECT_TRUE(check_reader_name("bill-2.v1_x").ok());
}

TEST(NamedPosition, StateDirectoryIsCreatedPrivateAndRefusedWhenOpen) {
    test::TempDir dir;
    const std::string state = dir.file("a/b/readers");
    ::setenv("EVRING_STATE_DIR", state.c_str(), 1);
    auto made = reader_state_dir();
    ASSERT_TRUE(made.ok()) << made.error().message();
    EXPECT_EQ(*made, state);
    struct stat st {};
    ASSERT_EQ(::stat(state.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700u);
    ::chmod(state.c_str(), 0777);
    auto open = reader_state_dir();
    ASSERT_FALSE(open.ok());
    EXPECT_NE(open.error().message().find("mode 0777"), std::string::npos);
    ::unsetenv("EVRING_STATE_DIR");
}

TEST(NamedPosition, ListShowsEveryNameAndNamesDamagedFiles) {
    test::TempDir dir;
    ASSERT_TRUE(commit_named_position(dir.path(), sample("b")).ok());
    ASSERT_TRUE(commit_named_position(dir.path(), sample("a")).ok());
    write_bytes(named_position_path(dir.path(), "c"), {'x'});
    std::vector<std::string> problems;
    const auto all = list_named_positions(dir.path(), problems);
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0].name, "a");
    EXPECT_EQ(all[1].name, "b");
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find("c.pos"), std::string::npos);
}

// A process committing ever larger positions, killed at random points: the
// file always loads, and holds at least what the last finished commit said.
TEST(NamedPosition, KilledCommitterLeavesTheLastFinishedCommitOrANewerOne) {
    test::TempDir dir;
    for (int round = 0; round < 20; ++round) {
        int fds[2];
        ASSERT_EQ(::pipe(fds), 0);
        const pid_t child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            ::close(fds[0]);
            auto p = sample();
            for (std::uint64_t seqno = 1;; ++seqno) {
                p.last_seqno = {seqno + 1000 * static_cast<std::uint64_t>(round)};
                if (!commit_named_position(dir.path(), p).ok()) ::_exit(3);
                if (::write(fds[1], &p.last_seqno[0], sizeof(std::uint64_t)) != sizeof(std::uint64_t)) ::_exit(4);
            }
        }
        ::close(fds[1]);
        std::uint64_t reported = 0;
        // A few commits, bounded by a 10 s wait for each.
        for (int i = 0; i < 1 + round % 5; ++i) {
            pollfd pfd{fds[0], POLLIN, 0};
            ASSERT_EQ(::poll(&pfd, 1, 10'000), 1);
            ASSERT_EQ(::read(fds[0], &reported, sizeof reported), static_cast<ssize_t>(sizeof reported));
        }
        ::kill(child, SIGKILL);
        int status = 0;
        ::waitpid(child, &status, 0);
        ::close(fds[0]);
        auto loaded = load_named_position(dir.path(), "billing");
        ASSERT_TRUE(loaded.ok()) << loaded.error().message();
        ASSERT_TRUE(loaded->has_value());
        EXPECT_GE((*loaded)->last_seqno[0], reported);
    }
}

}  // namespace
}  // namespace evring
