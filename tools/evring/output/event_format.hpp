// tools/evring/output/event_format.hpp — how `watch` prints one event.
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
// With a schema (schema_resolve.hpp found one), EventPrinter decodes payloads:
//   text   time, seq=, then "TYPE_NAME field=value ..." (schema_render.hpp),
//          then " ext.NAME=v" for each non-zero flow tag (ext[i]= when the
//          schema leaves the tag unnamed); an event that does not decode shows
//          type=, size= and decode_error="reason" instead of the fields;
//   hex    that line, then the hexdump;
//   jsonl  today's keys plus type_name (null for a type the schema lacks)
//          and fields (an object), or decode_error (the reason) when the
//          payload does not decode or was lost; payload stays as always.
//
// Event type names without a schema: RECORD_ERROR (1) in every content type;
// every other type is shown and accepted as a number.
//
// Thread safety: one thread per printer.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"
#include "evring/format.hpp"
#include "evring/schema/schema.hpp"
#include "evring/schema/schema_decode.hpp"
#include "output/output.hpp"
#include "read/selection_values.hpp"
#include "source/span_labels.hpp"

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

// The member key of a ring set's event (nothing when member < 0).
void put_member_text(OutputBuffer& out, std::int64_t member);
void put_member_json(OutputBuffer& out, std::int64_t member);

void print_event(OutputBuffer& out, Format format, const EventDescriptor& event,
                 const PayloadView& payload, std::int64_t member = -1);

// The parts raw and decoded lines share, so both spell them one way.
// jsonl: `{"seqno":N`, the member key and `"event_type":T`; then (after
// type_name in decoded lines) payload_size, record_epoch_nanos, time and
// content_ext; `"payload":` and the payload's hex, or null when it was lost.
// The caller closes the object.
void put_json_start(OutputBuffer& out, const EventDescriptor& event, std::int64_t member);
void put_json_descriptor(OutputBuffer& out, const EventDescriptor& event);
void put_json_payload(OutputBuffer& out, const PayloadView& payload);
// hex: the payload's hexdump, or a line saying it expired (nothing when not read).
void put_payload_dump(OutputBuffer& out, const PayloadView& payload);

// Prints events in one format, decoded with `schema` when it is not null (the
// schema must outlive the printer). Its scratch buffer is reused: once it has
// grown to the longest line, printing allocates nothing.
// Span labels: a flow tag that points back to a span's opening event (the
// schema's `opener`) is shown as the span's label, `block=15000009`, once the
// opening event has been read (span_labels.hpp: the follow loop's table when
// the command shares it, set_span_labels; else the printer's own, which
// notes the openings it prints); until then as `ext.block=SEQNO`.
class EventPrinter {
public:
    EventPrinter(Format format, const Schema* schema);

    // Whether the follow loop must copy payloads for this printer.
    // A ring set's member index to show with the next events (a `member`
    // key in jsonl, member=N in text), or -1 for none (every other source).
    void set_member(std::int64_t member) noexcept { member_ = member; }
    bool reads_payloads() const noexcept { return schema_ != nullptr || format_reads_payloads(format_); }
    // Decoded jsonl without the "payload" hex (--no-payload); raw jsonl keeps it.
    void set_payload_hex(bool on) noexcept { payload_hex_ = on; }
    bool payload_hex() const noexcept { return payload_hex_; }
    // Chosen columns instead (--fields, --format csv: field_columns.hpp); null: none.
    void set_columns(class FieldColumns* columns) noexcept;
    // The follow loop's span label table (FollowOptions::span_labels), which
    // knows the labels of openings the filter hid; null: the printer's own.
    void set_span_labels(SpanLabels* labels) noexcept;
    void print(OutputBuffer& out, const EventDescriptor& event, const PayloadView& payload);

private:
    std::int64_t member_ = -1;
    void put_decoded_text(OutputBuffer& out, const EventDescriptor& event, const PayloadView& payload);
    void put_decoded_json(OutputBuffer& out, const EventDescriptor& event, const PayloadView& payload);
    // The reason an event does not decode, into reason_ (no allocation).
    std::string_view decode_reason(const EventDescriptor& event, const PayloadView& payload, DecodeError& error);

    Format format_;
    const Schema* schema_;
    SpanLabels own_labels_;
    SpanLabels* labels_ = &own_labels_;
    bool payload_hex_ = true;
    class FieldColumns* columns_ = nullptr;
    std::string scratch_;
    char reason_[256] = {};
};

// Event type names (see above): the name for a number, and a number for a
// name or a decimal number; nullopt when the text is neither.
std::string event_type_name(std::uint16_t content_type, std::uint16_t event_type);
// (parse_event_type and --type's parse_type_option: read/selection_values.hpp.)

// "test", "execution", ... or "application-defined".
std::string_view content_type_name(std::uint16_t content_type);

}  // namespace evring::cli
