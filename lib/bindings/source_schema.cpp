// Finding a source's schema (source_schema.hpp).
#include "source_schema.hpp"

#include <fmt/format.h>

#include "evring/schema/schema_resolve.hpp"

namespace evring::bindings {

Result<Schema> load_schema(const std::string& path_or_text) {
    if (path_or_text.find('\n') != std::string::npos) return Schema::parse(path_or_text, "<schema text>");
    return Schema::parse_file(path_or_text);
}

// The one resolver (schema_resolve.hpp, through Reading) decides; this only
// names the origin the way the C ABI and Python report it.
SourceSchema source_schema_of(ResolvedSchema resolved, const std::string& schema_path) {
    SourceSchema found;
    found.warning = std::move(resolved.warning);
    switch (resolved.origin) {
        case SchemaOrigin::None: break;
        case SchemaOrigin::Embedded: found.origin = "embedded"; break;
        case SchemaOrigin::Recording: found.origin = "recording"; break;
        case SchemaOrigin::File: found.origin = schema_path; break;
        case SchemaOrigin::Builtin: found.origin = resolved.from; break;  // "built-in schema NAME"
    }
    found.schema = std::move(resolved.schema);
    return found;
}

}  // namespace evring::bindings
