// A payload field by path as one value (field_access.hpp).
#include "query/field_access.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "query/field_path.hpp"

namespace evring::detail {

std::optional<FieldAccess> locate_field(const Schema& schema, const SchemaEvent& event,
                                        std::span<const WherePathStep> path, std::string& problem) {
    const SchemaStruct* payload = schema.payload_of(event);
    if (payload == nullptr || path.empty()) return std::nullopt;
    const std::optional<FieldPlace> place = find_field_path(schema, event, path);
    if (!place) return std::nullopt;
    FieldAccess a;
    a.type = place->type;
    a.offset = place->offset;
    if (place->trailing >= 0) {
        const SchemaTrailing& t = payload->trailing[static_cast<std::size_t>(place->trailing)];
        if (t.bytes || t.text) {
            if (path.size() > 1) return std::nullopt;
            problem = fmt::format("'{}' is a variable-length {}, not one value", t.name,
                                  t.bytes ? "byte array" : "string");
            return std::nullopt;
        }
        if (!place->element) {
            problem = fmt::format("'{}' is a variable-length array; name an element: {}[0]", t.name, t.name);
            return std::nullopt;
        }
        // No payload holds more bytes than a descriptor's 32-bit size says.
        const std::uint64_t element_size = std::max<std::uint64_t>(schema.type(t.element).size, 1);
        if (place->index > std::numeric_limits<std::uint32_t>::max() / element_size) {
            problem = fmt::format("'{}[{}]': no payload holds that element (payloads are under 4 GiB)", t.name,
                                  place->index);
            return std::nullopt;
        }
        a.trailing = place->trailing;
        a.element = place->index;
        a.fixed = payload->size;
        for (std::size_t j = 0; j <= static_cast<std::size_t>(place->trailing); ++j) {
            const SchemaTrailing& tj = payload->trailing[j];
            a.arrays.push_back({tj.count_offset, scalar_size(tj.count_scalar), schema.type(tj.element).size});
        }
    }
    const SchemaType& t = schema.type(place->type);
    a.size = t.size;
    switch (t.kind) {
    case TypeKind::Struct: {
        std::string names;
        for (const auto& f : schema.structs()[t.index].fields) names += (names.empty() ? "" : ", ") + f.name;
        problem = fmt::format("'{}' is a struct; name one of its fields: {}", path.back().name, names);
        return std::nullopt;
    }
    case TypeKind::Array:
        problem = fmt::format("'{}' is an array; name an element: {}[0]", path.back().name, path.back().name);
        return std::nullopt;
    case TypeKind::Bytes: a.kind = FieldKind::Bytes; break;
    case TypeKind::String: a.kind = FieldKind::Bytes, a.text = true; break;  // "ACME" == NUL-padded ACME
    case TypeKind::Enum:
    case TypeKind::Scalar:
        a.scalar = t.scalar;
        if (t.kind == TypeKind::Enum) a.enumeration = &schema.enums()[t.index];
        a.kind = (t.scalar == Scalar::F32 || t.scalar == Scalar::F64) ? FieldKind::Float
                 : (t.scalar == Scalar::I8 || t.scalar == Scalar::I16 || t.scalar == Scalar::I32 ||
                    t.scalar == Scalar::I64)
                     ? FieldKind::Signed
                     : FieldKind::Unsigned;
        break;
    }
    return a;
}

namespace {

// Element `a.element` of trailing array `a.trailing`: the arrays follow the
// fixed part in order, each `count x element size` bytes, counts read from
// the fixed part; every step checked against the payload's size.
const std::byte* trailing_element(const FieldAccess& a, std::span<const std::byte> p) noexcept {
    std::uint64_t at = a.fixed;
    std::uint64_t count = 0;
    for (std::size_t j = 0; j < a.arrays.size(); ++j) {
        const FieldAccess::Array& arr = a.arrays[j];
        if (std::uint64_t{arr.count_offset} + arr.count_size > p.size()) return nullptr;
        count = read_word(p.data() + arr.count_offset, arr.count_size);
        if (j + 1 == a.arrays.size()) break;
        // count * size cannot overflow: checked against the payload's size first.
        if (arr.element_size != 0 && count > (p.size() - std::min<std::uint64_t>(at, p.size())) / arr.element_size)
            return nullptr;
        at += count * arr.element_size;
    }
    if (a.element >= count) return nullptr;  // past the array's count: no such element
    const std::uint64_t size = a.arrays.back().element_size;
    if (at > p.size() || a.element > (p.size() - at) / std::max<std::uint64_t>(size, 1)) return nullptr;
    at += a.element * size + a.offset;
    if (at > p.size() || a.size > p.size() - at) return nullptr;
    return p.data() + at;
}

}  // namespace

const std::byte* field_at(const FieldAccess& a, std::span<const std::byte> payload) noexcept {
    if (a.trailing >= 0) return trailing_element(a, payload);
    if (std::uint64_t{a.offset} + a.size > payload.size()) return nullptr;
    return payload.data() + a.offset;
}

}  // namespace evring::detail
