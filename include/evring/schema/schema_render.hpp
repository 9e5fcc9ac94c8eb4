// evring/schema/schema_render.hpp — a decoded payload as JSON or as one line of text.
//
// How to turn events into JSON lines without allocating per event:
//
//     std::string line;                      // reused: its capacity stays
//     for (each event) {
//         line.clear();
//         auto e = evring::append_fields_json(schema, event.event_type, payload, line);
//         if (!e.ok()) line = "{\"decode_error\":...}";   // describe_decode_error(schema, e)
//     }
//
// JSON rules (docs/schema.md): the payload is one object; nested structs are
// objects, arrays are arrays, enums are their value's name (or the number
// when the value has no name), integers up to 64 bits are JSON numbers, u128,
// u256 are "0x..." strings of their value (no leading zeros), byte arrays are
// "0x..." strings of their bytes in order (cut short past JsonOptions::max_bytes
// as in text; by default never). bool is true/false (any other
// byte value is written as its number); f32/f64 use the shortest form that
// reads back exactly, and "nan", "inf", "-inf" as strings.
//
// Text: "TYPE_NAME field=value ..." with nested struct fields as dotted paths
// (block_tag.block_number=5), arrays as [a,b], structs inside arrays as
// {x=1 y=2}, and byte arrays longer than TextOptions::max_bytes cut short
// ("0x0011...(256 bytes)"). An empty payload prints the name alone.
//
// Bounded output: a schema decides how much text one payload byte becomes,
// and 30 nested one-byte structs with long names make it thousands of
// characters. So once the output for one event reaches
// max(max_output, 8 x payload size) characters (max_output: 1 MiB by
// default, in the options), no more fields are shown: what is open is closed,
// and the output ends with a marker. JSON: the payload object's last member is
// "(truncated)":true (a key no field can have; still valid JSON). Text: the
// line ends with " (truncated)". The overshoot is at most one value and the
// closing brackets. Everything that shows decoded payloads (watch, export,
// the C ABI, Python's Event.fields) keeps this bound.
//
// Contract: these functions check the payload first (check_payload in
// schema_decode.hpp) and leave the output untouched on a DecodeError. The
// std::string overloads append; the span overloads write from the start and,
// when the buffer is too small, return OutputTooSmall with `needed` set to the
// exact size. No allocation beyond growing the caller's string.
//
// Thread safety: free functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "evring/schema/schema.hpp"
#include "evring/schema/schema_decode.hpp"

namespace evring {

// What one event's rendering may reach (see "Bounded output" above): the
// larger of this and 8 x the payload size. 0: no bound.
inline constexpr std::size_t kDefaultMaxOutput = std::size_t{1} << 20;

// The most one event's rendering may reach before the walk stops:
// max(max_output, 8 x payload size); 0 means no bound.
inline std::size_t output_bound(std::size_t max_output, std::size_t payload_size) noexcept {
    if (max_output == 0) return SIZE_MAX;
    const std::size_t scaled = payload_size > SIZE_MAX / 8 ? SIZE_MAX : 8 * payload_size;
    return max_output > scaled ? max_output : scaled;
}

struct JsonOptions {
    std::size_t max_bytes = 0;  // longer byte arrays are cut short as in text; 0: never
    std::size_t max_output = kDefaultMaxOutput;
};

DecodeError append_fields_json(const Schema& schema, std::uint16_t event_type, std::span<const std::byte> payload,
                               std::string& out, const JsonOptions& options = {});
DecodeError write_fields_json(const Schema& schema, std::uint16_t event_type, std::span<const std::byte> payload,
                              std::span<char> out, std::size_t& written) noexcept;

struct TextOptions {
    std::size_t max_bytes = 32;  // longer byte arrays are cut short; 0: never
    std::size_t max_output = kDefaultMaxOutput;
};

// The one rule for byte arrays cut short (text, JSON with max_bytes, and
// whoever shows raw payloads the same way): "0x" and the hex of at most
// `max_bytes` bytes (0: all), then "...(N bytes)" with the full size when cut.
void append_shown_bytes(std::string& out, std::span<const std::byte> bytes, std::size_t max_bytes);

DecodeError append_event_text(const Schema& schema, std::uint16_t event_type, std::span<const std::byte> payload,
                              std::string& out, const TextOptions& options = {});
DecodeError write_event_text(const Schema& schema, std::uint16_t event_type, std::span<const std::byte> payload,
                             std::span<char> out, std::size_t& written, const TextOptions& options = {}) noexcept;

// The schema itself as one JSON object: content type, hash, described hashes,
// flow tags, payload alignment, events (with fixed sizes), structs (with
// offsets and sizes), enums and spans. For `evring schema show --json`, the
// Python package and the relay.
std::string schema_to_json(const Schema& schema);

// The JSON string literal of `text` (quotes included, escapes as needed;
// valid UTF-8 whatever the input: append_json_string in text_escape.hpp).
std::string json_string_literal(std::string_view text);

}  // namespace evring
