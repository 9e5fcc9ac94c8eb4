// The embedded-schema blob: round trip, every kind of damage detected, and
// the trust rule applied to a real ring file's header section.
#include "evring/schema/schema_embed.hpp"
#include "ring/schema_blob.hpp"

#include <openssl/sha.h>

#include <cstring>
#include <memory>

#include <gtest/gtest.h>

#include "evring/ring/ring.hpp"
#include "support/temp_ring.hpp"
#include "schema/schema_builtin.hpp"
#include "support/schema_payload.hpp"

namespace evring {
namespace {

const Schema& orders() {
    static const Schema schema = test::load_test_schema("orders.toml");
    return schema;
}

// The first 2 MiB of a ring file: a RING01 header naming `content_type` and
// `hash`, and evring's extension block.
struct alignas(64) Section {
    std::array<std::byte, kSectionAlignment> bytes{};
    std::span<std::byte> span() { return bytes; }
    RingExtension& extension() { return *extension_in(bytes.data()); }
};

std::unique_ptr<Section> make_section(std::uint16_t content_type, const SchemaHash& hash, bool extension = true) {
    auto section = std::make_unique<Section>();
    RingHeader header{};
    header.magic = kRingMagic;
    header.content_type = content_type;
    header.schema_hash = hash;
    std::memcpy(section->bytes.data(), &header, sizeof header);
    if (extension) write_ring_extension(section->bytes.data(), kRingFeatureDoorbell);
    return section;
}

TEST(SchemaBlob, RoundTripsTheSchemaWithItsSource) {
    const std::vector<std::byte> blob = serialize_schema_blob(orders());
    ASSERT_EQ(blob.size(), kSchemaBlobHeaderSize + orders().source().size());
    EXPECT_EQ(std::memcmp(blob.data(), "EVRGSCH1", 8), 0);
    auto back = parse_schema_blob(blob);
    ASSERT_TRUE(back.ok()) << back.error().message();
    EXPECT_EQ(back->hash(), orders().hash());
    EXPECT_EQ(back->source(), orders().source());
    // Bytes after the blob (the rest of a header section) are ignored.
    std::vector<std::byte> padded = blob;
    padded.resize(blob.size() + 1000, std::byte{0x77});
    EXPECT_TRUE(parse_schema_blob(padded).ok());
}

TEST(SchemaBlob, EveryFlippedByteIsDetected) {
    const std::vector<std::byte> blob = serialize_schema_blob(orders());
    for (std::size_t i = 0; i < blob.size(); ++i) {
        std::vector<std::byte> damaged = blob;
        damaged[i] ^= std::byte{0x01};
        auto parsed = parse_schema_blob(damaged);
        EXPECT_FALSE(parsed.ok()) << "flipping byte " << i << " went unnoticed";
    }
}

TEST(SchemaBlob, TruncatedOrLyingBlobsAreRefusedWithAReason) {
    const std::vector<std::byte> blob = serialize_schema_blob(orders());
    for (std::size_t n : {std::size_t{0}, std::size_t{7}, kSchemaBlobHeaderSize - 1, kSchemaBlobHeaderSize, blob.size() - 1}) {
        auto parsed = parse_schema_blob(std::span(blob).first(n));
        ASSERT_FALSE(parsed.ok()) << n;
    }
    std::vector<std::byte> huge = blob;
    const std::uint64_t claimed = ~0ull;
    std::memcpy(huge.data() + 16, &claimed, sizeof claimed);
    auto parsed = parse_schema_blob(huge);
    ASSERT_FALSE(parsed.ok());
    EXPECT_NE(parsed.error().message().find("claims a 18446744073709551615-byte body"), std::string::npos)
        << parsed.error().message();
    std::vector<std::byte> future = blob;
    future[8] = std::byte{2};
    EXPECT_NE(parse_schema_blob(future).error().message().find("version 2"), std::string::npos);
}

TEST(SchemaBlob, AnIntactBlobWhoseRecordedHashDisagreesIsRefused) {
    // A blob written by an evring whose canonical form differed: intact, but
    // its recorded hash is not what this evring computes.
    std::vector<std::byte> blob = serialize_schema_blob(orders());
    blob[24] ^= std::byte{0xff};
    std::vector<std::byte> hashed = blob;
    std::memset(hashed.data() + 56, 0, 32);
    SHA256(reinterpret_cast<const unsigned char*>(hashed.data()), hashed.size(),
           reinterpret_cast<unsigned char*>(blob.data() + 56));
    auto parsed = parse_schema_blob(blob);
    ASSERT_FALSE(parsed.ok());
    EXPECT_NE(parsed.error().message().find("but its schema hashes to " + orders().hash_hex()), std::string::npos)
        << parsed.error().message();
}

TEST(SchemaEmbed, AnEmbeddedSchemaIsTrustedWhenItDescribesTheRing) {
    auto section = make_section(orders().content_type(), orders().hash());
    EXPECT_EQ(read_embedded_schema(section->span()).status, EmbeddedSchemaStatus::Absent);
    ASSERT_TRUE(embed_schema(section->span(), orders()).ok());
    const EmbeddedSchema found = read_embedded_schema(section->span());
    ASSERT_EQ(found.status, EmbeddedSchemaStatus::Trusted) << found.problem;
    EXPECT_EQ(found.schema->hash(), orders().hash());
    // The extension block announces it and keeps its other features.
    EXPECT_EQ(ring_features(section->extension()), kRingFeatureDoorbell | kRingFeatureEmbeddedSchema);
    // The raw blob can be copied elsewhere (a recording) and trusted there.
    const auto blob = embedded_schema_blob(section->span());
    ASSERT_EQ(blob.size(), kSchemaBlobHeaderSize + orders().source().size());
    EXPECT_EQ(trusted_schema_blob(blob, orders().content_type(), orders().hash()).status,
              EmbeddedSchemaStatus::Trusted);
    EXPECT_EQ(trusted_schema_blob(blob, 2, orders().hash()).status, EmbeddedSchemaStatus::Mismatch);
}

TEST(SchemaEmbed, AForeignHashTheSchemaDescribesIsTrustedToo) {
    const Schema v1 = builtin_schema("monad-exec-v1").value();
    auto section = make_section(2, v1.describes().front());
    ASSERT_TRUE(embed_schema(section->span(), v1).ok());
    const EmbeddedSchema found = read_embedded_schema(section->span());
    EXPECT_EQ(found.status, EmbeddedSchemaStatus::Trusted) << found.problem;
}

TEST(SchemaEmbed, WorksOnTheHeaderSectionOfAMappedRing) {
    test::RingPair rings;  // content type and schema hash as the test support sets them
    const RingHeader& header = rings.writer->header();
    auto schema = Schema::parse("content_type = " + std::to_string(header.content_type) +
                                "\ncontent_name = \"t\"\ndescribes = [\"" + schema_hash_hex(header.schema_hash) +
                                "\"]\n[[event]]\nnumber = 2\nname = \"E\"\n");
    ASSERT_TRUE(schema.ok()) << schema.error().message();
    std::span<std::byte> writable(reinterpret_cast<std::byte*>(&rings.writer->header()), kSectionAlignment);
    ASSERT_TRUE(embed_schema(writable, *schema).ok());
    std::span<const std::byte> readable(reinterpret_cast<const std::byte*>(&rings.reader->header()), kSectionAlignment);
    const EmbeddedSchema found = read_embedded_schema(readable);
    ASSERT_EQ(found.status, EmbeddedSchemaStatus::Trusted) << found.problem;
    EXPECT_EQ(found.schema->hash(), schema->hash());
}

TEST(SchemaEmbed, ASchemaForAnotherHashOrContentTypeIsNeitherEmbeddedNorTrusted) {
    SchemaHash other{};
    other[0] = 1;
    auto section = make_section(orders().content_type(), other);
    auto refused = embed_schema(section->span(), orders());
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message().find("does not describe"), std::string::npos);
    auto wrong_type = make_section(static_cast<std::uint16_t>(orders().content_type() + 1), orders().hash());
    EXPECT_FALSE(embed_schema(wrong_type->span(), orders()).ok());

