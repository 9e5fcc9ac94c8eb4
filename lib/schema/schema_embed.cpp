// The embedded-schema blob: writing, verifying, and the trust rule
// (byte table in evring/schema/schema_embed.hpp and docs/schema.md).
#include <openssl/evp.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "evring/schema/schema_embed.hpp"
#include "ring/schema_blob.hpp"

namespace evring {

namespace {

constexpr std::size_t kVersionAt = 8, kEncodingAt = 12, kLengthAt = 16, kHashAt = 24, kChecksumAt = 56;

template <class T>
T load(const std::byte* p) noexcept {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

template <class T>
void store(std::byte* p, T v) noexcept {
    std::memcpy(p, &v, sizeof v);
}

// SHA-256 of the 128-byte header with its checksum field zeroed, then the body.
std::optional<SchemaHash> blob_checksum(const std::byte* header, const std::byte* body, std::size_t body_length) {
    std::array<std::byte, kSchemaBlobHeaderSize> copy;
    std::memcpy(copy.data(), header, copy.size());
    std::memset(copy.data() + kChecksumAt, 0, sizeof(SchemaHash));
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    SchemaHash digest{};
    unsigned int length = 0;
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1 ||
        EVP_DigestUpdate(ctx.get(), copy.data(), copy.size()) != 1 ||
        EVP_DigestUpdate(ctx.get(), body, body_length) != 1 ||
        EVP_DigestFinal_ex(ctx.get(), digest.data(), &length) != 1)
        return std::nullopt;
    return digest;
}

}  // namespace

std::vector<std::byte> serialize_schema_blob(const Schema& schema) {
    const std::string& body = schema.source();
    std::vector<std::byte> blob(kSchemaBlobHeaderSize + body.size(), std::byte{0});
    std::memcpy(blob.data(), kSchemaBlobMagic.data(), kSchemaBlobMagic.size());
    store<std::uint32_t>(blob.data() + kVersionAt, kSchemaBlobVersion);
    store<std::uint32_t>(blob.data() + kEncodingAt, kSchemaBlobSourceEncoding);
    store<std::uint64_t>(blob.data() + kLengthAt, body.size());
    std::memcpy(blob.data() + kHashAt, schema.hash().data(), schema.hash().size());
    std::memcpy(blob.data() + kSchemaBlobHeaderSize, body.data(), body.size());
    const auto checksum = blob_checksum(blob.data(), blob.data() + kSchemaBlobHeaderSize, body.size());
    if (checksum) std::memcpy(blob.data() + kChecksumAt, checksum->data(), checksum->size());
    return blob;
}

RingContent ring_content(const Schema& schema) {
    RingContent content;
    content.content_type = schema.content_type();
    content.schema_hash = schema.hash();
    content.schema_blob = serialize_schema_blob(schema);
    return content;
}

Result<Schema> parse_schema_blob(std::span<const std::byte> blob) {
    if (blob.size() < kSchemaBlobHeaderSize)
        return Error(0, fmt::format("schema blob is {} bytes, shorter than its {}-byte header", blob.size(),
                                    kSchemaBlobHeaderSize));
    if (std::memcmp(blob.data(), kSchemaBlobMagic.data(), kSchemaBlobMagic.size()) != 0)
        return Error(0, "schema blob has no EVRGSCH1 magic");
    const auto version = load<std::uint32_t>(blob.data() + kVersionAt);
    if (version != kSchemaBlobVersion)
        return Error(0, fmt::format("schema blob version {} is not one this evring reads ({})", version,
                                    kSchemaBlobVersion));
    const auto encoding = load<std::uint32_t>(blob.data() + kEncodingAt);
    if (encoding != kSchemaBlobSourceEncoding)
        return Error(0, fmt::format("schema blob has unknown encoding {}", encoding));
    const auto length = load<std::uint64_t>(blob.data() + kLengthAt);
    if (length > blob.size() - kSchemaBlobHeaderSize)
        return Error(0, fmt::format("schema blob claims a {}-byte body, but only {} bytes follow its header", length,
                                    blob.size() - kSchemaBlobHeaderSize));
    const std::byte* body = blob.data() + kSchemaBlobHeaderSize;
    const auto checksum = blob_checksum(blob.data(), body, static_cast<std::size_t>(length));
    if (!checksum) return Error(0, "schema blob: SHA-256 unavailable (OpenSSL)");
    if (std::memcmp(checksum->data(), blob.data() + kChecksumAt, checksum->size()) != 0)
        return Error(0, "schema blob checksum does not match its contents (damaged)");
    auto schema = Schema::parse(std::string_view(reinterpret_cast<const char*>(body), length), "embedded schema");
    if (!schema) return std::move(schema).context("schema blob");
    SchemaHash recorded;
    std::memcpy(recorded.data(), blob.data() + kHashAt, recorded.size());
    if (recorded != schema->hash())
        return Error(0, fmt::format("schema blob records hash {} but its schema hashes to {} (written by an evring "
                                    "with another canonical form?)",
                                    schema_hash_hex(recorded), schema->hash_hex()));
    return schema;
}

bool schema_describes_ring(const Schema& schema, std::uint16_t content_type, const SchemaHash& schema_hash) noexcept {
    return schema.content_type() == content_type && schema.matches(schema_hash);
}

Status embed_schema(std::span<std::byte> header_section, const Schema& schema) {
    if (header_section.size() < sizeof(RingHeader))
        return Error(0, "embedding a schema: the header section is shorter than a RING01 header");
    RingHeader header;
    std::memcpy(&header, header_section.data(), sizeof header);
    if (!schema_describes_ring(schema, header.content_type, header.schema_hash))
        return Error(0, fmt::format("embedding a schema: schema '{}' (content type {}, hash {}) does not describe "
                                    "a ring of content type {} with schema hash {}",
                                    schema.content_name(), schema.content_type(), schema.hash_hex(),
                                    header.content_type, schema_hash_hex(header.schema_hash)));
    return write_schema_blob(header_section, serialize_schema_blob(schema));
}

EmbeddedSchema trusted_schema_blob(std::span<const std::byte> blob, std::uint16_t content_type,
                                   const SchemaHash& schema_hash) {
    EmbeddedSchema out;
    out.status = EmbeddedSchemaStatus::Damaged;
    auto schema = parse_schema_blob(blob);
    if (!schema) {
        out.problem = "embedded schema ignored: " + schema.error().message();
        return out;
    }
    if (!schema_describes_ring(*schema, content_type, schema_hash)) {
        out.status = EmbeddedSchemaStatus::Mismatch;
        out.problem = fmt::format("embedded schema ignored: it is schema '{}' (content type {}, hash {}), but the "
                                  "ring has content type {} and schema hash {}",
                                  schema->content_name(), schema->content_type(), schema->hash_hex(), content_type,
                                  schema_hash_hex(schema_hash));
        return out;
    }
    out.status = EmbeddedSchemaStatus::Trusted;
    out.schema = std::move(schema).value();
    return out;
}

EmbeddedSchema read_embedded_schema(std::span<const std::byte> header_section) {
    EmbeddedSchema out;
    if ((detail::section_features(header_section) & kRingFeatureEmbeddedSchema) == 0) return out;
    if (header_section.size() < kEmbeddedSchemaOffset + kSchemaBlobHeaderSize) {
        out.status = EmbeddedSchemaStatus::Damaged;
        out.problem = "embedded schema ignored: the header section is cut short before the schema blob";
        return out;
    }
    RingHeader header;
    std::memcpy(&header, header_section.data(), sizeof header);
    const std::uint64_t room =
        std::min<std::uint64_t>(kEmbeddedSchemaMaxSize, header_section.size() - kEmbeddedSchemaOffset);
    return trusted_schema_blob(header_section.subspan(kEmbeddedSchemaOffset, room), header.content_type,
                               header.schema_hash);
}

}  // namespace evring
