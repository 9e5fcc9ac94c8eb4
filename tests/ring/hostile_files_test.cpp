// Hostile and damaged files against the library (issue 10): every class of
// damage gets a clear error naming the file and the field, or is read safely;
// nothing crashes, hangs, reads outside a mapping or allocates what a file
// merely claims. Anything that could hang runs in a child process that an
// alarm bounds, so a regression fails the test instead of stalling it.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/publisher.hpp"
#include "files/ring_list.hpp"
#include "evring/ring/ring_reader.hpp"
#include "evring/ring/shared_word.hpp"
#include "ring/snapshot.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::RingPair;
using test::TempDir;

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// Runs `body` in a child process killed by SIGALRM after `seconds`; true when
// it returned 0 in time. (A hang in the library then fails the test.)
bool finishes_in_time(const std::function<int()>& body, unsigned seconds = 20) {
    const pid_t child = ::fork();
    if (child == 0) {
        ::alarm(seconds);
        ::_exit(body());
    }
    int status = 0;
    if (child < 0 || ::waitpid(child, &status, 0) != child) return false;
    if (WIFSIGNALED(status)) ADD_FAILURE() << "the child died of signal " << WTERMSIG(status);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A file of `size` bytes (zeros) starting with `header`.
void write_ring_file(const std::string& path, const RingHeader& header, std::uint64_t size) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0);
    ASSERT_EQ(::pwrite(fd, &header, sizeof header, 0), static_cast<ssize_t>(sizeof header));
    ::close(fd);
}

RingHeader valid_header(std::uint64_t capacity, std::uint64_t payload, std::uint64_t context = 0) {
    RingHeader header{};
    std::memcpy(header.magic.data(), kRingMagic.data(), kRingMagic.size());
    header.content_type = static_cast<std::uint16_t>(ContentType::Test);
    header.size = RingSize{capacity, payload, context};
    return header;
}

std::vector<std::byte> compress(const void* data, std::size_t size, int window_log = 0) {
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
    if (window_log != 0) ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, window_log);
    std::vector<std::byte> out(ZSTD_compressBound(size));
    ZSTD_outBuffer o{out.data(), out.size(), 0};
    ZSTD_inBuffer i{data, size, 0};
    // Streamed (continue, then end) without a pledged size: the frame declares
    // no content size and keeps the window it was given.
    std::size_t left = ZSTD_compressStream2(cctx, &o, &i, ZSTD_e_continue);
    EXPECT_FALSE(ZSTD_isError(left));
    ZSTD_inBuffer none{nullptr, 0, 0};
    left = ZSTD_compressStream2(cctx, &o, &none, ZSTD_e_end);
    ZSTD_freeCCtx(cctx);
    EXPECT_EQ(left, 0u);
    out.resize(o.pos);
    return out;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// --- Overflowing and inconsistent headers ---------------------------------

// 2^15 descriptors and a 2 MiB buffer put the context area at 6 MiB; a
// context area of 2^64 - 2 MiB then makes the layout wrap to exactly 4 MiB,
// the size of the file: before the check, it passed validation and was mapped
// over whatever followed the reservation.
RingHeader wrapping_header() {
    return valid_header(std::uint64_t{1} << 15, 2 * kMiB, std::uint64_t{0} - 2 * kMiB);
}

TEST(HostileFiles, HeaderWhoseSizesWrapPast2To64IsRefusedNamingTheField) {
    TempDir dir;
    const std::string path = dir.file("wrapping");
    write_ring_file(path, wrapping_header(), 4 * kMiB);
    auto reader = RingReader::open(path);
    ASSERT_FALSE(reader.ok());
    const std::string& message = reader.error().message();
    EXPECT_TRUE(contains(message, "context area size 18446744073707454464")) << message;
    EXPECT_TRUE(contains(message, path)) << message;

    auto listed = list_rings(dir.path());
    ASSERT_TRUE(listed.ok());
    ASSERT_EQ(listed->size(), 1u);
    EXPECT_FALSE((*listed)[0].header.has_value());
    EXPECT_TRUE(contains((*listed)[0].error, "context area size")) << (*listed)[0].error;
}

TEST(HostileFiles, SnapshotWhoseHeaderWrapsIsRefusedBeforeAnyAllocation) {
    const RingHeader header = wrapping_header();
    const std::vector<std::byte> frame = compress(&header, sizeof header);
    EXPECT_LT(frame.size(), 400u) << "a few hundred bytes claiming a ring past 2^64";
    auto loaded = load_snapshot(frame, "wrapping.zst");
    ASSERT_FALSE(loaded.ok());
    EXPECT_TRUE(contains(loaded.error().message(), "snapshot 'wrapping.zst'")) << loaded.error().message();
    EXPECT_TRUE(contains(loaded.error().message(), "context area size")) << loaded.error().message();
}

