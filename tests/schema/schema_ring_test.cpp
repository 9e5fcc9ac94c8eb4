// Self-describing rings, writer side: RingWriter::create embeds the schema of
// RingContent, refuses blobs that are not the header's schema or do not fit,
// shared writers agree on it, snapshots and ring sources carry it, and what
// other RING01 readers see of the file is unchanged.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>

#include <algorithm>

#include <gtest/gtest.h>

#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_extension.hpp"
#include "evring/ring/ring_writer.hpp"
#include "evring/schema/schema_embed.hpp"
#include "ring/schema_blob.hpp"
#include "ring/snapshot.hpp"
#include "evring/source/source_open.hpp"
#include "evring/schema/typed_publish.hpp"
#include "support/schema_payload.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::TempDir;

const Schema& orders() {
    static const Schema schema = test::load_test_schema("orders.toml");
    return schema;
}

Result<RingWriter> create(const std::string& path, RingContent content, WriterProcesses mode = WriterProcesses::One) {
    RingSpec spec = test::small_spec(path);
    spec.content = std::move(content);
    CreateOptions options;
    options.mode = mode;
    return RingWriter::create(spec, options);
}

std::string contents(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

TEST(RingSchema, TheWriterEmbedsTheSchemaItIsGivenAndReadersTrustIt) {
    TempDir dir;
    auto writer = create(dir.file("ring"), ring_content(orders()));
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    const RingHeader& header = writer->ring().header();
    EXPECT_EQ(header.content_type, orders().content_type());
    EXPECT_EQ(header.schema_hash, orders().hash());
    EXPECT_EQ(ring_features(*extension_in(&writer->ring().header())),
              kRingFeatureDoorbell | kRingFeatureEmbeddedSchema);

    // A reader's own read-only mapping of the file.
    const MappedRing reader = test::map_path(writer->path(), Access::ReadOnly);
    const EmbeddedSchema found = read_embedded_schema(reader.header_section());
    ASSERT_EQ(found.status, EmbeddedSchemaStatus::Trusted) << found.problem;
    EXPECT_EQ(found.schema->hash(), orders().hash());
    EXPECT_EQ(found.schema->source(), orders().source());
}

// What another implementation reads (the RING01 header, the sections) is the
// same byte for byte as a ring without a schema; only the extension block's
// feature word and the blob's own bytes differ.
TEST(RingSchema, OtherReadersSeeTheSameBytesAsInARingWithoutSchema) {
    TempDir dir;
    RingContent bare;
    bare.content_type = orders().content_type();
    bare.schema_hash = orders().hash();
    auto with = create(dir.file("with"), ring_content(orders()));
    auto without = create(dir.file("without"), bare);
    ASSERT_TRUE(with.ok()) << with.error().message();
    ASSERT_TRUE(without.ok()) << without.error().message();
    const std::string a = contents(with->path());
    const std::string b = contents(without->path());
    ASSERT_EQ(a.size(), b.size());
    ASSERT_EQ(a.size(), with->ring().layout().file_size);

    const std::size_t features_at = kRingExtensionOffset + offsetof(RingExtension, features);
    const std::size_t blob_size = serialize_schema_blob(orders()).size();
    std::size_t differing = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] == b[i]) continue;
        ++differing;
        const bool in_features = i >= features_at && i < features_at + 8;
        const bool in_blob = i >= kEmbeddedSchemaOffset && i < kEmbeddedSchemaOffset + blob_size;
        EXPECT_TRUE(in_features || in_blob) << "byte " << i << " differs";
        if (!in_features && !in_blob) break;
    }
    EXPECT_GT(differing, blob_size / 2);  // the blob is really there
    EXPECT_EQ(a.compare(0, sizeof(RingHeader), b, 0, sizeof(RingHeader)), 0);
    EXPECT_LE(kEmbeddedSchemaOffset + blob_size, kHeaderSectionSize);
    EXPECT_EQ(with->ring().layout().descriptors_offset, kHeaderSectionSize);
}

