// The recording sink's file appends (recording_appender.hpp), direct and
// buffered: after every append the file holds exactly a prefix of what was
// appended, never a byte past it, and at least everything before written();
// settle() puts everything in the file; the unit settled through the page
// cache is rewritten whole by the next direct write; a body too big for the
// buffer goes around it. Then whole recordings written with direct I/O
// against buffered ones: the same records, on_block told only of blocks
// wholly in the file (a copy cut where the file ended when a block was told
// written holds that block), a flush and a destroyed writer leaving every
// record readable.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "recording/recording_appender.hpp"
#include "recording/recording_reader.hpp"
#include "recording/recording_writer.hpp"
#include "support/recording_files.hpp"

namespace evring {
namespace {

using detail::FileAppender;
using test::Bytes;
using test::TempDir;

Bytes random_bytes(std::mt19937_64& rng, std::size_t n) {
    Bytes out(n);
    for (std::byte& b : out) b = static_cast<std::byte>(rng());
    return out;
}

// The file holds a prefix of `appended` at least `written` long.
void expect_prefix(const std::string& path, const Bytes& appended, std::uint64_t written, const char* when) {
    const Bytes file = test::read_file(path);
    ASSERT_LE(file.size(), appended.size()) << when << ": a byte past what was appended";
    ASSERT_GE(file.size(), written) << when << ": written() is past the file's end";
    EXPECT_TRUE(std::equal(file.begin(), file.end(), appended.begin())) << when << ": the file's bytes differ";
}

struct Opened {
    int fd = -1;
    Bytes appended;  // what the file must come to hold
    ~Opened() {
        if (fd >= 0) ::close(fd);
    }
};

// A file whose first 100 bytes the caller wrote (a header), handed to `out`.
void open_with_header(const std::string& path, FileAppender& out, RecordingIo io, Opened& file,
                      std::mt19937_64& rng) {
    file.fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    ASSERT_GE(file.fd, 0);
    file.appended = random_bytes(rng, 100);
    ASSERT_EQ(::write(file.fd, file.appended.data(), file.appended.size()), 100);
    ASSERT_TRUE(out.start(file.fd, 100, path, io).ok());
}

void append(FileAppender& out, Opened& file, const Bytes& head, const Bytes& body) {
    ASSERT_TRUE(out.append(head, body).ok());
    file.appended.insert(file.appended.end(), head.begin(), head.end());
    file.appended.insert(file.appended.end(), body.begin(), body.end());
    EXPECT_EQ(out.end(), file.appended.size());
}

// Appends of every size class: under a unit, across units, exactly to a
// unit's end, empty bodies; settled now and then, as flushes do.
void run_script(const std::string& path, RecordingIo io, bool expect_direct) {
    std::mt19937_64 rng(42);
    FileAppender out;
    Opened file;
    open_with_header(path, out, io, file, rng);
    ASSERT_EQ(out.direct(), expect_direct);
    const std::size_t sizes[] = {0, 1, 63, 64, 100, 4000, 4096, 4097, 8192 - 164, 65536, 300000};
    for (int round = 0; round < 40; ++round) {
        const std::size_t body = sizes[rng() % std::size(sizes)];
        append(out, file, random_bytes(rng, 64), random_bytes(rng, body));
        expect_prefix(path, file.appended, out.written(), "after an append");
        if (!expect_direct) {
            EXPECT_EQ(out.written(), out.end()) << "buffered: every append is in the file";
        }
        if (round % 7 == 3) {
            ASSERT_TRUE(out.settle().ok());
            EXPECT_EQ(out.written(), out.end());
            EXPECT_EQ(test::read_file(path), file.appended) << "settled: everything in the file";
        }
    }
    ASSERT_TRUE(out.settle().ok());
    EXPECT_EQ(test::read_file(path), file.appended);
    EXPECT_EQ(out.direct(), expect_direct) << "no write was refused";
}

// The kernel takes O_DIRECT on this directory's files (tmpfs does since 6.6).
bool takes_direct(const std::string& dir) {
    const std::string probe = dir + "/probe";
    const int fd = ::open(probe.c_str(), O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC, 0644);
    if (fd >= 0) ::close(fd);
    ::unlink(probe.c_str());
    return fd >= 0;
}

TEST(RecordingAppender, DirectHoldsOnlyThePartUnitAndSettlesIt) {
    TempDir dir;
    if (!takes_direct(dir.path())) GTEST_SKIP() << dir.path() << " does not take O_DIRECT";
    run_script(dir.file("direct"), RecordingIo::DirectAnywhere, true);
}

TEST(RecordingAppender, BufferedWritesEveryAppendAtOnce) {
    TempDir dir;
    run_script(dir.file("buffered"), RecordingIo::Buffered, false);
}

TEST(RecordingAppender, DirectLeavesTmpfsToThePageCache) {
    struct statfs fs {};
    if (::statfs("/dev/shm", &fs) != 0 || fs.f_type != TMPFS_MAGIC) GTEST_SKIP() << "/dev/shm is not a tmpfs here";
    TempDir dir;  // in /dev/shm
    run_script(dir.file("direct"), RecordingIo::Direct, false);
}

// A directory on a disk whose filesystem reports its direct I/O alignment
// for a regular file (statx STATX_DIOALIGN), under /var/tmp; empty if none.
class DiskDir {
public:
    DiskDir() {
        std::string templ = "/var/tmp/evring-appender-XXXXXX";
        struct statfs fs {};
        if (::statfs("/var/tmp", &fs) != 0 || fs.f_type == TMPFS_MAGIC || ::mkdtemp(templ.data()) == nullptr) return;
        path_ = templ;
        const std::string probe = file("probe");
        const int fd = ::open(probe.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        struct statx sx {};
        reported_ = fd >= 0 && ::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
                    (sx.stx_mask & STATX_DIOALIGN) != 0 && sx.stx_dio_offset_align != 0;
        if (fd >= 0) ::close(fd);
        ::unlink(probe.c_str());
    }
    ~DiskDir() {
        if (path_.empty()) return;
        const std::string command = "rm -rf '" + path_ + "'";
        if (std::system(command.c_str()) != 0) {
        }
    }
    bool usable() const { return reported_; }
    const std::string& path() const { return path_; }
    std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
    bool reported_ = false;
};

#define SKIP_WITHOUT_DISK(dir) \
    if (!(dir).usable()) GTEST_SKIP() << "no directory under /var/tmp on a filesystem that reports direct I/O alignment"

// A disk's filesystem reports its direct I/O alignment, and Direct takes it.
TEST(RecordingAppender, DirectWritesDirectOnADisk) {
    DiskDir dir;
    SKIP_WITHOUT_DISK(dir);
    run_script(dir.file("direct"), RecordingIo::Direct, true);
}

// A body over kMaxDirectBody goes through the page cache, after what the
// buffer holds, and direct writes go on after it.
TEST(RecordingAppender, AHugeBodyGoesAroundTheBuffer) {
    TempDir dir;
    if (!takes_direct(dir.path())) GTEST_SKIP() << dir.path() << " does not take O_DIRECT";
    std::mt19937_64 rng(7);
    FileAppender out;
    Opened file;
    const std::string path = dir.file("huge");
    open_with_header(path, out, RecordingIo::DirectAnywhere, file, rng);
    append(out, file, random_bytes(rng, 64), random_bytes(rng, 5000));
    append(out, file, random_bytes(rng, 64), random_bytes(rng, FileAppender::kMaxDirectBody + 123));
    EXPECT_EQ(out.written(), out.end()) << "the huge body went straight to the file";
    expect_prefix(path, file.appended, out.written(), "after the huge body");
    append(out, file, random_bytes(rng, 64), random_bytes(rng, 10000));
    expect_prefix(path, file.appended, out.written(), "after it");
    EXPECT_TRUE(out.direct());
    ASSERT_TRUE(out.settle().ok());
    EXPECT_EQ(test::read_file(path), file.appended);
}

// --- whole recordings ---------------------------------------------------------

struct Told {
    std::uint64_t last_seqno;
    std::uint64_t file_size;  // the file's size when the block was told written
};

// Events of several sizes, gaps, flushes; on_block's written tells noted
// with the file's size at that moment.
test::Replay record(const std::string& path, RecordingIo io, bool finish, std::vector<Told>* told) {
    RecordingOptions options;
    options.compress = false;
    options.io = io;
    std::mutex m;
    if (told != nullptr)
        options.on_block = [&, told, path](const BlockProgress& p) {
            if (!p.written) return;
            struct stat st {};
            EXPECT_EQ(::stat(path.c_str(), &st), 0);
            std::lock_guard lock(m);
            told->push_back({p.last_seqno, static_cast<std::uint64_t>(st.st_size)});
        };
    {
        auto writer = RecordingWriter::create(path, test::recording_source_header(), options);
        EXPECT_TRUE(writer.ok()) << writer.error().message();
        std::uint64_t seq = 1;
        for (int i = 0; i < 6000; ++i) {
            test::append_event(*writer, seq++, static_cast<std::uint32_t>((i * 37) % 700));
            if (i % 1500 == 700) {
                EXPECT_TRUE(writer->append_gap(seq, 3, GapReason::FellBehind).ok());
                seq += 3;
            }
            if (i % 2000 == 1999) {
                EXPECT_TRUE(writer->flush().ok());
            }
        }
        EXPECT_TRUE(writer->sync().ok());
        // Synced: every record so far is readable, though the writer goes on.
        const test::Replay now = test::replay(path);
        EXPECT_EQ(now.event_seqnos().size(), 6000u) << "sync left records unwritten";
        for (int i = 0; i < 100; ++i) test::append_event(*writer, seq++, 50);
        if (finish) {
            EXPECT_TRUE(writer->finish().ok());
        }
    }  // without finish: the destructor writes what is staged and what the sink holds
    return test::replay(path);
}

void expect_same_records(const test::Replay& a, const test::Replay& b) {
    ASSERT_EQ(a.records.size(), b.records.size());
    for (std::size_t i = 0; i < a.records.size(); ++i) {
        EXPECT_EQ(a.records[i].kind, b.records[i].kind) << "record " << i;
        EXPECT_EQ(a.records[i].event.seqno, b.records[i].event.seqno) << "record " << i;
        EXPECT_EQ(a.payloads[i], b.payloads[i]) << "record " << i;
    }
}

void expect_direct_same_as_buffered(const std::string& dir) {
    for (const bool finish : {true, false}) {
        const std::string suffix = finish ? "finished" : "destroyed";
        const test::Replay direct = record(dir + "/direct_" + suffix, RecordingIo::DirectAnywhere, finish, nullptr);
        const test::Replay buffered = record(dir + "/buffered_" + suffix, RecordingIo::Buffered, finish, nullptr);
        expect_same_records(direct, buffered);
        EXPECT_EQ(direct.event_seqnos().size(), 6100u) << suffix;
        EXPECT_EQ(direct.status, finish ? ReadStatus::CleanEnd : buffered.status) << direct.notice;
    }
}

TEST(RecordingAppender, DirectRecordingsHoldWhatBufferedOnesHold) {
    TempDir dir;
    if (!takes_direct(dir.path())) GTEST_SKIP() << dir.path() << " does not take O_DIRECT";
    expect_direct_same_as_buffered(dir.path());
}

TEST(RecordingAppender, DirectRecordingsOnADiskHoldWhatBufferedOnesHold) {
    DiskDir dir;
    SKIP_WITHOUT_DISK(dir);
    expect_direct_same_as_buffered(dir.path());
}

// What a named recorder relies on: a block told written is in the file. A
// copy of the file cut at its size when the block was told holds the block.
void expect_told_blocks_in_the_file(const std::string& dir) {
    std::vector<Told> told;
    const std::string path = dir + "/told";
    record(path, RecordingIo::DirectAnywhere, true, &told);
    ASSERT_GT(told.size(), 5u);
    const Bytes whole = test::read_file(path);
    for (std::size_t i = 0; i < told.size(); i += told.size() / 5) {
        const std::string cut = dir + "/cut" + std::to_string(i);
        test::write_file(cut, Bytes(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(told[i].file_size)));
        std::uint64_t last = 0;  // of the events and gaps the cut copy holds
        for (const Record& r : test::replay(cut).records) {
            if (r.kind == RecordKind::Event) last = std::max(last, r.event.seqno);
            if (r.kind == RecordKind::Gap) last = std::max(last, r.gap.first_lost_seqno + r.gap.lost_count - 1);
        }
        EXPECT_GE(last, told[i].last_seqno) << "tell " << i << ": the block told written was not in the file";
    }
}

TEST(RecordingAppender, OnBlockTellsOfBlocksWhollyInTheFile) {
    TempDir dir;
    if (!takes_direct(dir.path())) GTEST_SKIP() << dir.path() << " does not take O_DIRECT";
    expect_told_blocks_in_the_file(dir.path());
}

TEST(RecordingAppender, OnBlockTellsOfBlocksWhollyInTheFileOnADisk) {
    DiskDir dir;
    SKIP_WITHOUT_DISK(dir);
    expect_told_blocks_in_the_file(dir.path());
}

}  // namespace
}  // namespace evring
