// Recordings compressed on several threads (RecordingOptions::threads,
// recording_sink.hpp): blocks packed in parallel are written in order, and
// the file is the one a single thread writes. Deterministic first (pack then
// seal is encode, on one thread), then with real threads, many times, with
// blocks whose compression takes very different times so that packers finish
// out of order.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "recording/recording_block.hpp"
#include "recording/recording_writer.hpp"
#include "support/recording_files.hpp"

namespace evring {
namespace {

using test::TempDir;

test::Bytes mixed_content(std::size_t size, bool random) {
    test::Bytes bytes(size, std::byte{0});
    std::mt19937_64 rng(size);
    if (random)
        for (std::byte& b : bytes) b = static_cast<std::byte>(rng());
    return bytes;
}

TEST(BlockEncoderPackSeal, IsEncodeInTwoSteps) {
    detail::BlockEncoder whole(true, 1), packer(true, 1), sealer(true, 1);
    for (bool random : {false, true}) {
        const test::Bytes content = mixed_content(100'000, random);
        detail::BlockMeta meta;
        meta.first_seqno = 5;
        meta.last_seqno = 9;
        meta.record_count = 3;
        meta.block_number = 7;
        whole.encode(content, meta, 42);
        detail::PackedBlock packed;
        packer.pack(content, packed);
        sealer.seal(content, packed, meta, 42);
        EXPECT_EQ(std::memcmp(&whole.header(), &sealer.header(), sizeof(RecordingBlockHeader)), 0) << random;
        EXPECT_TRUE(std::equal(whole.stored().begin(), whole.stored().end(), sealer.stored().begin(),
                               sealer.stored().end()));
        EXPECT_EQ(packed.zstd, !random);  // random bytes do not shrink: stored raw
    }
}

struct Written {
    test::Replay replay;
    std::vector<test::BlockAt> blocks;
};

// 40 blocks, one in three of random bytes (slow to compress, stored raw),
// the others of zeros (fast): packers finish out of order.
Written write(const std::string& path, unsigned threads) {
    RecordingOptions options;
    options.threads = threads;
    auto writer = RecordingWriter::create(path, test::recording_source_header(), options);
    EXPECT_TRUE(writer.ok()) << writer.error().message();
    std::mt19937_64 rng(1);
    std::uint64_t seq = 1;
    for (int block = 0; block < 40; ++block) {
        for (int i = 0; i < 200; ++i, ++seq) {
            std::byte* dst = writer->begin_event(test::event_with(seq, 256));
            for (int b = 0; b < 256; ++b) dst[b] = block % 3 == 0 ? static_cast<std::byte>(rng()) : std::byte{0};
            EXPECT_TRUE(writer->end_event(true).ok());
        }
        EXPECT_TRUE(writer->flush().ok());
    }
    EXPECT_TRUE(writer->finish().ok());
    return {test::replay(path), test::list_blocks(test::read_file(path))};
}

TEST(RecordingThreads, WritesTheBlocksOneThreadWritesInOrder) {
    TempDir dir;
    const Written one = write(dir.file("one.evrec"), 1);
    ASSERT_EQ(one.replay.status, ReadStatus::CleanEnd) << one.replay.notice;
    ASSERT_EQ(one.replay.event_seqnos(), test::range(1, 8000));
    for (int run = 0; run < 20; ++run) {
        const std::string path = dir.file("four" + std::to_string(run) + ".evrec");
        const Written four = write(path, 4);
        ASSERT_EQ(four.replay.status, ReadStatus::CleanEnd) << four.replay.notice;
        ASSERT_EQ(four.replay.event_seqnos(), one.replay.event_seqnos());
        ASSERT_EQ(four.replay.payloads, one.replay.payloads);
        ASSERT_EQ(four.blocks.size(), one.blocks.size());
        for (std::size_t i = 0; i < one.blocks.size(); ++i) {
            const RecordingBlockHeader &a = one.blocks[i].header, &b = four.blocks[i].header;
            EXPECT_EQ(b.block_number, a.block_number) << "block " << i;
            EXPECT_EQ(b.first_seqno, a.first_seqno) << "block " << i;
            EXPECT_EQ(b.stored_size, a.stored_size) << "block " << i;
            EXPECT_EQ(b.flags, a.flags) << "block " << i;
            EXPECT_EQ(b.content, a.content) << "block " << i;
        }
        ::unlink(path.c_str());
    }
}

// In a child process whose files may not grow past 1 MiB (RLIMIT_FSIZE,
// SIGXFSZ ignored: write(2) fails with EFBIG, as on a full disk): the write
// error reaches the caller, naming the file, and every thread stops.
// Exit codes: 0 as expected, 1 no error reported, 2 an error not naming the
// file, 3 create failed.
int write_past_a_size_limit(const std::string& path) {
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{1 << 20, 1 << 20};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    RecordingOptions options;
    options.threads = 4;
    auto writer = RecordingWriter::create(path, test::recording_source_header(), options);
    if (!writer) return 3;
    std::mt19937_64 rng(2);
    Status status;
    for (std::uint64_t seq = 1; seq <= 40'000 && status; ++seq) {
        std::byte* dst = writer->begin_event(test::event_with(seq, 256));
        for (int b = 0; b < 256; ++b) dst[b] = static_cast<std::byte>(rng());  // stored raw: 10 MiB
        status = writer->end_event(true);
        if (status && seq % 200 == 0) status = writer->flush();
    }
    if (status) status = writer->finish();
    if (status) return 1;
    return status.error().message().find(path) != std::string::npos ? 0 : 2;
}

TEST(RecordingThreads, AWriteErrorIsReportedAndStopsEveryThread) {
    TempDir dir;
    const std::string path = dir.file("limited.evrec");
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) ::_exit(write_past_a_size_limit(path));
    int wstatus = 0;
    ASSERT_EQ(::waitpid(child, &wstatus, 0), child);
    ASSERT_TRUE(WIFEXITED(wstatus)) << "the child died (signal " << WTERMSIG(wstatus) << ")";
    EXPECT_EQ(WEXITSTATUS(wstatus), 0);
    // What was written before the error replays.
    EXPECT_FALSE(test::replay(path).event_seqnos().empty());
}

TEST(RecordingThreads, CountOutOfRangeIsRefusedNamingIt) {
    TempDir dir;
    for (unsigned threads : {0u, kMaxRecordingThreads + 1}) {
        RecordingOptions options;
        options.threads = threads;
        auto writer = RecordingWriter::create(dir.file("t.evrec"), test::recording_source_header(), options);
        ASSERT_FALSE(writer.ok());
        EXPECT_NE(writer.error().message().find(std::to_string(threads) + " compression threads"), std::string::npos)
            << writer.error().message();
    }
}

}  // namespace
}  // namespace evring
