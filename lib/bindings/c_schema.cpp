// The C ABI's schema calls: the schema as JSON, names, decoding (evring.h).
#include <fmt/format.h>

#include <cstring>
#include <span>

#include "evring/schema/schema_decode.hpp"
#include "evring/schema/schema_render.hpp"
#include "handles.hpp"

using evring::bindings::guard;
using evring::bindings::set_error;

namespace {

// Copies `text` with its NUL into out, or reports the size needed.
int copy_out(const std::string& text, char* out, size_t out_size, size_t* needed) noexcept {
    if (needed != nullptr) *needed = text.size() + 1;
    if (out == nullptr || out_size < text.size() + 1) return EVRING_E_TOO_SMALL;
    std::memcpy(out, text.c_str(), text.size() + 1);
    return EVRING_OK;
}

int no_schema(evring_source* source) noexcept {
    const evring::SourceIdentity& id = source->source->identity();
    std::string why;
    try {
        why = fmt::format("{} has no schema: none embedded, and no built-in schema for content type {}", id.path,
                          id.content_type);
        if (!source->schema.warning.empty()) why += fmt::format(" ({})", source->schema.warning);
    } catch (...) {
    }
    return set_error(source, EVRING_E_NO_SCHEMA, std::move(why));
}

}  // namespace

extern "C" {

int evring_source_schema_json(evring_source* source, char* out, size_t out_size, size_t* needed) {
    if (source == nullptr) return EVRING_E_INVALID;
    if (!source->schema.schema) return no_schema(source);
    return guard(
        [&]() -> int {
            if (source->schema_json.empty()) source->schema_json = evring::schema_to_json(*source->schema.schema);
            return copy_out(source->schema_json, out, out_size, needed);
        },
        [&](int status, const char* message) { return set_error(source, status, message); });
}

const char* evring_source_schema_origin(const evring_source* source) {
    return source == nullptr ? "" : source->schema.origin.c_str();
}

const char* evring_source_type_name(const evring_source* source, uint16_t event_type) {
    if (source == nullptr || !source->schema.schema) return nullptr;
    const evring::SchemaEvent* event = source->schema.schema->event(event_type);
    return event == nullptr ? nullptr : event->name.c_str();
}

int evring_source_decode_json(evring_source* source, uint16_t event_type, const void* payload, size_t payload_size,
                              char* out, size_t out_size, size_t* needed) {
    if (source == nullptr || (payload == nullptr && payload_size > 0)) return EVRING_E_INVALID;
    if (!source->schema.schema) return no_schema(source);
    return guard(
        [&]() -> int {
            const evring::Schema& schema = *source->schema.schema;
            const std::span<const std::byte> bytes(static_cast<const std::byte*>(payload), payload_size);
            source->decoded.clear();
            const evring::DecodeError e = evring::append_fields_json(schema, event_type, bytes, source->decoded);
            if (!e.ok()) return set_error(source, EVRING_E_DECODE, evring::describe_decode_error(schema, e));
            return copy_out(source->decoded, out, out_size, needed);
        },
        [&](int status, const char* message) { return set_error(source, status, message); });
}

}  // extern "C"
