// Ring ownership within one process: creation, removal, zombies, shared
// writers, bad input, and the reader's view of its writer.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "files/ring_list.hpp"
#include "evring/ring/ring_reader.hpp"
#include "evring/ring/ring_writer.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::TempDir;

Result<RingWriter> create(const std::string& path, WriterProcesses mode = WriterProcesses::One,
                          bool keep = false, unsigned descriptor_shift = 8,
                          RingContent content = test::test_content()) {
    CreateOptions options;
    options.mode = mode;
    options.keep_on_close = keep;
    RingSpec spec = test::small_spec(path, descriptor_shift);
    spec.content = content;
    return RingWriter::create(spec, options);
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

ino_t inode_of(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st.st_ino;
}

std::string contents(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(RingWriter, CreatesARingAndRemovesItOnClose) {
    TempDir dir;
    const std::string path = dir.file("ring");
    {
        auto writer = create(path);
        ASSERT_TRUE(writer.ok()) << writer.error().message();
        EXPECT_EQ(writer->path(), path);
        EXPECT_TRUE(writer->created());
        EXPECT_FALSE(writer->reclaimed_zombie());
        EXPECT_EQ(writer->ring().header().size.descriptor_capacity, 256u);
        EXPECT_TRUE(exists(path));
        EXPECT_FALSE(exists(path + "." + std::to_string(::getpid())));  // the temp was renamed
    }
    EXPECT_FALSE(exists(path));
}

TEST(RingWriter, ResolvesPureNamesInTheRingDirectory) {
    TempDir dir;
    CreateOptions options;
    options.directory.read_environment = false;
    options.directory.ring_dir_override = dir.file("rings");
    auto writer = RingWriter::create(test::small_spec("pure-name"), options);
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    EXPECT_EQ(writer->path(), dir.file("rings") + "/pure-name");
    auto reader = RingReader::open("pure-name", options.directory);
    ASSERT_TRUE(reader.ok()) << reader.error().message();
}

TEST(RingWriter, CreatesTheFileWithTheRequestedModeWhateverTheUmask) {
    TempDir dir;
    mode_t old_umask = ::umask(077);
    auto writer = create(dir.file("a"));
    CreateOptions options;
    options.file_mode = 0640;
    auto other = RingWriter::create(test::small_spec(dir.file("b")), options);
    ::umask(old_umask);
    ASSERT_TRUE(writer.ok() && other.ok());
    struct stat st {};
    ASSERT_EQ(::stat(dir.file("a").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0664u);
    ASSERT_EQ(::stat(dir.file("b").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST(RingWriter, SecondExclusiveWriterFailsNamingTheOwnersPid) {
    TempDir dir;
    auto first = create(dir.file("ring"));
    ASSERT_TRUE(first.ok());
    auto second = create(dir.file("ring"));
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.error().errno_value(), EBUSY);
    EXPECT_NE(second.error().message().find("(pid " + std::to_string(::getpid()) + ")"),
              std::string::npos)
        << second.error().message();
    EXPECT_FALSE(exists(dir.file("ring") + "." + std::to_string(::getpid())));  // temp cleaned up
}

// The live writer is found before a temporary ring of the asked size is
// made: a ring this file system could never hold still gets EBUSY (it got
// ENOSPC when the temporary ring came first), and a ring set's writer skips
// a held member without allocating its pages.
TEST(RingWriter, NameHeldByALiveWriterFailsBeforeAnyTemporaryRing) {
    TempDir dir;
    auto first = create(dir.file("ring"));
    ASSERT_TRUE(first.ok());
    CreateOptions options;
    options.mode = WriterProcesses::One;
    auto second = RingWriter::create(test::small_spec(dir.file("ring"), 8, kMaxPayloadBufShift), options);
    ASSERT_FALSE(second.ok());
    EXPECT_EQ(second.error().errno_value(), EBUSY) << second.error().message();
    EXPECT_FALSE(exists(dir.file("ring") + "." + std::to_string(::getpid())));
}

TEST(RingWriter, KeptRingIsAZombieThatTheNextWriterReclaims) {
    TempDir dir;
    const std::string path = dir.file("ring");
    ino_t old_inode = 0;
    {
        auto writer = create(path, WriterProcesses::One, /*keep=*/true);
        ASSERT_TRUE(writer.ok());
        old_inode = inode_of(path);
    }
    ASSERT_TRUE(exists(path));
    auto reader = RingReader::open(path);
    ASSERT_TRUE(reader.ok()) << reader.error().message();
    EXPECT_FALSE(reader->writer_alive());
    EXPECT_TRUE(reader->writer_pids().empty());
    EXPECT_EQ(reader->writer_exit_fd(), -1);

    auto next = create(path);
    ASSERT_TRUE(next.ok()) << next.error().message();
    EXPECT_TRUE(next->reclaimed_zombie());
    EXPECT_NE(inode_of(path), old_inode);
}

TEST(RingWriter, LeavesAFileThatReplacedItsRingAlone) {
    TempDir dir;
    const std::string path = dir.file("ring");
    auto writer = create(path);
    ASSERT_TRUE(writer.ok());
    ASSERT_EQ(::rename(path.c_str(), dir.file("moved").c_str()), 0);
    { std::ofstream(path) << "someone else's file"; }
    writer = create(dir.file("other"));  // destroys the first writer
    EXPECT_EQ(contents(path), "someone else's file");
    EXPECT_TRUE(exists(dir.file("moved")));
}

TEST(RingWriter, RemovesAStaleTemporaryFileWithItsOwnPid) {
    TempDir dir;
    const std::string temp = dir.file("ring") + "." + std::to_string(::getpid());
    { std::ofstream(temp) << "left by a dead process that had our pid"; }
    auto writer = create(dir.file("ring"));
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    EXPECT_FALSE(exists(temp));
}

TEST(RingWriter, RefusesASymbolicLinkAtTheRingPath) {
    TempDir dir;
    auto target = create(dir.file("target"), WriterProcesses::One, true);
    ASSERT_TRUE(target.ok());
    target = create(dir.file("unused"));  // release "target", leaving a zombie
    ASSERT_EQ(::symlink(dir.file("target").c_str(), dir.file("link").c_str()), 0);
    auto writer = create(dir.file("link"));
    ASSERT_FALSE(writer.ok());
    EXPECT_EQ(writer.error().errno_value(), ELOOP);
    EXPECT_NE(writer.error().message().find("symbolic link"), std::string::npos);
    auto reader = RingReader::open(dir.file("link"));
    ASSERT_FALSE(reader.ok());
    EXPECT_EQ(reader.error().errno_value(), ELOOP);
    struct stat st {};
    ASSERT_EQ(::lstat(dir.file("link").c_str(), &st), 0);
    EXPECT_TRUE(S_ISLNK(st.st_mode));  // not replaced
}

TEST(RingWriter, RefusesADirectoryAtTheRingPath) {
    TempDir dir;
    ASSERT_EQ(::mkdir(dir.file("ring").c_str(), 0755), 0);
    auto writer = create(dir.file("ring"));
    ASSERT_FALSE(writer.ok());
    EXPECT_EQ(writer.error().errno_value(), EISDIR) << writer.error().message();
    EXPECT_NE(writer.error().message().find("is a directory"), std::string::npos);
    auto reader = RingReader::open(dir.file("ring"));
    ASSERT_FALSE(reader.ok());
    EXPECT_EQ(reader.error().errno_value(), EISDIR);
}

TEST(RingWriter, RefusesAFifoAtTheRingPathWithoutBlocking) {
    TempDir dir;
    ASSERT_EQ(::mkfifo(dir.file("ring").c_str(), 0644), 0);
    auto writer = create(dir.file("ring"));
    ASSERT_FALSE(writer.ok());
    EXPECT_NE(writer.error().message().find("is a FIFO, not a regular file"), std::string::npos)
        << writer.error().message();
    auto reader = RingReader::open(dir.file("ring"));
    ASSERT_FALSE(reader.ok());
    EXPECT_NE(reader.error().message().find("is a FIFO, not a regular file"), std::string::npos)
        << reader.error().message();
}

TEST(RingWriter, RefusesToReplaceAFileThatIsNotARing) {
    TempDir dir;
    const std::string path = dir.file("notes.txt");
    { std::ofstream(path) << "precious data, not a ring"; }
    auto writer = create(path);
    ASSERT_FALSE(writer.ok());
    EXPECT_NE(writer.error().message().find("is not an event ring"), std::string::npos)
        << writer.error().message();
    EXPECT_EQ(contents(path), "precious data, not a ring");
    auto reader = RingReader::open(path);
    ASSERT_FALSE(reader.ok());
    EXPECT_NE(reader.error().message().find("truncated"), std::string::npos) << reader.error().message();
}

TEST(RingWriter, NamesAMissingDirectory) {
    auto writer = create("/nonexistent-evring-dir/ring");
    ASSERT_FALSE(writer.ok());
    EXPECT_EQ(writer.error().errno_value(), ENOENT);
    EXPECT_NE(writer.error().message().find("'/nonexistent-evring-dir' of ring path"), std::string::npos)
        << writer.error().message();
    auto reader = RingReader::open("/nonexistent-evring-dir/ring");
    ASSERT_FALSE(reader.ok());
    EXPECT_EQ(reader.error().errno_value(), ENOENT);
}

TEST(RingWriter, SharedWritersJoinOneRingAndTheLastRemovesIt) {
    TempDir dir;
    const std::string path = dir.file("ring");
    auto first = create(path, WriterProcesses::Many);
    ASSERT_TRUE(first.ok()) << first.error().message();
    auto second = create(path, WriterProcesses::Many);
    ASSERT_TRUE(second.ok()) << second.error().message();
    EXPECT_TRUE(first->created());
    EXPECT_FALSE(second->created());
    EXPECT_FALSE(second->reclaimed_zombie());
    EXPECT_EQ(inode_of(first->ring().path()), inode_of(path));
    // Both map the same memory.
    first->ring().header().control.next_payload_byte = 12345;
    EXPECT_EQ(second->ring().header().control.next_payload_byte, 12345u);

    auto exclusive = create(path);
    ASSERT_FALSE(exclusive.ok());
    EXPECT_EQ(exclusive.error().errno_value(), EBUSY);
    EXPECT_NE(exclusive.error().message().find("shared writers"), std::string::npos)
        << exclusive.error().message();

    first = create(dir.file("elsewhere"));  // the first shared writer closes
    EXPECT_TRUE(exists(path));
    second = create(dir.file("elsewhere2"));  // the last one closes
    EXPECT_FALSE(exists(path));
}

TEST(RingWriter, SharedWriterRefusesARingWithOtherParams) {
    TempDir dir;
    auto first = create(dir.file("ring"), WriterProcesses::Many);
    ASSERT_TRUE(first.ok());
    auto bigger = create(dir.file("ring"), WriterProcesses::Many, false, 9);
    ASSERT_FALSE(bigger.ok());
    EXPECT_EQ(bigger.error().errno_value(), EPROTO);
    EXPECT_NE(bigger.error().message().find("has 256 descriptors"), std::string::npos)
        << bigger.error().message();
    RingContent other_type = test::test_content();
    other_type.content_type = 2;
    auto wrong = create(dir.file("ring"), WriterProcesses::Many, false, 8, other_type);
    ASSERT_FALSE(wrong.ok());
    EXPECT_EQ(wrong.error().errno_value(), EPROTO);
}

TEST(RingWriter, SharedWriterCannotJoinAnExclusiveRing) {
    TempDir dir;
    auto owner = create(dir.file("ring"));
    ASSERT_TRUE(owner.ok());
    auto shared = create(dir.file("ring"), WriterProcesses::Many);
    ASSERT_FALSE(shared.ok());
    EXPECT_EQ(shared.error().errno_value(), EBUSY);
    EXPECT_NE(shared.error().message().find("(pid " + std::to_string(::getpid()) + ")"),
              std::string::npos)
        << shared.error().message();
}

TEST(RingReader, SeesItsLiveWriterByLockAndPid) {
    TempDir dir;
    auto writer = create(dir.file("ring"));
    ASSERT_TRUE(writer.ok());
    auto reader = RingReader::open(dir.file("ring"));
    ASSERT_TRUE(reader.ok()) << reader.error().message();
    EXPECT_EQ(reader->ring().access(), Access::ReadOnly);
    EXPECT_TRUE(reader->writer_alive());
    EXPECT_EQ(reader->writer_pids(), std::vector<pid_t>{::getpid()});
    EXPECT_GE(reader->writer_exit_fd(), 0);
    // The probe did not disturb the writer: its lock is still exclusive.
    auto again = create(dir.file("ring"));
    EXPECT_FALSE(again.ok());
}

TEST(ListRings, ReportsRingsZombiesAndStrangersButNotLiveTemporaries) {
    TempDir dir;
    auto live = create(dir.file("live"));
    ASSERT_TRUE(live.ok());
    { auto kept = create(dir.file("zombie"), WriterProcesses::One, true); }
    { std::ofstream(dir.file("stranger")) << "hello"; }
    ASSERT_EQ(::mkdir(dir.file("subdir").c_str(), 0755), 0);
    // A temporary file of a live writer (us) and one of a dead writer.
    const std::string live_temp = dir.file("wip." + std::to_string(::getpid()));
    int temp_fd = ::open(live_temp.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(temp_fd, 0);
    ASSERT_EQ(::flock(temp_fd, LOCK_EX), 0);
    { std::ofstream(dir.file("dead.4194303")) << ""; }

    auto listed = list_rings(dir.path() + "/");
    ::close(temp_fd);
    ASSERT_TRUE(listed.ok()) << listed.error().message();
    ASSERT_EQ(listed->size(), 4u);
    const auto& dead = (*listed)[0];
    const auto& live_info = (*listed)[1];
    const auto& stranger = (*listed)[2];
    const auto& zombie = (*listed)[3];
    EXPECT_EQ(dead.path, dir.file("dead.4194303"));
    EXPECT_FALSE(dead.header.has_value());
    EXPECT_EQ(live_info.path, dir.file("live"));
    ASSERT_TRUE(live_info.header.has_value()) << live_info.error;
    EXPECT_TRUE(live_info.writer_alive);
    EXPECT_EQ(live_info.writer_pids, std::vector<pid_t>{::getpid()});
    EXPECT_EQ(stranger.path, dir.file("stranger"));
    EXPECT_NE(stranger.error.find("too short"), std::string::npos) << stranger.error;
    EXPECT_EQ(zombie.path, dir.file("zombie"));
    ASSERT_TRUE(zombie.header.has_value()) << zombie.error;
    EXPECT_FALSE(zombie.writer_alive);
    EXPECT_TRUE(zombie.writer_pids.empty());
}

}  // namespace
}  // namespace evring
