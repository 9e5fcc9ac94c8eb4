// The block codec under the recording format: CRC32C values, the hardware
// and table versions agreeing, blocks stored raw when zstd does not help,
// and every rule a block header must pass.
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "support/recording_files.hpp"

namespace evring {
namespace {

using namespace test;

TEST(Crc32c, MatchesTheKnownCheckValues) {
    EXPECT_EQ(detail::crc32c("123456789", 9), 0xE3069283u);
    EXPECT_EQ(detail::crc32c_portable("123456789", 9), 0xE3069283u);
    EXPECT_EQ(detail::crc32c_fallback("123456789", 9), 0xE3069283u);
    EXPECT_EQ(detail::crc32c("", 0), 0u);
    const Bytes zeros(32);
    EXPECT_EQ(detail::crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);  // RFC 3720, B.4
}

TEST(Crc32c, HardwareAndTableVersionsAgreeOnEveryLengthAndAlignment) {
    std::mt19937_64 rng(7);
    Bytes data(4096 + 16);
    for (std::byte& b : data) b = std::byte(rng() & 0xff);
    for (std::size_t offset = 0; offset < 9; ++offset)
        for (std::size_t size = 0; size < 300; ++size)
            for (const std::uint32_t crc : {detail::crc32c(data.data() + offset, size),
                                            detail::crc32c_fallback(data.data() + offset, size)})
                ASSERT_EQ(crc, detail::crc32c_portable(data.data() + offset, size)) << offset << " " << size;
    // Continuing a CRC over two pieces equals one pass.
    const std::uint32_t whole = detail::crc32c(data.data(), 4096);
    EXPECT_EQ(detail::crc32c(data.data() + 1000, 3096, detail::crc32c(data.data(), 1000)), whole);
    EXPECT_EQ(detail::crc32c_fallback(data.data() + 1000, 3096, detail::crc32c_fallback(data.data(), 1000)), whole);
}

TEST(BlockEncoder, CompressesWhatShrinksAndStoresTheRestRaw) {
    detail::BlockEncoder encoder(true, 1);
    const Bytes repetitive(10'000, std::byte{7});
    detail::BlockMeta meta{5, 9, 3, 2, BlockContent::Records, false};
    encoder.encode(repetitive, meta, 42);
    EXPECT_EQ(encoder.header().flags & kBlockZstd, kBlockZstd);
    EXPECT_LT(encoder.header().stored_size, 100u);
    EXPECT_EQ(encoder.header().content_size, 10'000u);
    EXPECT_EQ(encoder.header().series_id, 42u);
    EXPECT_EQ(encoder.header().first_seqno, 5u);
    EXPECT_EQ(encoder.header().block_number, 2u);
    EXPECT_EQ(encoder.header().header_crc, detail::block_header_crc(encoder.header()));
    EXPECT_EQ(encoder.header().stored_crc, detail::crc32c(encoder.stored().data(), encoder.stored().size()));
    std::span<const std::byte> content;
    detail::BlockDecoder decoder;
    ASSERT_EQ(decoder.decode(encoder.header(), encoder.stored(), content), "");
    EXPECT_TRUE(std::equal(content.begin(), content.end(), repetitive.begin(), repetitive.end()));

    std::mt19937_64 rng(1);
    Bytes noise(10'000);
    for (std::byte& b : noise) b = std::byte(rng() & 0xff);
    encoder.encode(noise, meta, 42);
    EXPECT_EQ(encoder.header().flags & kBlockZstd, 0);
    EXPECT_EQ(encoder.header().stored_size, 10'000u);
    EXPECT_EQ(encoder.stored().data(), noise.data());  // no copy

    detail::BlockEncoder raw(false, 1);
    raw.encode(repetitive, meta, 42);
    EXPECT_EQ(raw.header().flags & kBlockZstd, 0);
}

TEST(BlockHeader, EveryRuleIsCheckedAndNamed) {
    detail::BlockEncoder encoder(true, 1);
    const Bytes content(1000, std::byte{1});
    encoder.encode(content, detail::BlockMeta{1, 10, 10, 0, BlockContent::Records, false}, 42);
    const RecordingBlockHeader good = encoder.header();
    EXPECT_EQ(detail::block_header_problem(good, 42), "");
    EXPECT_EQ(detail::block_header_problem(good, 0), "");
    auto problem = [&](auto edit) {
        RecordingBlockHeader h = good;
        edit(h);
        h.header_crc = detail::block_header_crc(h);
        return detail::block_header_problem(h, 42);
    };
    RecordingBlockHeader bad_crc = good;
    bad_crc.header_crc ^= 1;
    EXPECT_EQ(detail::block_header_problem(bad_crc, 42), "block header checksum mismatch");
    EXPECT_EQ(problem([](auto& h) { h.magic[0] = 'X'; }), "no block magic");
    EXPECT_NE(problem([](auto& h) { h.series_id = 43; }).find("another recording"), std::string::npos);
    EXPECT_NE(problem([](auto& h) { h.flags |= 0x100; }).find("unknown block flags"), std::string::npos);
    EXPECT_NE(problem([](auto& h) { h.first_seqno = 11; }).find("after last seqno"), std::string::npos);
    EXPECT_NE(problem([](auto& h) { h.content_size = kMaxCompressedBlockContent + 1; }).find("format's limit"),
              std::string::npos);
    EXPECT_NE(problem([](auto& h) { h.content_size = 10'000'000; }).find("stored bytes can hold"), std::string::npos);
    EXPECT_NE(problem([](auto& h) { h.flags = 0; }).find("raw block stores"), std::string::npos);
    EXPECT_NE(problem([](auto& h) { h.content = 9; }).find("unknown block content 9"), std::string::npos);
    EXPECT_NE(problem([](auto& h) { h.record_count = 0; }).find("no records"), std::string::npos);
    EXPECT_NE(problem([](auto& h) { h.record_count = 126; }).find("cannot fit"), std::string::npos);
    EXPECT_NE(problem([](auto& h) { h.content = 2; }).find("schema block with records"), std::string::npos);
}

TEST(BlockDecoder, ContentThatIsNotOneFrameIsRefused) {
    detail::BlockEncoder encoder(true, 1);
    const Bytes content(5000, std::byte{3});
    encoder.encode(content, detail::BlockMeta{1, 1, 1, 0, BlockContent::Records, false}, 42);
    Bytes stored(encoder.stored().begin(), encoder.stored().end());
    stored.push_back(std::byte{0});  // a byte after the frame
    RecordingBlockHeader h = encoder.header();
    h.stored_size = static_cast<std::uint32_t>(stored.size());
    detail::BlockDecoder decoder;
    std::span<const std::byte> out;
    EXPECT_NE(decoder.decode(h, stored, out).find("followed by 1 other bytes"), std::string::npos);
    stored.pop_back();
    h.stored_size = static_cast<std::uint32_t>(stored.size());
    h.content_size = 4999;
    EXPECT_NE(decoder.decode(h, stored, out).find("declares 5000 bytes, the block header 4999"), std::string::npos);
}

}  // namespace
}  // namespace evring
