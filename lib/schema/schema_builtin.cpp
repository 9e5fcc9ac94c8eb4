// The built-in schemas: parsed once, looked up by hash or by name.
#include <fmt/format.h>

#include <vector>

#include "schema/schema_builtin.hpp"
#include "evring/schema/schema_embed.hpp"
#include "schema/schema_builtin_data.hpp"

namespace evring {

namespace {

struct Parsed {
    std::string_view name;
    Schema schema;
};

// A built-in schema that does not parse is a bug caught by the tests
// (schema_builtin_test); here it is simply left out.
const std::vector<Parsed>& parsed() {
    static const std::vector<Parsed> schemas = [] {
        std::vector<Parsed> out;
        for (const auto& b : builtin_schemas()) {
            auto schema = Schema::parse(b.source, fmt::format("built-in schema {}", b.name));
            if (schema) out.push_back({b.name, std::move(schema).value()});
        }
        return out;
    }();
    return schemas;
}

}  // namespace

std::span<const BuiltinSchema> builtin_schemas() noexcept {
    return {detail::kBuiltinSchemas, detail::kBuiltinSchemaCount};
}

std::optional<Schema> find_builtin_schema(std::uint16_t content_type, const SchemaHash& hash) {
    for (const auto& p : parsed())
        if (schema_describes_ring(p.schema, content_type, hash)) return p.schema;
    return std::nullopt;
}

Result<Schema> builtin_schema(std::string_view name) {
    for (const auto& b : builtin_schemas())
        if (b.name == name) return Schema::parse(b.source, fmt::format("built-in schema {}", b.name));
    std::string known;
    for (const auto& b : builtin_schemas()) known += (known.empty() ? "" : ", ") + std::string(b.name);
    return Error(0, fmt::format("no built-in schema named '{}' (built in: {})", name, known));
}

}  // namespace evring
