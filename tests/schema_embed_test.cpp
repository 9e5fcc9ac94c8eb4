// The embedded-schema blob: round trip, every kind of damage detected, and
// the trust rule applied to a real ring file's header section.
#include "evring/schema_embed.hpp"

#include <openssl/sha.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include <gtest/gtest.h>

#include "evring/ring.hpp"
#include "evring/schema_builtin.hpp"
#include "support/schema_payload.hpp"

namespace evring {
namespace {

const Schema& orders() {
    static const Schema schema = test::load_test_schema("orders.toml");
    return schema;
}

// A ring in a memfd whose header names `content_type` and `hash`, mapped read-write.
MappedRing make_ring(std::uint16_t content_type, const SchemaHash& hash) {
    const int fd = ::memfd_create("evring-schema-embed-test", MFD_CLOEXEC);
    EXPECT_GE(fd, 0);
    RingParams params;
    params.content_type = content_type;
    params.schema_hash = hash;
    params.descriptor_shift = kMinDescriptorShift;
    params.payload_buf_shift = kMinPayloadBufShift;
    EXPECT_TRUE(initialize_ring_file(fd, params, "memfd").ok());
    auto ring = MappedRing::map(fd, Access::ReadWrite, "memfd");
    ::close(fd);
    if (!ring) std::abort();
    return std::move(ring).value();
}

std::span<std::byte> header_section(MappedRing& ring) {
    return {reinterpret_cast<std::byte*>(&ring.header()), kSectionAlignment};
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
    MappedRing ring = make_ring(orders().content_type(), orders().hash());
    EXPECT_EQ(read_embedded_schema(header_section(ring)).status, EmbeddedSchemaStatus::Absent);
    ASSERT_TRUE(embed_schema(header_section(ring), orders()).ok());
    const EmbeddedSchema found = read_embedded_schema(header_section(ring));
    ASSERT_EQ(found.status, EmbeddedSchemaStatus::Trusted) << found.problem;
    EXPECT_EQ(found.schema->hash(), orders().hash());
    // The extension block announces it and keeps its other features.
    const RingExtension* extension = extension_in(&ring.header());
    EXPECT_EQ(ring_features(*extension) & kRingFeatureEmbeddedSchema, kRingFeatureEmbeddedSchema);
    // The raw blob can be copied elsewhere (a recording) and parsed there.
    const auto blob = embedded_schema_blob(header_section(ring));
    ASSERT_EQ(blob.size(), kSchemaBlobHeaderSize + orders().source().size());
    EXPECT_TRUE(parse_schema_blob(blob).ok());
}

TEST(SchemaEmbed, AForeignHashTheSchemaDescribesIsTrustedToo) {
    const Schema v1 = builtin_schema("monad-exec-v1").value();
    MappedRing ring = make_ring(2, v1.describes().front());
    ASSERT_TRUE(embed_schema(header_section(ring), v1).ok());
    const EmbeddedSchema found = read_embedded_schema(header_section(ring));
    EXPECT_EQ(found.status, EmbeddedSchemaStatus::Trusted) << found.problem;
}

TEST(SchemaEmbed, ASchemaForAnotherHashOrContentTypeIsNeitherEmbeddedNorTrusted) {
    SchemaHash other{};
    other[0] = 1;
    MappedRing ring = make_ring(orders().content_type(), other);
    auto refused = embed_schema(header_section(ring), orders());
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message().find("does not describe"), std::string::npos);
    MappedRing wrong_type = make_ring(static_cast<std::uint16_t>(orders().content_type() + 1), orders().hash());
    EXPECT_FALSE(embed_schema(header_section(wrong_type), orders()).ok());

    // A blob placed by hand (a writer that ignored the rule) is read but not trusted.
    MappedRing placed = make_ring(orders().content_type(), other);
    const auto blob = serialize_schema_blob(orders());
    std::memcpy(header_section(placed).data() + kEmbeddedSchemaOffset, blob.data(), blob.size());
    extension_in(&placed.header())->features |= kRingFeatureEmbeddedSchema;
    const EmbeddedSchema found = read_embedded_schema(header_section(placed));
    EXPECT_EQ(found.status, EmbeddedSchemaStatus::Mismatch);
    EXPECT_FALSE(found.schema.has_value());
    EXPECT_NE(found.problem.find(schema_hash_hex(other)), std::string::npos) << found.problem;
}

TEST(SchemaEmbed, ADamagedBlobIsIgnoredWithOneProblemLine) {
    MappedRing ring = make_ring(orders().content_type(), orders().hash());
    ASSERT_TRUE(embed_schema(header_section(ring), orders()).ok());
    header_section(ring)[kEmbeddedSchemaOffset + kSchemaBlobHeaderSize + 10] ^= std::byte{0x20};
    const EmbeddedSchema found = read_embedded_schema(header_section(ring));
    EXPECT_EQ(found.status, EmbeddedSchemaStatus::Damaged);
    EXPECT_FALSE(found.schema.has_value());
    EXPECT_NE(found.problem.find("checksum"), std::string::npos) << found.problem;
    EXPECT_EQ(found.problem.find('\n'), std::string::npos);
}

TEST(SchemaEmbed, NeedsTheExtensionBlockAndRoomInTheSection) {
    std::vector<std::byte> bare(kSectionAlignment);
    RingHeader header{};
    header.content_type = orders().content_type();
    header.schema_hash = orders().hash();
    std::memcpy(bare.data(), &header, sizeof header);
    auto refused = embed_schema(bare, orders());
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message().find("no evring extension block"), std::string::npos);

    write_ring_extension(bare.data(), kRingFeatureDoorbell);
    auto small = embed_schema(std::span(bare).first(kEmbeddedSchemaOffset + 100), orders());
    ASSERT_FALSE(small.ok());
    EXPECT_NE(small.error().message().find("more than the 100 bytes available"), std::string::npos);
    // An unaligned caller buffer works: the feature word is written by memcpy.
    std::vector<std::byte> shifted(kSectionAlignment + 1);
    std::memcpy(shifted.data() + 1, bare.data(), bare.size());
    std::span<std::byte> section(shifted.data() + 1, kSectionAlignment);
    ASSERT_TRUE(embed_schema(section, orders()).ok());
    EXPECT_EQ(read_embedded_schema(section).status, EmbeddedSchemaStatus::Trusted);
    // A section cut short before the blob's header is reported, not read past.
    EXPECT_EQ(read_embedded_schema(section.first(kEmbeddedSchemaOffset + 10)).status, EmbeddedSchemaStatus::Damaged);
    EXPECT_TRUE(embedded_schema_blob(section.first(kEmbeddedSchemaOffset + 200)).empty());
}

}  // namespace
}  // namespace evring