TEST(RingSchema, ABlobThatIsNotTheHeadersSchemaIsRefusedAndNoRingAppears) {
    TempDir dir;
    RingContent other_hash = ring_content(orders());
    other_hash.schema_hash[0] ^= 1;
    auto refused = create(dir.file("a"), other_hash);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message().find("another schema than the ring header's schema hash"), std::string::npos)
        << refused.error().message();
    EXPECT_NE(refused.error().message().find(dir.file("a")), std::string::npos) << refused.error().message();
    EXPECT_FALSE(exists(dir.file("a")));

    RingContent garbage = test::test_content();
    garbage.schema_blob.assign(300, std::byte{0x41});
    auto not_a_blob = create(dir.file("b"), garbage);
    ASSERT_FALSE(not_a_blob.ok());
    EXPECT_NE(not_a_blob.error().message().find("not a schema blob"), std::string::npos);

    RingContent cut = ring_content(orders());
    cut.schema_blob.resize(cut.schema_blob.size() - 1);
    auto short_blob = create(dir.file("c"), cut);
    ASSERT_FALSE(short_blob.ok());
    EXPECT_NE(short_blob.error().message().find("bytes follow it"), std::string::npos)
        << short_blob.error().message();
}

TEST(RingSchema, ABlobTooLargeForTheHeaderSectionIsRefusedWithTheRoomThereIs) {
    TempDir dir;
    RingContent huge = ring_content(orders());
    // A well-formed blob header claiming a body just past the room.
    const std::uint64_t body = kEmbeddedSchemaMaxSize - kSchemaBlobHeaderSize + 1;
    huge.schema_blob.resize(kSchemaBlobHeaderSize + body, std::byte{' '});
    std::memcpy(huge.schema_blob.data() + kSchemaBlobLengthOffset, &body, sizeof body);
    auto refused = create(dir.file("huge"), huge);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().errno_value(), EFBIG);
    EXPECT_NE(refused.error().message().find(std::to_string(kEmbeddedSchemaMaxSize) + " bytes the ring's header "
                                                                                       "section has room for"),
              std::string::npos)
        << refused.error().message();
    EXPECT_FALSE(exists(dir.file("huge")));
}

TEST(RingSchema, SharedWritersJoinWithTheSameSchemaOrWithout) {
    TempDir dir;
    const std::string path = dir.file("shared");
    auto first = create(path, ring_content(orders()), WriterProcesses::Many);
    ASSERT_TRUE(first.ok()) << first.error().message();
    auto same = create(path, ring_content(orders()), WriterProcesses::Many);
    ASSERT_TRUE(same.ok()) << same.error().message();
    EXPECT_FALSE(same->created());
    RingContent bare;
    bare.content_type = orders().content_type();
    bare.schema_hash = orders().hash();
    auto without = create(path, bare, WriterProcesses::Many);
    EXPECT_TRUE(without.ok()) << without.error().message();
    RingContent short_blob = bare;
    short_blob.schema_blob.assign(20, std::byte{0x45});  // not a blob: refused, never read past its end
    auto malformed = create(path, short_blob, WriterProcesses::Many);
    ASSERT_FALSE(malformed.ok());
    EXPECT_NE(malformed.error().message().find("not a schema blob"), std::string::npos)
        << malformed.error().message();

    // A ring created without a schema cannot gain one: its readers may already be reading.
    const std::string plain = dir.file("plain");
    auto creator = create(plain, bare, WriterProcesses::Many);
    ASSERT_TRUE(creator.ok()) << creator.error().message();
    auto joiner = create(plain, ring_content(orders()), WriterProcesses::Many);
    ASSERT_FALSE(joiner.ok());
    EXPECT_EQ(joiner.error().errno_value(), EPROTO);
    EXPECT_NE(joiner.error().message().find("carries no embedded schema"), std::string::npos)
        << joiner.error().message();
}

TEST(RingSchema, ADamagedEmbeddedBlobIsIgnoredWithOneLineNeverTrusted) {
    TempDir dir;
    auto writer = create(dir.file("ring"), ring_content(orders()));
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    MappedRing damaged = test::map_path(writer->path(), Access::ReadWrite);
    reinterpret_cast<std::byte*>(&damaged.header())[kEmbeddedSchemaOffset + kSchemaBlobHeaderSize + 3] ^=
        std::byte{1};
    const EmbeddedSchema found = read_embedded_schema(damaged.header_section());
    EXPECT_EQ(found.status, EmbeddedSchemaStatus::Damaged);
    EXPECT_FALSE(found.schema.has_value());
    EXPECT_NE(found.problem.find("checksum"), std::string::npos) << found.problem;
    EXPECT_EQ(found.problem.find('\n'), std::string::npos);
}

std::string write_snapshot_of(const MappedRing& ring, const std::string& path) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    EXPECT_GE(fd, 0);
    auto stats = write_snapshot(ring, fd, path);
    ::close(fd);
    EXPECT_TRUE(stats.ok()) << stats.error().message();
    return path;
}

