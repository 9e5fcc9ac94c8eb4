#include "evring/ring/ring.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include <gtest/gtest.h>

#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::RingPair;
using test::TempDir;

Result<MappedRing> map_file(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Error::from_errno(errno, path);
    auto ring = MappedRing::map(fd, Access::ReadOnly, path);
    ::close(fd);
    return ring;
}

void write_bytes(const std::string& path, const void* data, std::size_t size, off_t at) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, data, size, at), static_cast<ssize_t>(size));
    ::close(fd);
}

TEST(InitializeRingFile, WritesHeaderAndLayout) {
    RingPair rings(test::small_params(8, 16));
    const RingHeader& h = rings.reader->header();
    EXPECT_EQ(std::memcmp(h.magic.data(), "RING01", 6), 0);
    EXPECT_EQ(h.content_type, 1);
    EXPECT_EQ(h.schema_hash[31], 31);
    EXPECT_EQ(h.size.descriptor_capacity, 256u);
    EXPECT_EQ(h.size.payload_buf_size, 65536u);
    EXPECT_EQ(h.control.last_seqno, 0u);
    const RingLayout& layout = rings.reader->layout();
    // Sections back to back, unpadded, as every RING01 reader computes them.
    EXPECT_EQ(layout.descriptors_offset, 2u << 20);
    EXPECT_EQ(layout.payload_offset, (2u << 20) + 256 * 64);
    EXPECT_EQ(layout.context_offset, (2u << 20) + 256 * 64 + 65536);
    EXPECT_EQ(layout.file_size, layout.context_offset);
    struct stat st {};
    ASSERT_EQ(::stat(rings.path.c_str(), &st), 0);
    EXPECT_EQ(static_cast<std::uint64_t>(st.st_size), layout.file_size);
}

TEST(MappedRing, PayloadBufferIsMappedTwiceBackToBack) {
    RingPair rings;
    std::byte* base = rings.writer->payload_buffer();
    const std::uint64_t size = rings.writer->layout().size.payload_buf_size;
    base[size - 1] = std::byte{0x5a};
    base[0] = std::byte{0xa5};
    EXPECT_EQ(base[2 * size - 1], std::byte{0x5a});
    EXPECT_EQ(rings.reader->payload_buffer()[size], std::byte{0xa5});
}

TEST(MappedRing, ContextAreaIsMappedWhenPresent) {
    TempDir dir;
    auto params = test::small_params();
    params.context_area_pages = 1;
    std::string path = dir.file("ctx");
    ::close(test::create_ring_file(path, params));
    MappedRing writer = test::map_path(path, Access::ReadWrite);
    ASSERT_EQ(writer.context_area().size(), 2u << 20);
    writer.context_area()[123] = std::byte{7};
    MappedRing reader = test::map_path(path, Access::ReadOnly);
    EXPECT_EQ(reader.context_area()[123], std::byte{7});
}

TEST(MappedRing, RejectsWrongMagicShowingIt) {
    RingPair rings;
    write_bytes(rings.path, "NOPE99", 6, 0);
    auto ring = map_file(rings.path);
    ASSERT_FALSE(ring.ok());
    EXPECT_NE(ring.error().message().find(rings.path), std::string::npos);
    EXPECT_NE(ring.error().message().find("magic is 'NOPE99'"), std::string::npos)
        << ring.error().message();
}

TEST(MappedRing, RejectsTruncatedFile) {
    RingPair rings;
    ASSERT_EQ(::truncate(rings.path.c_str(), 1 << 20), 0);
    auto ring = map_file(rings.path);
    ASSERT_FALSE(ring.ok());
    EXPECT_NE(ring.error().message().find("truncated"), std::string::npos) << ring.error().message();
}

TEST(MappedRing, RejectsFileShorterThanHeader) {
    TempDir dir;
    std::string path = dir.file("tiny");
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
    ASSERT_EQ(::write(fd, "RING01", 6), 6);
    ::close(fd);
    auto ring = map_file(path);
    ASSERT_FALSE(ring.ok());
    EXPECT_NE(ring.error().message().find("shorter than"), std::string::npos);
}

TEST(MappedRing, RejectsCapacityNotPowerOfTwo) {
    RingPair rings;
    std::uint64_t capacity = 300;
    write_bytes(rings.path, &capacity, 8, offsetof(RingHeader, size));
    auto ring = map_file(rings.path);
    ASSERT_FALSE(ring.ok());
    EXPECT_NE(ring.error().message().find("descriptor capacity 300 is not a power of two"),
              std::string::npos)
        << ring.error().message();
}

TEST(MappedRing, RejectsSizesThatDisagreeWithFileSize) {
    RingPair rings;
    std::uint64_t payload = std::uint64_t{1} << 22;  // larger than the file holds
    write_bytes(rings.path, &payload, 8, offsetof(RingHeader, size) + 8);
    auto ring = map_file(rings.path);
    ASSERT_FALSE(ring.ok());
    EXPECT_NE(ring.error().message().find("header describes"), std::string::npos)
        << ring.error().message();
}

TEST(MappedRing, RejectsContentTypeZero) {
    RingPair rings;
    std::uint16_t zero = 0;
    write_bytes(rings.path, &zero, 2, 6);
    EXPECT_FALSE(map_file(rings.path).ok());
}

TEST(MappedRing, RejectsDirectoryAndMissingFile) {
    TempDir dir;
    int fd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY);
    auto ring = MappedRing::map(fd, Access::ReadOnly, dir.path());
    ::close(fd);
    ASSERT_FALSE(ring.ok());
    EXPECT_NE(ring.error().message().find("not a regular file"), std::string::npos);
}

TEST(CheckContentType, MismatchShowsBothValues) {
    RingPair rings;
    std::array<std::uint8_t, 32> hash{};
    auto status = rings.reader->check_content_type(2, hash);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().errno_value(), EPROTO);
    const std::string& m = status.error().message();
    EXPECT_NE(m.find("content type 1 (expected 2)"), std::string::npos) << m;
    EXPECT_NE(m.find("000102030405"), std::string::npos) << m;
    EXPECT_NE(m.find("(expected 0000000000"), std::string::npos) << m;
    std::array<std::uint8_t, 32> right{};
    for (unsigned i = 0; i < 32; ++i) right[i] = static_cast<std::uint8_t>(i);
    EXPECT_TRUE(rings.reader->check_content_type(1, right).ok());
}

TEST(InitializeRingFile, RejectsBadParamsNamingThePath) {
    TempDir dir;
    std::string path = dir.file("bad");
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
    auto params = test::small_params(3, 16);
    auto status = initialize_ring_file(fd, params, path);
    ::close(fd);
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.error().message().find(path), std::string::npos);
    EXPECT_NE(status.error().message().find("descriptor shift 3"), std::string::npos);
}

TEST(MappedRing, ReaderMappingIsReadOnly) {
    RingPair rings;
    EXPECT_EQ(rings.reader->access(), Access::ReadOnly);
    EXPECT_DEATH({ rings.reader->header().control.last_seqno = 5; }, "");
}

}  // namespace
}  // namespace evring