TEST(HostileFiles, ControlWordsNoRingReachesAreRefusedAsDamage) {
    TempDir dir;
    RingHeader header = valid_header(64, 4096);
    header.control.last_seqno = ~std::uint64_t{0};
    write_ring_file(dir.file("seqno"), header, RingLayout::of(header.size).file_size);
    auto seqno = RingReader::open(dir.file("seqno"));
    ASSERT_FALSE(seqno.ok());
    EXPECT_TRUE(contains(seqno.error().message(), "last_seqno 18446744073709551615")) << seqno.error().message();
    EXPECT_TRUE(contains(seqno.error().message(), "damaged")) << seqno.error().message();

    header.control.last_seqno = 5;
    header.control.next_payload_byte = ~std::uint64_t{0} - 15;
    const std::vector<std::byte> frame = compress(&header, sizeof header);
    auto next_byte = load_snapshot(frame, "next.zst");
    ASSERT_FALSE(next_byte.ok());
    EXPECT_TRUE(contains(next_byte.error().message(), "next_payload_byte")) << next_byte.error().message();
}

TEST(HostileFiles, SnapshotWhoseWindowPassesNextPayloadByteIsRefused) {
    RingHeader header = valid_header(64, 4096);
    header.control.next_payload_byte = 64;
    header.control.buffer_window_start = 4096;
    std::vector<std::byte> file(RingLayout::of(header.size).file_size);
    std::memcpy(file.data(), &header, sizeof header);
    auto loaded = load_snapshot(compress(file.data(), file.size()), "window.zst");
    ASSERT_FALSE(loaded.ok());
    EXPECT_TRUE(contains(loaded.error().message(), "buffer_window_start 4096 is beyond next_payload_byte 64"))
        << loaded.error().message();
}

// --- Files that are not regular files -------------------------------------

TEST(HostileFiles, FifoIsRefusedWithoutBlockingAsRingOrSnapshotAlsoUnderAPureName) {
    TempDir dir;
    ASSERT_EQ(::mkdir(dir.file("rings").c_str(), 0755), 0);
    const std::string fifo = dir.file("rings") + "/planted";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
    EXPECT_TRUE(finishes_in_time([&] {
        DirectoryOptions directory;
        directory.read_environment = false;
        directory.ring_dir_override = dir.file("rings");
        directory.print_warning = false;
        auto by_name = RingReader::open("planted", directory);
        auto by_path = RingReader::open(fifo);
        auto snapshot = load_snapshot(fifo);
        auto magic = is_zstd_file(fifo);
        const bool all_refused = !by_name && !by_path && !snapshot && !magic;
        if (!all_refused) return 1;
        for (const std::string& m : {by_name.error().message(), by_path.error().message(),
                                     snapshot.error().message(), magic.error().message()})
            if (!contains(m, "is a FIFO, not a regular file") || !contains(m, fifo)) {
                std::fprintf(stderr, "unclear message: %s\n", m.c_str());
                return 2;
            }
        return 0;
    }));
}

TEST(HostileFiles, DirectoryAndDeviceAreRefusedNamingWhatTheyAre) {
    TempDir dir;
    auto directory = load_snapshot(dir.path());
    ASSERT_FALSE(directory.ok());
    EXPECT_TRUE(contains(directory.error().message(), "is a directory")) << directory.error().message();
    auto device = RingReader::open("/dev/null");
    ASSERT_FALSE(device.ok());
    EXPECT_TRUE(contains(device.error().message(), "is a character device")) << device.error().message();
}

// --- Wrapped sequence numbers in a live ring ------------------------------

