// The one schema resolver: every branch of the order (carried blob, --schema
// file, built-in, none), mismatches as errors showing both hashes, damaged or
// foreign blobs ignored with one warning, and opened sources of each kind.
#include "evring/schema/schema_resolve.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "recording/recording_writer.hpp"
#include "evring/ring/ring_writer.hpp"
#include "schema/schema_builtin.hpp"
#include "evring/schema/schema_embed.hpp"
#include "ring/schema_blob.hpp"
#include "evring/source/source_open.hpp"
#include "support/schema_payload.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

std::string orders_file() { return test::schema_test_dir() + "/orders.toml"; }

std::string schemas_dir() {
    const char* dir = std::getenv("EVRING_SCHEMAS_DIR");
    return dir != nullptr ? dir : "schemas";
}

const Schema& orders() {
    static const Schema schema = test::load_test_schema("orders.toml");
    return schema;
}

const Schema& monad_v1() {
    static const Schema schema = builtin_schema("monad-exec-v1").value();
    return schema;
}

// A source of orders events that carries `blob`.
SchemaSubject orders_subject(std::span<const std::byte> blob = {}) {
    SchemaSubject subject;
    subject.name = "ring file '/dev/shm/orders'";
    subject.content_type = orders().content_type();
    subject.schema_hash = orders().hash();
    subject.blob = blob;
    return subject;
}

ResolvedSchema resolved(const SchemaSubject& subject, std::string file = {}) {
    auto found = resolve_schema(subject, {.schema_file = std::move(file)});
    if (!found) {
        ADD_FAILURE() << found.error().message();
        return {};
    }
    return std::move(found).value();
}

TEST(SchemaResolve, ATrustedEmbeddedSchemaComesFirst) {
    const std::vector<std::byte> blob = serialize_schema_blob(orders());
    const ResolvedSchema found = resolved(orders_subject(blob));
    ASSERT_TRUE(found.schema.has_value());
    EXPECT_EQ(found.origin, SchemaOrigin::Embedded);
    EXPECT_EQ(found.schema->hash(), orders().hash());
    EXPECT_EQ(found.from, "embedded in ring file '/dev/shm/orders'");
    EXPECT_TRUE(found.warning.empty());
    // A matching file given too is checked, but the source's own schema is used.
    EXPECT_EQ(resolved(orders_subject(blob), orders_file()).origin, SchemaOrigin::Embedded);
}

TEST(SchemaResolve, ARecordingsSchemaBlockIsNamedAsSuch) {
    const std::vector<std::byte> blob = serialize_schema_blob(orders());
    SchemaSubject subject = orders_subject(blob);
    subject.name = "recording 'x.evrec'";
    subject.blob_origin = SchemaOrigin::Recording;
    const ResolvedSchema found = resolved(subject);
    EXPECT_EQ(found.origin, SchemaOrigin::Recording);
    EXPECT_EQ(found.from, "carried by recording 'x.evrec'");
}

TEST(SchemaResolve, AFileWhoseOwnHashMatchesIsUsedWhenTheSourceCarriesNone) {
    const ResolvedSchema found = resolved(orders_subject(), orders_file());
    ASSERT_TRUE(found.schema.has_value());
    EXPECT_EQ(found.origin, SchemaOrigin::File);
    EXPECT_EQ(found.from, "schema file '" + orders_file() + "'");
}

TEST(SchemaResolve, AFileDeclaringTheSourcesForeignHashIsUsedBeforeTheBuiltIn) {
    SchemaSubject monad;
    monad.name = "snapshot 'emn.zst'";
    monad.content_type = 2;
    monad.schema_hash = monad_v1().describes().front();
    const ResolvedSchema found = resolved(monad, schemas_dir() + "/monad-exec-v1.toml");
    EXPECT_EQ(found.origin, SchemaOrigin::File);
    ASSERT_TRUE(found.schema.has_value());
    EXPECT_EQ(found.schema->hash(), monad_v1().hash());
}

TEST(SchemaResolve, AFileForAnotherHashIsAnErrorShowingBothHashes) {
    SchemaSubject other = orders_subject();
    other.schema_hash[5] ^= 0x40;
    auto found = resolve_schema(other, {.schema_file = orders_file()});
    ASSERT_FALSE(found.ok());
    const std::string& message = found.error().message();
    EXPECT_NE(message.find(orders().hash_hex()), std::string::npos) << message;
    EXPECT_NE(message.find(schema_hash_hex(other.schema_hash)), std::string::npos) << message;
    EXPECT_NE(message.find("does not describe ring file '/dev/shm/orders'"), std::string::npos) << message;

    // Another content type with the same hash is no match either.
    SchemaSubject wrong_type = orders_subject();
    wrong_type.content_type = 7;
    EXPECT_FALSE(resolve_schema(wrong_type, {.schema_file = orders_file()}).ok());
}

TEST(SchemaResolve, AGivenFileIsCheckedEvenWhenTheSourceCarriesItsSchema) {
    // The embedded schema would win, but the file asked for is not this
    // source's: the user hears about it instead of having it ignored.
    const std::vector<std::byte> blob = serialize_schema_blob(orders());
    auto found = resolve_schema(orders_subject(blob), {.schema_file = schemas_dir() + "/monad-exec-v1.toml"});
    ASSERT_FALSE(found.ok());
    EXPECT_NE(found.error().message().find("does not describe"), std::string::npos);
}

