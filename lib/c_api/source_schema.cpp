// Finding a source's schema (source_schema.hpp).
#include "source_schema.hpp"

#include <fmt/format.h>

#include <span>

#include "evring/format.hpp"
#include "evring/ring.hpp"
#include "evring/schema_builtin.hpp"
#include "evring/schema_embed.hpp"

namespace evring::bindings {
namespace {

std::string describe_header(const SourceIdentity& id) {
    return fmt::format("content type {}, schema hash {}", id.content_type, hex_string(id.schema_hash));
}

// The schema the source carries, when it is trusted.
EmbeddedSchema carried_schema(const EventSource& source) {
    const SourceIdentity& id = source.identity();
    if (const MappedRing* ring = source.ring()) {
        // The header section is mapped in full for live rings and snapshots alike.
        const std::span<const std::byte> section(reinterpret_cast<const std::byte*>(&ring->header()),
                                                 kHeaderSectionSize);
        return read_embedded_schema(section);
    }
    if (!source.schema().empty()) return trusted_schema_blob(source.schema(), id.content_type, id.schema_hash);
    return {};
}

}  // namespace

Result<Schema> load_schema(const std::string& path_or_text) {
    if (path_or_text.find('\n') != std::string::npos) return Schema::parse(path_or_text, "<schema text>");
    return Schema::parse_file(path_or_text);
}

Result<SourceSchema> find_source_schema(const EventSource& source, const std::string& schema_path) {
    const SourceIdentity& id = source.identity();
    SourceSchema found;
    if (!schema_path.empty()) {
        auto schema = Schema::parse_file(schema_path);
        if (!schema) return std::move(schema).error();
        if (!schema_describes_ring(*schema, id.content_type, id.schema_hash))
            return Error(EPROTO, fmt::format("schema {} (content type {}, hash {}) does not describe {} ({})",
                                             schema_path, schema->content_type(), schema->hash_hex(), id.path,
                                             describe_header(id)));
        found.schema = std::move(*schema);
        found.origin = schema_path;
        return found;
    }
    EmbeddedSchema carried = carried_schema(source);
    if (carried.status == EmbeddedSchemaStatus::Trusted) {
        found.schema = std::move(carried.schema);
        found.origin = source.kind() == SourceKind::Recording ? "recording" : "embedded";
        return found;
    }
    found.warning = std::move(carried.problem);
    if (auto builtin = find_builtin_schema(id.content_type, id.schema_hash)) {
        found.origin = builtin->source_name();  // "built-in schema monad-exec-v1"
        found.schema = std::move(builtin);
    }
    return found;
}

}  // namespace evring::bindings
