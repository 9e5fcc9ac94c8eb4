// Which schema decodes a source: the one resolution order (schema_resolve.hpp).
#include "evring/schema/schema_resolve.hpp"

#include <fmt/format.h>

#include <utility>

#include "evring/source/event_source.hpp"
#include "schema/schema_builtin.hpp"
#include "evring/schema/schema_embed.hpp"

namespace evring {
namespace {

// "schema 'orders' (content type 1001, hash H)", with the foreign hashes it
// describes, so a mismatch shows every hash that would have been accepted.
std::string schema_identity(const Schema& schema) {
    std::string text = fmt::format("schema '{}' (content type {}, hash {}", schema.content_name(),
                                   schema.content_type(), schema.hash_hex());
    for (const SchemaHash& described : schema.describes())
        text += fmt::format(", describing {}", schema_hash_hex(described));
    return text + ")";
}

// Step 2: the file given, read and checked whatever else is found.
Result<std::optional<Schema>> given_file(const SchemaSubject& subject, const std::string& path) {
    if (path.empty()) return std::optional<Schema>{};
    auto schema = Schema::parse_file(path);
    if (!schema) return std::move(schema).error();
    if (!schema_describes_ring(*schema, subject.content_type, subject.schema_hash))
        return Error(EINVAL, fmt::format("schema file '{}' does not describe {}: the file is {}; the source "
                                         "has content type {} and schema hash {}",
                                         path, subject.name, schema_identity(*schema), subject.content_type,
                                         schema_hash_hex(subject.schema_hash)));
    return std::optional<Schema>(std::move(schema).value());
}

// The name a built-in schema is known by ("monad-exec-v1").
std::string_view builtin_name(const Schema& schema) {
    for (const BuiltinSchema& builtin : builtin_schemas())
        if (builtin.source == schema.source()) return builtin.name;
    return schema.content_name();
}

std::string carried_from(const SchemaSubject& subject) {
    return subject.blob_origin == SchemaOrigin::Recording ? fmt::format("carried by {}", subject.name)
                                                          : fmt::format("embedded in {}", subject.name);
}

}  // namespace

const char* to_string(SchemaOrigin origin) noexcept {
    switch (origin) {
    case SchemaOrigin::None: return "none";
    case SchemaOrigin::Embedded: return "embedded";
    case SchemaOrigin::Recording: return "recording";
    case SchemaOrigin::File: return "file";
    case SchemaOrigin::Builtin: return "built-in";
    }
    return "unknown";
}

SchemaSubject schema_subject(const EventSource& source) {
    const SourceIdentity& id = source.identity();
    SchemaSubject subject;
    subject.name = fmt::format("{} '{}'", describe(id.kind), id.path.empty() ? id.location : id.path);
    subject.content_type = id.content_type;
    subject.schema_hash = id.schema_hash;
    subject.blob = source.schema();
    subject.blob_origin = id.kind == SourceKind::Recording ? SchemaOrigin::Recording : SchemaOrigin::Embedded;
    return subject;
}

Result<ResolvedSchema> resolve_schema(const SchemaSubject& subject, const SchemaResolveOptions& options) {
    auto file = given_file(subject, options.schema_file);
    if (!file) return std::move(file).error();

    ResolvedSchema out;
    if (!subject.blob.empty()) {
        EmbeddedSchema carried = trusted_schema_blob(subject.blob, subject.content_type, subject.schema_hash);
        if (carried.status == EmbeddedSchemaStatus::Trusted) {
            out.schema = std::move(carried.schema);
            out.origin = subject.blob_origin;
            out.from = carried_from(subject);
            return out;
        }
        out.warning = fmt::format("{}: {}", subject.name, carried.problem);
    }
    if (*file) {
        out.schema = std::move(*file);
        out.origin = SchemaOrigin::File;
        out.from = fmt::format("schema file '{}'", options.schema_file);
        return out;
    }
    if (auto builtin = find_builtin_schema(subject.content_type, subject.schema_hash)) {
        out.from = fmt::format("built-in schema {}", builtin_name(*builtin));
        out.schema = std::move(builtin);
        out.origin = SchemaOrigin::Builtin;
        return out;
    }
    out.from = "no schema";
    return out;
}

Result<ResolvedSchema> resolve_schema(const EventSource& source, const SchemaResolveOptions& options) {
    return resolve_schema(schema_subject(source), options);
}

}  // namespace evring