TEST(RingSchema, SnapshotsCarryTheEmbeddedSchemaAndTheFeatureBits) {
    TempDir dir;
    auto writer = create(dir.file("ring"), ring_content(orders()));
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    Publisher publisher(writer->ring());
    for (std::uint64_t i = 0; i < 10; ++i) publish(publisher, 3, FlowTags{i, 0, 0, 0}, i);

    const std::string path = write_snapshot_of(writer->ring(), dir.file("ring.zst"));
    auto loaded = load_snapshot(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message();
    const std::span<const std::byte> section = loaded->ring.header_section();
    EXPECT_EQ(ring_features(*extension_in(&loaded->ring.header())),
              kRingFeatureDoorbell | kRingFeatureEmbeddedSchema);
    const EmbeddedSchema found = read_embedded_schema(section);
    ASSERT_EQ(found.status, EmbeddedSchemaStatus::Trusted) << found.problem;
    EXPECT_EQ(found.schema->source(), orders().source());
    // The whole header section is as in the ring, apart from the control
    // words (a snapshot's own), the doorbell word, the writer claim and the
    // interest line (the interest and writers-open words: writers_open.hpp),
    // which mean nothing there, and are zero.
    const std::span<const std::byte> live = writer->ring().header_section();
    EXPECT_EQ(std::memcmp(section.data() + sizeof(RingHeader), live.data() + sizeof(RingHeader),
                          kRingExtensionOffset + offsetof(RingExtension, doorbell) - sizeof(RingHeader)),
              0);
    const std::size_t after_doorbell = kRingExtensionOffset + offsetof(RingExtension, doorbell) + 4;
    const std::size_t claim = kRingExtensionOffset + offsetof(RingExtension, claim);
    const std::size_t after_claim = claim + sizeof(WriterClaim);
    EXPECT_EQ(std::memcmp(section.data() + after_doorbell, live.data() + after_doorbell, claim - after_doorbell), 0);
    const std::size_t interest_line = kRingExtensionOffset + offsetof(RingExtension, interest);
    const std::size_t after_interest_line = interest_line + 64;
    EXPECT_EQ(std::memcmp(section.data() + after_claim, live.data() + after_claim, interest_line - after_claim), 0);
    EXPECT_EQ(std::memcmp(section.data() + after_interest_line, live.data() + after_interest_line,
                          kHeaderSectionSize - after_interest_line),
              0);
    const std::byte* copied_line = section.data() + interest_line;
    EXPECT_TRUE(std::all_of(copied_line, copied_line + 64, [](std::byte b) { return b == std::byte{0}; }))
        << "a snapshot must not look like a ring its writers left open";
    EXPECT_EQ(extension_in(&writer->ring().header())->claim.claimed, 1u);  // the publisher above claimed the ring
    const WriterClaim& copied = extension_in(&loaded->ring.header())->claim;
    EXPECT_EQ(copied.claimed | copied.busy | copied.revoked, 0u);
}

TEST(RingSchema, RingAndSnapshotSourcesHandOutTheBlobAndRingsWithoutOneNothing) {
    TempDir dir;
    auto writer = create(dir.file("ring"), ring_content(orders()));
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    const std::vector<std::byte> blob = serialize_schema_blob(orders());

    auto live = open_source(writer->path(), {});
    ASSERT_TRUE(live.ok()) << live.error().message();
    ASSERT_EQ((*live)->schema().size(), blob.size());
    EXPECT_EQ(std::memcmp((*live)->schema().data(), blob.data(), blob.size()), 0);

    auto snapshot = open_source(write_snapshot_of(writer->ring(), dir.file("ring.zst")), {});
    ASSERT_TRUE(snapshot.ok()) << snapshot.error().message();
    EXPECT_EQ((*snapshot)->kind(), SourceKind::Snapshot);
    ASSERT_EQ((*snapshot)->schema().size(), blob.size());
    EXPECT_EQ(std::memcmp((*snapshot)->schema().data(), blob.data(), blob.size()), 0);

    auto plain = create(dir.file("plain"), test::test_content());
    ASSERT_TRUE(plain.ok()) << plain.error().message();
    auto bare = open_source(plain->path(), {});
    ASSERT_TRUE(bare.ok()) << bare.error().message();
    EXPECT_TRUE((*bare)->schema().empty());
    auto bare_snapshot = load_snapshot(write_snapshot_of(plain->ring(), dir.file("plain.zst")));
    ASSERT_TRUE(bare_snapshot.ok());
    EXPECT_EQ(read_embedded_schema(bare_snapshot->ring.header_section()).status, EmbeddedSchemaStatus::Absent);
}

}  // namespace
}  // namespace evring
