// The C ABI's field lookups (evring.h, "Fields"): event types and payload
// fields through a source's or a writer's schema, so a binding reads and
// writes fields by name (the Rust crate, docs/rust.md). Paths are walked by
// schema/schema_field_path.hpp, the one walk --where uses too.
//
// A schema handle is the evring::Schema its source or writer holds, cast:
// it lives as long as they do and is immutable, so any thread may use it.
// Failures have no handle to keep a message in: it goes to this thread's
// last error (evring_last_error).
#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "handles.hpp"
#include "query/field_path.hpp"

using evring::bindings::big_enough;
using evring::bindings::deliver;
using evring::bindings::guard;
using evring::bindings::set_last_error;

namespace {

// The structs' sizes when they were first versioned: a caller's struct_size
// may not be smaller (evring.h, "How the ABI grows").
constexpr std::size_t kEventTypeInfoFirst = 24;
constexpr std::size_t kFieldFirst = 120;
static_assert(sizeof(evring_event_type_info) == kEventTypeInfoFirst);
static_assert(sizeof(evring_field) == kFieldFirst);

// The C enums are the C++ ones' values.
static_assert(EVRING_FIELD_STRING == static_cast<int>(evring::TypeKind::String));
static_assert(EVRING_FIELD_ENUM == static_cast<int>(evring::TypeKind::Enum));
static_assert(EVRING_SCALAR_BOOL == static_cast<int>(evring::Scalar::Bool));
static_assert(EVRING_SCALAR_U256 == static_cast<int>(evring::Scalar::U256));

const evring::Schema& schema_of(const evring_schema* schema) noexcept {
    return *reinterpret_cast<const evring::Schema*>(schema);
}

const evring_schema* handle_of(const std::optional<evring::Schema>& schema) noexcept {
    return schema ? reinterpret_cast<const evring_schema*>(&*schema) : nullptr;
}

int invalid(std::string message) { return set_last_error(evring::Error(EINVAL, std::move(message))); }

// guard()'s answer to an exception: out of memory, or a message.
int failed(int status, const char* message) noexcept {
    return set_last_error(evring::Error(status == EVRING_E_NOMEM ? ENOMEM : EINVAL, message));
}

int too_small(const char* function, const char* type, std::uint32_t given) {
    return invalid(evring::bindings::size_message(function, type, given));
}

int no_such_type(const evring::Schema& schema, std::string_view wanted) {
    std::string names;
    for (const auto& e : schema.events()) names += fmt::format("{}{} {}", names.empty() ? "" : ", ", e.number, e.name);
    return invalid(fmt::format("schema '{}' has no event type {} (its types: {})", schema.content_name(), wanted, names));
}

int describe_event(const evring::Schema& schema, const evring::SchemaEvent& e, evring_event_type_info* info) {
    evring_event_type_info got{};
    got.number = e.number;
    got.fixed_size = schema.fixed_size(e);
    const evring::SchemaStruct* payload = schema.payload_of(e);
    got.trailing_arrays = payload == nullptr ? 0 : static_cast<std::uint32_t>(payload->trailing.size());
    got.name = e.name.c_str();
    deliver(info, got);
    return EVRING_OK;
}

// A scalar (or an enum's integer) as its evring_scalar; -1 for other kinds.
int scalar_of(const evring::SchemaType& t) noexcept {
    return t.kind == evring::TypeKind::Scalar || t.kind == evring::TypeKind::Enum ? static_cast<int>(t.scalar) : -1;
}

void copy_name(evring_field& out, const std::string& name) noexcept {
    const std::size_t n = std::min(name.size(), sizeof out.type_name - 1);
    std::memcpy(out.type_name, name.data(), n);
    out.type_name[n] = '\0';
}

// Trailing array `index` of `payload`: its count field and elements.
void describe_trailing(const evring::Schema& schema, const evring::SchemaStruct& payload, std::size_t index,
                       evring_field& out) {
    const evring::SchemaTrailing& t = payload.trailing[index];
    const evring::SchemaType& element = schema.type(t.element);
    out.trailing = static_cast<std::int32_t>(index);
    out.count_offset = t.count_offset;
    out.count_size = evring::scalar_size(t.count_scalar);
    out.trailing_element_size = element.size;
}

void describe_whole_trailing(const evring::Schema& schema, const evring::SchemaStruct& payload, std::size_t index,
                             evring_field& out) {
    const evring::SchemaTrailing& t = payload.trailing[index];
    const evring::SchemaType& element = schema.type(t.element);
    out.kind = EVRING_FIELD_TRAILING;
    out.scalar = scalar_of(element);
    out.element_size = element.size;
    describe_trailing(schema, payload, index, out);
    copy_name(out, fmt::format("{}[{}]", t.bytes ? "bytes" : schema.type_name(t.element), t.count_path));
}

std::string field_names(const evring::SchemaStruct& payload) {
    std::string names;
    for (const auto& f : payload.fields) names += (names.empty() ? "" : ", ") + f.name;
    for (const auto& t : payload.trailing) names += (names.empty() ? "" : ", ") + t.name;
    return names;
}

int find_field(const evring::Schema& schema, std::uint16_t event_type, const char* path, evring_field* field) {
    const evring::SchemaEvent* e = schema.event(event_type);
    if (e == nullptr) return no_such_type(schema, std::to_string(event_type));
    auto steps = evring::detail::parse_field_path(path, "field path");
    if (!steps) return set_last_error(steps.error());
    const evring::SchemaStruct* payload = schema.payload_of(*e);
    const auto place = evring::detail::find_field_path(schema, *e, *steps);
    if (!place || place->steps < steps->size())
        return invalid(fmt::format("event type {} ({}) of schema '{}' has no field '{}' ({})", e->name, e->number,
                                   schema.content_name(), path,
                                   payload == nullptr ? std::string("its payload is empty")
                                                      : "its fields: " + field_names(*payload)));
    evring_field got{};
    got.trailing = -1;
    if (place->trailing >= 0 && !place->element) {
        describe_whole_trailing(schema, *payload, static_cast<std::size_t>(place->trailing), got);
    } else {
        const evring::SchemaType& t = schema.type(place->type);
        got.kind = static_cast<int>(t.kind);
        got.offset = place->offset;
        got.size = t.size;
        if (t.kind == evring::TypeKind::Bytes || t.kind == evring::TypeKind::String ||
            t.kind == evring::TypeKind::Array)
            got.count = t.count;
        if (t.kind == evring::TypeKind::Array) {
            got.element_size = schema.type(t.element).size;
            got.scalar = scalar_of(schema.type(t.element));
        } else {
            got.scalar = scalar_of(t);
        }
        if (place->trailing >= 0) {
            describe_trailing(schema, *payload, static_cast<std::size_t>(place->trailing), got);
            got.element_index = place->index;
        }
        copy_name(got, schema.type_name(place->type));
    }
    deliver(field, got);
    return EVRING_OK;
}

}  // namespace

