// tools/evring/event_format.hpp — how `watch` prints one event.
//
// Formats (documented with examples in docs/cli.md):
//   text   one line: time, seq=, type=, size=, then ext[i]= for each non-zero
//          flow tag, and " payload=expired" when the payload is known lost;
//   hex    the text line, then a hexdump of the payload (or a line saying it
//          expired);
//   jsonl  one JSON object with exactly the keys seqno, event_type,
//          payload_size, record_epoch_nanos, content_ext (4 numbers) and
//          payload (lower-case hex, or null when the payload was lost).
//
// Event type names: RECORD_ERROR (1) in every content type; every other type
// is shown and accepted as a number (the execution-event numbering depends on
// the schema and is not part of the public description).
//
// Thread safety: one thread per printer.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "evring/format.hpp"
#include "output.hpp"

namespace evring::cli {

enum class Format { Text, Hex, Jsonl };

std::optional<Format> parse_format(std::string_view text);

// What is known about an event's payload when it is printed.
struct PayloadView {
    enum class State { Ok, Expired, NotRead };
    State state = State::NotRead;
    std::span<const std::byte> bytes;
};

// Whether this format needs the payload bytes.
inline bool format_reads_payloads(Format format) { return format != Format::Text; }

void print_event(OutputBuffer& out, Format format, const EventDescriptor& event,
                 const PayloadView& payload);

// Event type names (see above): the name for a number, and a number for a
// name or a decimal number; nullopt when the text is neither.
std::string event_type_name(std::uint16_t content_type, std::uint16_t event_type);
std::optional<std::uint16_t> parse_event_type(std::uint16_t content_type, std::string_view text);

// "test", "execution", ... or "application-defined".
std::string_view content_type_name(std::uint16_t content_type);

}  // namespace evring::cli
