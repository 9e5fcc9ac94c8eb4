// lib/query/field_access.hpp — a payload field by path as one value: placed
// in one event type's payload (locate_field) and found in an event's payload
// (field_at). What --where compares (where.cpp, where_eval.cpp) and what
// `evring stats --field/--by FIELD` tallies.
//
// Contract: locate_field reads only the schema; it refuses what is not one
// value (a struct, an array not indexed, a variable-length byte array) and
// says why. field_at checks every step against the payload at hand (a
// trailing array's element lies after the arrays before it, whose counts are
// in the payload): a payload too short, or an element past its array's
// count, has no such field (null). The read_* functions read `size` bytes at
// a place field_at returned.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "evring/schema/schema.hpp"
#include "query/where_ast.hpp"

namespace evring::detail {

enum class FieldKind : std::uint8_t { Unsigned, Signed, Float, Bytes };

struct FieldAccess {
    TypeId type = 0;           // the field's type in the schema
    std::uint32_t offset = 0;  // in the fixed part, or in the element of `trailing`
    std::uint32_t size = 0;
    FieldKind kind = FieldKind::Unsigned;
    Scalar scalar = Scalar::U8;
    bool text = false;                         // char[N]: the bytes before the first NUL
    const SchemaEnum* enumeration = nullptr;   // an enum field's named values
    int trailing = -1;                         // index of the payload's trailing array, or -1
    std::uint64_t element = 0;                 // trailing: which element
    // trailing: the fixed part's size, then for arrays 0..trailing where
    // their counts are and how big an element is.
    struct Array {
        std::uint32_t count_offset;
        std::uint32_t count_size;
        std::uint32_t element_size;
    };
    std::uint32_t fixed = 0;
    std::vector<Array> arrays;
};

// `path` in `event`'s payload; nullopt when the event has no such field or
// it is not one value (then `problem` says which and why, for the caller's
// error when no event type has the field as a value: "'block_tag' is a
// struct; name one of its fields: id, block_number").
std::optional<FieldAccess> locate_field(const Schema& schema, const SchemaEvent& event,
                                        std::span<const WherePathStep> path, std::string& problem);

// One path placed in every event type that has it: the table --fields and
// stats read a field through, by the event's type.
struct FieldByType {
    std::vector<std::int32_t> slot;  // event type -> index into access; -1: none
    std::vector<FieldAccess> access;

    void add(std::uint16_t type, FieldAccess a) {
        if (slot.size() <= type) slot.resize(type + 1u, -1);
        slot[type] = static_cast<std::int32_t>(access.size());
        access.push_back(std::move(a));
    }
    const FieldAccess* in(std::uint16_t type) const noexcept {
        return type < slot.size() && slot[type] >= 0 ? &access[static_cast<std::size_t>(slot[type])] : nullptr;
    }
    bool empty() const noexcept { return access.empty(); }
};

// Where the field lies in `payload`; null when this payload has no such field.
const std::byte* field_at(const FieldAccess& a, std::span<const std::byte> payload) noexcept;

inline std::int64_t read_signed(const std::byte* at, std::uint32_t size) noexcept {
    switch (size) {
    case 1: { std::int8_t x; std::memcpy(&x, at, 1); return x; }
    case 2: { std::int16_t x; std::memcpy(&x, at, 2); return x; }
    case 4: { std::int32_t x; std::memcpy(&x, at, 4); return x; }
    default: { std::int64_t x; std::memcpy(&x, at, 8); return x; }
    }
}

inline double read_float(const std::byte* at, std::uint32_t size) noexcept {
    if (size == 4) {
        float x;
        std::memcpy(&x, at, 4);
        return x;
    }
    double x;
    std::memcpy(&x, at, 8);
    return x;
}

// An unsigned field of at most 8 bytes.
inline std::uint64_t read_word(const std::byte* at, std::uint32_t size) noexcept {
    std::uint64_t v = 0;
    std::memcpy(&v, at, size < 8 ? size : 8);
    return v;
}

}  // namespace evring::detail
