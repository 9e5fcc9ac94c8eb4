// evring/schema/schema_decode.hpp — reading a payload field by field with its schema.
//
// How to decode one event:
//
//     struct Printer : evring::FieldVisitor { ... };       // override what you need
//     Printer printer;
//     evring::DecodeError e = evring::visit_payload(schema, event.event_type, payload, printer);
//     if (!e.ok()) log(evring::describe_decode_error(schema, e));  // "size mismatch: ..."
//
// (schema_render.hpp writes the same walk as JSON or as one line of text.)
//
// Contract:
// - A payload is decoded only when it is exactly what its event type's layout
//   says: the fixed part, then each trailing array with the element count read
//   from its count field. Every count is checked against the bytes that remain
//   with overflow-free arithmetic before anything is visited, so a hostile
//   payload gets a DecodeError and no visitor call, never a read out of bounds.
// - Payload bytes are read with memcpy: the payload may be at any address.
// - The walk neither allocates nor throws; the time it takes is bounded by the
//   payload size (every element is at least one byte) and the schema.
// - Visitor calls, in order: begin_struct("", payload struct) for the payload
//   itself; for each fixed field one scalar/enumeration/bytes/text/wide_integer call,
//   or begin_struct/.../end_struct for a nested struct, or begin_array, one call
//   per element (with an empty name), end_array for a fixed array; then each
//   trailing array (byte arrays as one bytes call); then end_struct(). An
//   empty payload is begin_struct("", nullptr), end_struct(). A visitor that
//   says it is full() gets no more values, only the calls that close what
//   is open.
//
// Thread safety: free functions; a visitor is used by one call at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "evring/schema/schema.hpp"

namespace evring {

enum class DecodeStatus : std::uint8_t {
    Ok,
    UnknownEventType,  // the schema declares no event type with this number
    SizeMismatch,      // the payload is not exactly fixed part + trailing arrays
    CountOverflow,     // a trailing array's count reaches past the end of the payload
    OutputTooSmall,    // (render functions) the caller's buffer is too small
};

struct DecodeError {
    DecodeStatus status = DecodeStatus::Ok;
    std::uint16_t event_type = 0;
    std::uint64_t payload_size = 0;   // the payload's actual size
    std::uint64_t expected_size = 0;  // SizeMismatch: what the layout needs
    // CountOverflow: the array, its claimed element count, and the bytes that
    // were left for it after the fixed part and the arrays before it.
    const SchemaTrailing* array = nullptr;
    std::uint64_t count = 0;
    std::uint64_t available = 0;
    std::uint64_t needed = 0;  // OutputTooSmall: the bytes the output needs

    bool ok() const noexcept { return status == DecodeStatus::Ok; }
};

// A primitive value. Unsigned integers (and bool, as its raw byte) in `u`,
// signed in `i`, f32/f64 in `f`.
struct ScalarValue {
    Scalar type = Scalar::U8;
    std::uint64_t u = 0;
    std::int64_t i = 0;
    double f = 0;
};

class FieldVisitor {
public:
    virtual ~FieldVisitor() = default;
    // Asked before each value: true ends the walk early. No more values are
    // visited, only the end_struct/end_array calls that close what is open.
    // A visitor that builds something per value overrides it to bound what
    // one event may cost: the schema, not the payload, decides how much text
    // or how many objects a byte becomes (30 nested one-byte structs with
    // long names: thousands of characters per byte).
    virtual bool full() { return false; }
    // `name` is the field's name; empty for array elements and the payload itself.
    virtual void begin_struct(std::string_view name, const SchemaStruct* type) = 0;
    virtual void end_struct() = 0;
    virtual void begin_array(std::string_view name, std::uint64_t count) = 0;
    virtual void end_array() = 0;
    virtual void scalar(std::string_view name, const ScalarValue& value) = 0;
    // `value_name` is empty when the value has no name in the enum.
    virtual void enumeration(std::string_view name, const SchemaEnum& type, const ScalarValue& value,
                             std::string_view value_name) = 0;
    virtual void bytes(std::string_view name, std::span<const std::byte> value) = 0;
    // u128/u256: the little-endian bytes of the integer (16 or 32 of them).
    virtual void wide_integer(std::string_view name, Scalar type, std::span<const std::byte> little_endian) = 0;
    // A char[N] field: `value` is its text, the bytes before the first NUL
    // (all N when there is none; not checked to be UTF-8), `field` all N bytes.
    // By default it is passed on as bytes(name, field).
    virtual void text(std::string_view name, std::string_view value, std::span<const std::byte> field) {
        (void)value;
        bytes(name, field);
    }
};

// Checks the payload against its event type's layout without visiting it.
DecodeError check_payload(const Schema& schema, std::uint16_t event_type,
                          std::span<const std::byte> payload) noexcept;

// Checks, then visits every field (see the contract for the order of calls).
DecodeError visit_payload(const Schema& schema, std::uint16_t event_type, std::span<const std::byte> payload,
                          FieldVisitor& visitor);

// The reason in words: "size mismatch: TXN_LOG payload is 40 bytes, its layout needs 64".
std::string describe_decode_error(const Schema& schema, const DecodeError& error);
// The same into a caller's buffer, truncated to fit; returns the length written.
std::size_t format_decode_error(const Schema& schema, const DecodeError& error, std::span<char> out) noexcept;

}  // namespace evring