TEST(SchemaResolve, AnUnreadableOrInvalidFileIsAnErrorWithItsPosition) {
    test::TempDir dir;
    const std::string bad = dir.file("bad.toml");
    std::ofstream(bad) << "content_type = 1001\ncontent_name = \"x\"\n[[event]]\nnumber = 2\nname = \"E\"\n"
                          "fields = [ { name = \"a\", type = \"u9\" } ]\n";
    auto invalid = resolve_schema(orders_subject(), {.schema_file = bad});
    ASSERT_FALSE(invalid.ok());
    EXPECT_NE(invalid.error().message().find("bad.toml:6:"), std::string::npos) << invalid.error().message();
    EXPECT_NE(invalid.error().message().find("unknown type 'u9'"), std::string::npos);
    auto missing = resolve_schema(orders_subject(), {.schema_file = dir.file("missing.toml")});
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message().find("missing.toml"), std::string::npos);
}

TEST(SchemaResolve, AKnownForeignHashFindsTheBuiltInSchema) {
    SchemaSubject monad;
    monad.name = "snapshot 'emn.zst'";
    monad.content_type = 2;
    monad.schema_hash = monad_v1().describes().front();
    const ResolvedSchema found = resolved(monad);
    EXPECT_EQ(found.origin, SchemaOrigin::Builtin);
    EXPECT_EQ(found.from, "built-in schema monad-exec-v1");
    ASSERT_TRUE(found.schema.has_value());
    EXPECT_EQ(found.schema->hash(), monad_v1().hash());
}

TEST(SchemaResolve, NothingKnownMeansNoSchemaAndNoWarning) {
    SchemaSubject unknown = orders_subject();
    unknown.schema_hash[0] ^= 1;
    const ResolvedSchema found = resolved(unknown);
    EXPECT_FALSE(found.schema.has_value());
    EXPECT_EQ(found.origin, SchemaOrigin::None);
    EXPECT_EQ(found.from, "no schema");
    EXPECT_TRUE(found.warning.empty());
    EXPECT_STREQ(to_string(found.origin), "none");
}

TEST(SchemaResolve, ADamagedBlobIsIgnoredWithOneWarningAndTheNextStepUsed) {
    std::vector<std::byte> blob = serialize_schema_blob(orders());
    blob[kSchemaBlobHeaderSize + 7] ^= std::byte{0x08};
    const ResolvedSchema none = resolved(orders_subject(blob));
    EXPECT_EQ(none.origin, SchemaOrigin::None);
    EXPECT_FALSE(none.schema.has_value());
    EXPECT_NE(none.warning.find("ring file '/dev/shm/orders': embedded schema ignored"), std::string::npos)
        << none.warning;
    EXPECT_NE(none.warning.find("checksum"), std::string::npos) << none.warning;
    EXPECT_EQ(none.warning.find('\n'), std::string::npos);

    const ResolvedSchema file = resolved(orders_subject(blob), orders_file());
    EXPECT_EQ(file.origin, SchemaOrigin::File);
    EXPECT_FALSE(file.warning.empty());
}

TEST(SchemaResolve, AnIntactBlobForAnotherHashIsNeverTrusted) {
    // A Monad ring that (wrongly) carries the orders schema: the built-in wins.
    const std::vector<std::byte> blob = serialize_schema_blob(orders());
    SchemaSubject monad;
    monad.name = "ring file 'm'";
    monad.content_type = 2;
    monad.schema_hash = monad_v1().describes().front();
    monad.blob = blob;
    const ResolvedSchema found = resolved(monad);
    EXPECT_EQ(found.origin, SchemaOrigin::Builtin);
    EXPECT_NE(found.warning.find("embedded schema ignored"), std::string::npos) << found.warning;
    EXPECT_NE(found.warning.find(orders().hash_hex()), std::string::npos) << found.warning;
}

// The same through open_source, for each kind of source.
TEST(SchemaResolve, OpenedRingsSnapshotsAndRecordingsResolveTheirOwnSchema) {
    test::TempDir dir;
    RingSpec spec = test::small_spec(dir.file("ring"));
    spec.content = ring_content(orders());
    auto writer = RingWriter::create(spec);
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    auto ring = open_source(writer->path(), {});
    ASSERT_TRUE(ring.ok()) << ring.error().message();
    auto from_ring = resolve_schema(**ring);
    ASSERT_TRUE(from_ring.ok()) << from_ring.error().message();
    EXPECT_EQ(from_ring->origin, SchemaOrigin::Embedded);
    EXPECT_EQ(from_ring->from, "embedded in ring file '" + writer->path() + "'");

    const std::string recording_path = dir.file("x.evrec");
    {
        RecordingOptions options;
        options.schema = (*ring)->schema();
        auto recording = RecordingWriter::create(recording_path, writer->ring().header(), options);
        ASSERT_TRUE(recording.ok()) << recording.error().message();
        ASSERT_TRUE(recording->finish().ok());
    }
    auto replay = open_source(recording_path, {});
    ASSERT_TRUE(replay.ok()) << replay.error().message();
    auto from_recording = resolve_schema(**replay);
    ASSERT_TRUE(from_recording.ok()) << from_recording.error().message();
    EXPECT_EQ(from_recording->origin, SchemaOrigin::Recording);
    ASSERT_TRUE(from_recording->schema.has_value());
    EXPECT_EQ(from_recording->schema->hash(), orders().hash());

    // A ring without a schema whose hash nothing knows: none, no warning.
    auto plain = RingWriter::create(test::small_spec(dir.file("plain")));
    ASSERT_TRUE(plain.ok()) << plain.error().message();
    auto bare = open_source(plain->path(), {});
    ASSERT_TRUE(bare.ok()) << bare.error().message();
    auto nothing = resolve_schema(**bare);
    ASSERT_TRUE(nothing.ok());
    EXPECT_EQ(nothing->origin, SchemaOrigin::None);
    EXPECT_TRUE(nothing->warning.empty());
}

}  // namespace
}  // namespace evring