// A ring that passed its checks when opened and then had last_seqno set to
// 2^64 - 1 by a hostile or broken writer: the iterator, a loop bounded by its
// newest/oldest, and the snapshot writer all finish.
TEST(HostileFiles, LastSeqnoWrappedAfterOpeningCannotMakeAnyLoopRunForever) {
    RingPair rings(test::small_params(6, 12));
    Publisher publisher(*rings.writer);
    for (int i = 0; i < 10; ++i) publisher.commit(publisher.reserve(8));
    shared::store_relaxed(rings.writer->header().control.last_seqno, ~std::uint64_t{0});
    const std::string snapshot_path = rings.dir.file("s.zst");
    EXPECT_TRUE(finishes_in_time([&] {
        Iterator it(*rings.reader);
        if (it.newest_seqno() != kMaxSeqno) return 1;
        std::uint64_t visited = 0;
        EventDescriptor event{};
        for (std::uint64_t s = it.oldest_seqno(); s <= it.newest_seqno(); ++s)
            visited += it.read_descriptor(s, event) ? 1 : 0;
        it.seek(~std::uint64_t{0});
        for (int i = 0; i < 1000; ++i) (void)it.try_next(event);
        const int fd = ::open(snapshot_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        auto stats = write_snapshot(*rings.reader, fd, snapshot_path);
        ::close(fd);
        if (!stats || visited != 0) return 2;
        auto loaded = load_snapshot(snapshot_path);  // what the writer wrote is a valid ring
        return loaded ? 0 : 3;
    }));
}

// --- Bit flips in descriptors ---------------------------------------------

TEST(HostileFiles, DescriptorWithAFlippedSizeBitIsNeverReadOutsideTheBuffer) {
    RingPair rings(test::small_params(6, 12));
    Publisher publisher(*rings.writer);
    Reservation r = publisher.reserve(40);
    ASSERT_TRUE(r);
    publisher.commit(r);
    publisher.commit(publisher.reserve(8));
    // Flip bit 31 of payload_size (word 1, bits 32..63) and bit 63 of the offset.
    std::uint64_t* words = rings.writer->descriptors()[0].words;
    shared::store_relaxed(words[1], shared::load_relaxed(words[1]) ^ (std::uint64_t{1} << 63));
    std::uint64_t* second = rings.writer->descriptors()[1].words;
    shared::store_relaxed(second[3], shared::load_relaxed(second[3]) ^ (std::uint64_t{1} << 63));

    Iterator it(*rings.reader);
    it.seek(1);
    EventDescriptor event{};
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    EXPECT_EQ(event.payload_size, 40u + (1u << 31));
    EXPECT_EQ(peek_payload(*rings.reader, event), nullptr);
    std::vector<std::byte> buffer(64);
    EXPECT_EQ(copy_payload(*rings.reader, event, buffer.data(), buffer.size()), PayloadResult::Invalid);

    // The snapshot writer drops both (a size that cannot fit, an offset past
    // what was handed out) instead of wrapping its offset arithmetic.
    const std::string path = rings.dir.file("s.zst");
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    auto stats = write_snapshot(*rings.reader, fd, path);
    ::close(fd);
    ASSERT_TRUE(stats.ok()) << stats.error().message();
    EXPECT_EQ(stats->kept_events, 0u);
    EXPECT_EQ(stats->dropped_descriptors, 2u);
    auto loaded = load_snapshot(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message();
}

// --- zstd bombs -----------------------------------------------------------

// Pages of [at, at + size) resident in memory.
std::uint64_t resident_pages(const void* at, std::uint64_t size) {
    const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> present((size + page - 1) / page);
    if (::mincore(const_cast<void*>(at), size, present.data()) != 0) return ~std::uint64_t{0};
    std::uint64_t count = 0;
    for (unsigned char p : present) count += p & 1;
    return count;
}

TEST(HostileFiles, SmallSnapshotClaimingAGigabyteRingCostsOnlyWhatItDecompressesTo) {
    // A 1 GiB payload buffer never written: the frame holds only the header
    // section and the descriptors, a few hundred bytes compressed.
    const RingHeader header = valid_header(64, std::uint64_t{1} << 30);
    std::vector<std::byte> head(RingLayout::of(header.size).payload_offset);
    std::memcpy(head.data(), &header, sizeof header);
    const std::vector<std::byte> frame = compress(head.data(), head.size());
    EXPECT_LT(frame.size(), 1024u);
    auto loaded = load_snapshot(frame, "bomb.zst");
    ASSERT_TRUE(loaded.ok()) << loaded.error().message();
    EXPECT_EQ(loaded->decompressed_size, head.size());
    EXPECT_EQ(loaded->padded_bytes, std::uint64_t{1} << 30);
    const MappedRing& ring = loaded->ring;
    const std::uint64_t resident = resident_pages(&ring.header(), ring.layout().file_size);
    const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    EXPECT_LE(resident * page, head.size() + 64 * page)
        << "a 1 GiB ring claimed by " << frame.size() << " bytes must not be allocated";
}

TEST(HostileFiles, FrameDecompressingPastItsRingIsRefusedAtTheRingsSize) {
    const RingHeader header = valid_header(64, 4096);
    std::vector<std::byte> bomb(64 * kMiB);  // the ring is 2 MiB + 8 KiB
    std::memcpy(bomb.data(), &header, sizeof header);
    const std::vector<std::byte> frame = compress(bomb.data(), bomb.size());
    EXPECT_LT(frame.size(), 64 * 1024u);
    auto loaded = load_snapshot(frame, "bomb.zst");
    ASSERT_FALSE(loaded.ok());
    EXPECT_TRUE(contains(loaded.error().message(), "decompresses to more than the 2105344 bytes"))
        << loaded.error().message();
}

TEST(HostileFiles, FrameAskingForAWindowBeyondTheLimitIsRefused) {
    RingHeader header = valid_header(64, 4096);
    std::vector<std::byte> file(RingLayout::of(header.size).file_size);
    std::memcpy(file.data(), &header, sizeof header);
    const std::vector<std::byte> frame = compress(file.data(), file.size(), 27);  // a 128 MiB window
    SnapshotLoadOptions options;
    options.max_decompressed_size = 4 * kMiB;
    auto loaded = load_snapshot(frame, "window.zst", options);
    ASSERT_FALSE(loaded.ok());
    EXPECT_TRUE(contains(loaded.error().message(), "snapshot 'window.zst'")) << loaded.error().message();
    EXPECT_EQ(loaded.error().errno_value(), EFBIG);
    EXPECT_TRUE(contains(loaded.error().message(), "window larger than the limit of 4194304 bytes"))
        << loaded.error().message();
    options.max_decompressed_size = 256 * kMiB;
    EXPECT_TRUE(load_snapshot(frame, "window.zst", options).ok()) << "within the limit it loads";
}

}  // namespace
}  // namespace evring
