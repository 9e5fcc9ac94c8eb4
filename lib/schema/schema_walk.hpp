// lib/schema/schema_walk.hpp — the one walk over a checked payload (private).
//
// A template on the visitor so that the JSON and text renderers get direct
// calls; visit_payload instantiates it with the virtual FieldVisitor. The
// caller must have run check_payload first: the walk trusts the sizes.
// Visitors have the calls of schema_decode.hpp's FieldVisitor, except that
// text (a char[N] field) gets the field's N bytes; text_of gives its string.
#pragma once

#include <cstring>

#include "evring/schema/schema_decode.hpp"

namespace evring::detail {

inline std::uint64_t load_unsigned(const std::byte* p, std::uint32_t size) noexcept {
    std::uint64_t value = 0;  // little-endian host (format.hpp asserts it)
    std::memcpy(&value, p, size);
    return value;
}

// The text of a char[N] field: its bytes up to the first NUL (NUL-padded), or all N.
inline std::string_view text_of(std::span<const std::byte> field) noexcept {
    const auto* p = reinterpret_cast<const char*>(field.data());
    const void* nul = std::memchr(p, 0, field.size());
    return {p, nul != nullptr ? static_cast<std::size_t>(static_cast<const char*>(nul) - p) : field.size()};
}

inline ScalarValue load_scalar(Scalar type, const std::byte* p) noexcept {
    ScalarValue v;
    v.type = type;
    switch (type) {
    case Scalar::U8: case Scalar::U16: case Scalar::U32: case Scalar::U64: case Scalar::Bool:
        v.u = load_unsigned(p, scalar_size(type));
        break;
    case Scalar::I8: v.i = static_cast<std::int8_t>(load_unsigned(p, 1)); break;
    case Scalar::I16: v.i = static_cast<std::int16_t>(load_unsigned(p, 2)); break;
    case Scalar::I32: v.i = static_cast<std::int32_t>(load_unsigned(p, 4)); break;
    case Scalar::I64: v.i = static_cast<std::int64_t>(load_unsigned(p, 8)); break;
    case Scalar::F32: {
        float x;
        std::memcpy(&x, p, sizeof x);
        v.f = x;
        break;
    }
    case Scalar::F64: std::memcpy(&v.f, p, sizeof v.f); break;
    case Scalar::U128: case Scalar::U256: break;  // wide: passed as bytes
    }
    if (type >= Scalar::I8 && type <= Scalar::I64) v.u = static_cast<std::uint64_t>(v.i);  // sign-extended bits
    return v;
}

// Before each value the walk asks the visitor whether it is full(); once it
// is, no more values are visited, only the end_struct/end_array calls that
// close what is open. That is how every output bounds what one event may
// become (schema_render.hpp): a schema may make each payload byte thousands
// of characters (deeply nested structs with long names).
template <class V>
class PayloadWalker {
public:
    PayloadWalker(const Schema& schema, V& visitor) noexcept : schema_(schema), v_(visitor) {}

    void payload(const SchemaEvent& event, const std::byte* p) {
        const SchemaStruct* s = schema_.payload_of(event);
        v_.begin_struct({}, s);
        if (s != nullptr) {
            members(*s, p);
            const std::byte* next = p + s->size;
            for (const auto& t : s->trailing) next = trailing(t, p, next);
        }
        v_.end_struct();
    }

private:
    bool full() {
        if constexpr (requires { v_.full(); }) return v_.full();
        else return false;
    }

    void members(const SchemaStruct& s, const std::byte* p) {
        for (const auto& f : s.fields) {
            if (full()) return;
            value(f.name, f.type, p + f.offset);
        }
    }

    const std::byte* trailing(const SchemaTrailing& t, const std::byte* fixed, const std::byte* p) {
        const std::uint64_t count = load_unsigned(fixed + t.count_offset, scalar_size(t.count_scalar));
        const std::uint32_t size = schema_.type(t.element).size;
        if (full()) return p + count * size;
        if (t.bytes) {
            v_.bytes(t.name, {p, static_cast<std::size_t>(count)});
        } else if (t.text) {
            v_.text(t.name, {p, static_cast<std::size_t>(count)});  // as a char[N] field
        } else {
            v_.begin_array(t.name, count);
            for (std::uint64_t i = 0; i < count && !full(); ++i) value({}, t.element, p + i * size);
            v_.end_array();
        }
        return p + count * size;
    }

    void value(std::string_view name, TypeId id, const std::byte* p) {
        const SchemaType& t = schema_.type(id);
        switch (t.kind) {
        case TypeKind::Scalar:
            if (t.scalar == Scalar::U128 || t.scalar == Scalar::U256)
                v_.wide_integer(name, t.scalar, {p, t.size});
            else
                v_.scalar(name, load_scalar(t.scalar, p));
            return;
        case TypeKind::Bytes: v_.bytes(name, {p, t.size}); return;
        case TypeKind::String: v_.text(name, {p, t.size}); return;
        case TypeKind::Enum: {
            const SchemaEnum& e = schema_.enums()[t.index];
            const ScalarValue raw = load_scalar(t.scalar, p);
            v_.enumeration(name, e, raw, e.name_of(raw.u));
            return;
        }
        case TypeKind::Struct: {
            const SchemaStruct& s = schema_.structs()[t.index];
            v_.begin_struct(name, &s);
            members(s, p);
            v_.end_struct();
            return;
        }
        case TypeKind::Array: {
            const std::uint32_t size = schema_.type(t.element).size;
            v_.begin_array(name, t.count);
            for (std::uint32_t i = 0; i < t.count && !full(); ++i) value({}, t.element, p + std::size_t{i} * size);
            v_.end_array();
            return;
        }
        }
    }

    const Schema& schema_;
    V& v_;
};

}  // namespace evring::detail
