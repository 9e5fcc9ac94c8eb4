// The Schema value: accessors and look-ups over the shared parsed data.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "evring/schema/schema.hpp"
#include "schema/schema_data.hpp"
#include "schema/schema_field_path.hpp"

namespace evring {

namespace {

bool is_signed_scalar(Scalar s) noexcept {
    return s == Scalar::I8 || s == Scalar::I16 || s == Scalar::I32 || s == Scalar::I64;
}

// Orders enum values by numeric value, signed or not.
bool value_less(bool is_signed, std::uint64_t a, std::uint64_t b) noexcept {
    return is_signed ? static_cast<std::int64_t>(a) < static_cast<std::int64_t>(b) : a < b;
}

}  // namespace

const SchemaField* SchemaStruct::field(std::string_view wanted) const noexcept {
    for (const auto& f : fields)
        if (f.name == wanted) return &f;
    return nullptr;
}

bool SchemaEnum::is_signed() const noexcept { return is_signed_scalar(underlying); }

std::string_view SchemaEnum::name_of(std::uint64_t bits) const noexcept {
    const bool s = is_signed();
    auto it = std::lower_bound(values.begin(), values.end(), bits,
                               [s](const SchemaEnumValue& v, std::uint64_t b) { return value_less(s, v.bits, b); });
    if (it == values.end() || it->bits != bits) return {};
    return it->name;
}

const SchemaEnumValue* SchemaEnum::value(std::string_view wanted) const noexcept {
    for (const auto& v : values)
        if (v.name == wanted) return &v;
    return nullptr;
}

Schema detail::SchemaData::finish(std::unique_ptr<SchemaData> data) {
    auto& events = data->events;
    std::sort(events.begin(), events.end(),
              [](const SchemaEvent& a, const SchemaEvent& b) { return a.number < b.number; });
    for (auto& e : data->enums) {
        const bool s = e.is_signed();
        std::sort(e.values.begin(), e.values.end(),
                  [s](const SchemaEnumValue& a, const SchemaEnumValue& b) { return value_less(s, a.bits, b.bits); });
    }
    std::sort(data->describes.begin(), data->describes.end());
    const std::size_t slots = events.empty() ? 0 : std::size_t{events.back().number} + 1;
    data->event_slot.assign(slots, -1);
    data->events_by_name.clear();
    for (std::size_t i = 0; i < events.size(); ++i) {
        data->event_slot[events[i].number] = static_cast<std::int32_t>(i);
        data->events_by_name.push_back(static_cast<std::uint32_t>(i));
    }
    std::sort(data->events_by_name.begin(), data->events_by_name.end(),
              [&events](std::uint32_t a, std::uint32_t b) { return events[a].name < events[b].name; });
    data->canonical = canonical_form_of(*data);
    data->hash = sha256(data->canonical);
    return Schema(std::shared_ptr<const SchemaData>(std::move(data)));
}

std::uint16_t Schema::content_type() const noexcept { return data_->content_type; }
const std::string& Schema::content_name() const noexcept { return data_->content_name; }
const std::string& Schema::description() const noexcept { return data_->description; }
std::uint32_t Schema::payload_alignment() const noexcept { return data_->payload_alignment; }
const std::array<std::string, 4>& Schema::flow_tags() const noexcept { return data_->flow_tags; }

std::optional<std::size_t> Schema::flow_tag(std::string_view name) const noexcept {
    if (name.empty()) return std::nullopt;
    for (std::size_t i = 0; i < data_->flow_tags.size(); ++i)
        if (data_->flow_tags[i] == name) return i;
    return std::nullopt;
}

const std::vector<SchemaHash>& Schema::describes() const noexcept { return data_->describes; }

const std::vector<std::string>& Schema::keywords() const noexcept { return data_->keywords; }

std::optional<unsigned> Schema::keyword(std::string_view name) const noexcept {
    for (std::size_t i = 0; i < data_->keywords.size(); ++i)
        if (data_->keywords[i] == name) return static_cast<unsigned>(i);
    return std::nullopt;
}

bool Schema::matches(const SchemaHash& ring_hash) const noexcept {
    if (ring_hash == data_->hash) return true;
    return std::binary_search(data_->describes.begin(), data_->describes.end(), ring_hash);
}

const SchemaHash& Schema::hash() const noexcept { return data_->hash; }
std::string Schema::hash_hex() const { return schema_hash_hex(data_->hash); }
const std::string& Schema::canonical_form() const noexcept { return data_->canonical; }
const std::string& Schema::source() const noexcept { return data_->source; }
const std::string& Schema::source_name() const noexcept { return data_->source_name; }

std::span<const SchemaEvent> Schema::events() const noexcept { return data_->events; }

const SchemaEvent* Schema::event(std::uint16_t number) const noexcept {
    if (number >= data_->event_slot.size()) return nullptr;
    const std::int32_t slot = data_->event_slot[number];
    return slot < 0 ? nullptr : &data_->events[static_cast<std::size_t>(slot)];
}

namespace {

bool equal_ignoring_case(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

}  // namespace

// The one rule for event type names (--type, --where, the C ABI, Python):
// the exact name, else the one name equal ignoring ASCII case (none when
// two are). A miss walks every type: names are looked up once per option,
// not per event.
const SchemaEvent* Schema::event(std::string_view name) const noexcept {
    const auto& events = data_->events;
    const auto& order = data_->events_by_name;
    auto it = std::lower_bound(order.begin(), order.end(), name,
                               [&events](std::uint32_t i, std::string_view n) { return events[i].name < n; });
    if (it != order.end() && events[*it].name == name) return &events[*it];
    const SchemaEvent* found = nullptr;
    for (const SchemaEvent& e : events) {
        if (!equal_ignoring_case(e.name, name)) continue;
        if (found != nullptr) return nullptr;  // ambiguous without case
        found = &e;
    }
    return found;
}

std::span<const SchemaStruct> Schema::structs() const noexcept { return data_->structs; }
std::span<const SchemaEnum> Schema::enums() const noexcept { return data_->enums; }
std::span<const SchemaSpan> Schema::spans() const noexcept { return data_->spans; }

const SchemaStruct* Schema::find_struct(std::string_view name) const noexcept {
    for (const auto& s : data_->structs)
        if (s.name == name) return &s;
    return nullptr;
}

const SchemaEnum* Schema::find_enum(std::string_view name) const noexcept {
    for (const auto& e : data_->enums)
        if (e.name == name) return &e;
    return nullptr;
}

const SchemaType& Schema::type(TypeId id) const noexcept { return data_->types[id]; }

const SchemaSpan* Schema::span(std::string_view name) const noexcept {
    for (const auto& s : data_->spans)
        if (s.name == name) return &s;
    return nullptr;
}

const SchemaStruct* Schema::payload_of(const SchemaEvent& event) const noexcept {
    return event.payload == kNoPayload ? nullptr : &data_->structs[event.payload];
}

std::uint32_t Schema::fixed_size(const SchemaEvent& event) const noexcept {
    const SchemaStruct* s = payload_of(event);
    return s == nullptr ? 0 : s->size;
}

// Dotted names through the one walk (schema_field_path.hpp): a field of the
// fixed part only, so a path into a trailing array is none.
std::optional<SchemaFieldRef> Schema::find_field(const SchemaEvent& event, std::string_view path) const {
    std::vector<detail::FieldPathStep> steps;
    for (;;) {
        const std::size_t dot = path.find('.');
        steps.push_back({std::string(path.substr(0, dot)), false, 0});
        if (dot == std::string_view::npos) break;
        path.remove_prefix(dot + 1);
    }
    const auto place = detail::find_field_path(*this, event, steps);
    if (!place || place->trailing >= 0) return std::nullopt;
    return SchemaFieldRef{place->offset, place->type};
}

std::string Schema::type_name(TypeId id) const {
    const SchemaType& t = type(id);
    switch (t.kind) {
    case TypeKind::Scalar: return std::string(scalar_name(t.scalar));
    case TypeKind::Bytes: return t.count == 20 ? "address" : fmt::format("bytes{}", t.count);
    case TypeKind::Enum: return data_->enums[t.index].name;
    case TypeKind::Struct: return data_->structs[t.index].name;
    case TypeKind::Array: return fmt::format("{}[{}]", type_name(t.element), t.count);
    case TypeKind::String: return fmt::format("char[{}]", t.count);
    }
    return {};
}

std::string_view scalar_name(Scalar scalar) noexcept {
    static constexpr std::string_view names[] = {"u8",  "u16", "u32", "u64", "i8",   "i16", "i32",
                                                 "i64", "f32", "f64", "bool", "u128", "u256"};
    return names[static_cast<std::size_t>(scalar)];
}

std::uint32_t scalar_size(Scalar scalar) noexcept {
    static constexpr std::uint32_t sizes[] = {1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 1, 16, 32};
    return sizes[static_cast<std::size_t>(scalar)];
}

std::string schema_hash_hex(const SchemaHash& hash) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string hex(64, '0');
    for (std::size_t i = 0; i < hash.size(); ++i) {
        hex[2 * i] = digits[hash[i] >> 4];
        hex[2 * i + 1] = digits[hash[i] & 15];
    }
    return hex;
}

std::optional<SchemaHash> parse_schema_hash(std::string_view hex) noexcept {
    if (hex.size() != 64) return std::nullopt;
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    SchemaHash hash{};
    for (std::size_t i = 0; i < hash.size(); ++i) {
        const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return std::nullopt;
        hash[i] = static_cast<std::uint8_t>(hi << 4 | lo);
    }
    return hash;
}

}  // namespace evring