    // A blob placed without the check (a writer that ignored the rule) is read but not trusted.
    ASSERT_TRUE(write_schema_blob(section->span(), serialize_schema_blob(orders())).ok());
    const EmbeddedSchema found = read_embedded_schema(section->span());
    EXPECT_EQ(found.status, EmbeddedSchemaStatus::Mismatch);
    EXPECT_FALSE(found.schema.has_value());
    EXPECT_NE(found.problem.find(schema_hash_hex(other)), std::string::npos) << found.problem;
}

TEST(SchemaEmbed, ADamagedBlobIsIgnoredWithOneProblemLine) {
    auto section = make_section(orders().content_type(), orders().hash());
    ASSERT_TRUE(embed_schema(section->span(), orders()).ok());
    section->bytes[kEmbeddedSchemaOffset + kSchemaBlobHeaderSize + 10] ^= std::byte{0x20};
    const EmbeddedSchema found = read_embedded_schema(section->span());
    EXPECT_EQ(found.status, EmbeddedSchemaStatus::Damaged);
    EXPECT_FALSE(found.schema.has_value());
    EXPECT_NE(found.problem.find("checksum"), std::string::npos) << found.problem;
    EXPECT_EQ(found.problem.find('\n'), std::string::npos);
}

TEST(SchemaEmbed, NeedsTheExtensionBlockAndRoomInTheSection) {
    auto bare = make_section(orders().content_type(), orders().hash(), false);
    auto refused = embed_schema(bare->span(), orders());
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message().find("no evring extension block"), std::string::npos);
    EXPECT_EQ(read_embedded_schema(bare->span()).status, EmbeddedSchemaStatus::Absent);

    auto section = make_section(orders().content_type(), orders().hash());
    auto small = embed_schema(section->span().first(kEmbeddedSchemaOffset + 100), orders());
    ASSERT_FALSE(small.ok());
    EXPECT_NE(small.error().message().find("more than the 100 bytes available"), std::string::npos);
    const std::byte not_a_blob[200] = {};
    EXPECT_FALSE(write_schema_blob(section->span(), not_a_blob).ok());
    // An unaligned caller buffer works: the feature word is written by memcpy.
    std::vector<std::byte> shifted(kSectionAlignment + 1);
    std::memcpy(shifted.data() + 1, section->bytes.data(), kSectionAlignment);
    std::span<std::byte> unaligned(shifted.data() + 1, kSectionAlignment);
    ASSERT_TRUE(embed_schema(unaligned, orders()).ok());
    EXPECT_EQ(read_embedded_schema(unaligned).status, EmbeddedSchemaStatus::Trusted);
    // A section cut short before the blob is reported, never read past.
    EXPECT_EQ(read_embedded_schema(unaligned.first(kEmbeddedSchemaOffset + 10)).status, EmbeddedSchemaStatus::Damaged);
    EXPECT_TRUE(embedded_schema_blob(unaligned.first(kEmbeddedSchemaOffset + 200)).empty());
    const auto cut = read_embedded_schema(unaligned.first(kEmbeddedSchemaOffset + 200));
    EXPECT_EQ(cut.status, EmbeddedSchemaStatus::Damaged);
    EXPECT_NE(cut.problem.find("only 72 bytes follow its header"), std::string::npos) << cut.problem;
}

}  // namespace
}  // namespace evring