extern "C" {

const evring_schema* evring_source_schema(const evring_source* source) {
    return source == nullptr ? nullptr : handle_of(source->schema.schema);
}

const evring_schema* evring_writer_schema(const evring_writer* writer) {
    return writer == nullptr ? nullptr : handle_of(writer->schema);
}

int evring_schema_event_by_name(const evring_schema* schema, const char* name, evring_event_type_info* info) {
    return guard(
        [&]() -> int {
            if (schema == nullptr || name == nullptr || info == nullptr)
                return invalid("evring_schema_event_by_name: no schema, name or info given");
            if (!big_enough(info, kEventTypeInfoFirst))
                return too_small("evring_schema_event_by_name", "evring_event_type_info", info->struct_size);
            const evring::Schema& s = schema_of(schema);
            const evring::SchemaEvent* e = s.event(std::string_view(name));
            if (e == nullptr) return no_such_type(s, fmt::format("'{}'", name));
            return describe_event(s, *e, info);
        },
        failed);
}

int evring_schema_event_by_number(const evring_schema* schema, uint16_t number, evring_event_type_info* info) {
    return guard(
        [&]() -> int {
            if (schema == nullptr || info == nullptr) return invalid("evring_schema_event_by_number: no schema or info given");
            if (!big_enough(info, kEventTypeInfoFirst))
                return too_small("evring_schema_event_by_number", "evring_event_type_info", info->struct_size);
            const evring::Schema& s = schema_of(schema);
            const evring::SchemaEvent* e = s.event(number);
            if (e == nullptr) return no_such_type(s, std::to_string(number));
            return describe_event(s, *e, info);
        },
        failed);
}

int evring_schema_field(const evring_schema* schema, uint16_t event_type, const char* path, evring_field* field) {
    return guard(
        [&]() -> int {
            if (schema == nullptr || path == nullptr || field == nullptr)
                return invalid("evring_schema_field: no schema, path or field given");
            if (!big_enough(field, kFieldFirst)) return too_small("evring_schema_field", "evring_field", field->struct_size);
            return find_field(schema_of(schema), event_type, path, field);
        },
        failed);
}

int evring_schema_trailing(const evring_schema* schema, uint16_t event_type, uint32_t index, evring_field* field) {
    return guard(
        [&]() -> int {
            if (schema == nullptr || field == nullptr) return invalid("evring_schema_trailing: no schema or field given");
            if (!big_enough(field, kFieldFirst))
                return too_small("evring_schema_trailing", "evring_field", field->struct_size);
            const evring::Schema& s = schema_of(schema);
            const evring::SchemaEvent* e = s.event(event_type);
            if (e == nullptr) return no_such_type(s, std::to_string(event_type));
            const evring::SchemaStruct* payload = s.payload_of(*e);
            const std::size_t arrays = payload == nullptr ? 0 : payload->trailing.size();
            if (index >= arrays)
                return invalid(fmt::format("event type {} ({}) of schema '{}' has {} trailing arrays; there is no "
                                           "array {}", e->name, e->number, s.content_name(), arrays, index));
            evring_field got{};
            describe_whole_trailing(s, *payload, index, got);
            deliver(field, got);
            return EVRING_OK;
        },
        failed);
}

}  // extern "C"
