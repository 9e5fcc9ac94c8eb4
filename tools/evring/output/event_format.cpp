#include "output/event_format.hpp"
#include "output/field_columns.hpp"

#include <charconv>

namespace evring::cli {

std::optional<Format> parse_format(std::string_view text) {
    if (text == "text") return Format::Text;
    if (text == "hex") return Format::Hex;
    if (text == "jsonl") return Format::Jsonl;
    return std::nullopt;
}

std::string_view content_type_name(std::uint16_t content_type) {
    switch (static_cast<ContentType>(content_type)) {
    case ContentType::None: return "invalid";
    case ContentType::Test: return "test";
    case ContentType::Execution: return "execution";
    case ContentType::Performance: return "performance";
    }
    return "application-defined";
}

std::string event_type_name(std::uint16_t /*content_type*/, std::uint16_t event_type) {
    if (event_type == kRecordErrorEventType) return "RECORD_ERROR";
    return std::to_string(event_type);
}

namespace {

void put_text_line(OutputBuffer& out, const EventDescriptor& event, const PayloadView& payload, std::int64_t member) {
    put_utc_time(out, event.record_epoch_nanos);
    put_member_text(out, member);
    out.put(" seq=");
    out.put_uint(event.seqno);
    out.put(" type=");
    if (event.event_type == kRecordErrorEventType)
        out.put("RECORD_ERROR(1)");
    else
        out.put_uint(event.event_type);
    out.put(" size=");
    out.put_uint(event.payload_size);
    for (std::size_t i = 0; i < 4; ++i) {
        if (event.content_ext[i] == 0) continue;
        out.put(" ext[");
        out.put(static_cast<char>('0' + i));
        out.put("]=");
        out.put_uint(event.content_ext[i]);
    }
    if (payload.state == PayloadView::State::Expired) out.put(" payload=expired");
    out.put('\n');
}

void put_hexdump(OutputBuffer& out, std::span<const std::byte> bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    for (std::size_t line = 0; line < bytes.size(); line += 16) {
        out.put("  ");
        for (int shift = 28; shift >= 0; shift -= 4) out.put(kDigits[(line >> shift) & 15]);
        out.put(' ');
        for (std::size_t i = line; i < line + 16; ++i) {
            if (i % 8 == 0) out.put(' ');
            if (i < bytes.size()) {
                const auto v = std::to_integer<unsigned>(bytes[i]);
                out.put(kDigits[v >> 4]);
                out.put(kDigits[v & 15]);
                out.put(' ');
            } else {
                out.put("   ");
            }
        }
        out.put(" |");
        for (std::size_t i = line; i < line + 16 && i < bytes.size(); ++i) {
            const auto c = std::to_integer<unsigned char>(bytes[i]);
            out.put(c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '.');
        }
        out.put("|\n");
    }
}

void put_json(OutputBuffer& out, const EventDescriptor& event, const PayloadView& payload, std::int64_t member) {
    put_json_start(out, event, member);
    put_json_descriptor(out, event);
    put_json_payload(out, payload);
    out.put("}\n");
}

}  // namespace

void put_json_start(OutputBuffer& out, const EventDescriptor& event, std::int64_t member) {
    out.put("{\"seqno\":");
    out.put_uint(event.seqno);
    put_member_json(out, member);
    out.put(",\"event_type\":");
    out.put_uint(event.event_type);
}

void put_json_descriptor(OutputBuffer& out, const EventDescriptor& event) {
    out.put(",\"payload_size\":");
    out.put_uint(event.payload_size);
    out.put(",\"record_epoch_nanos\":");
    out.put_uint(event.record_epoch_nanos);
    // The same instant as a string (ISO 8601, UTC, to the nanosecond): JSON tools
    // read numbers as doubles and round nanoseconds since the epoch.
    out.put(",\"time\":\"");
    put_utc_time(out, event.record_epoch_nanos);
    out.put('"');
    out.put(",\"content_ext\":[");
    for (std::size_t i = 0; i < 4; ++i) {
        if (i > 0) out.put(',');
        out.put_uint(event.content_ext[i]);
    }
    out.put(']');
}

void put_json_payload(OutputBuffer& out, const PayloadView& payload) {
    out.put(",\"payload\":");
    if (payload.state == PayloadView::State::Ok) {
        out.put('"');
        out.put_hex(payload.bytes);
        out.put('"');
    } else {
        out.put("null");
    }
}

void put_payload_dump(OutputBuffer& out, const PayloadView& payload) {
    if (payload.state == PayloadView::State::Ok)
        put_hexdump(out, payload.bytes);
    else if (payload.state == PayloadView::State::Expired)
        out.put("  (payload expired: overwritten before it could be read)\n");
}

void put_member_text(OutputBuffer& out, std::int64_t member) {
    if (member < 0) return;
    out.put(" member=");
    out.put_uint(static_cast<std::uint64_t>(member));
}

void put_member_json(OutputBuffer& out, std::int64_t member) {
    if (member < 0) return;
    out.put(",\"member\":");
    out.put_uint(static_cast<std::uint64_t>(member));
}

void print_event(OutputBuffer& out, Format format, const EventDescriptor& event,
                 const PayloadView& payload, std::int64_t member) {
    switch (format) {
    case Format::Text:
        put_text_line(out, event, payload, member);
        break;
    case Format::Hex:
        put_text_line(out, event, payload, member);
        put_payload_dump(out, payload);
        break;
    case Format::Jsonl:
        put_json(out, event, payload, member);
        break;
    }
    out.maybe_flush();
}

void EventPrinter::print(OutputBuffer& out, const EventDescriptor& event, const PayloadView& payload) {
    if (columns_ != nullptr) {
        if (labels_->any() && payload.state == PayloadView::State::Ok) labels_->note(event, payload.bytes);
        columns_->print(out, event, payload);
        return;
    }
    if (schema_ == nullptr) {
        print_event(out, format_, event, payload, member_);
        return;
    }
    switch (format_) {
    case Format::Text: put_decoded_text(out, event, payload); break;
    case Format::Hex:
        put_decoded_text(out, event, payload);
        put_payload_dump(out, payload);
        break;
    case Format::Jsonl: put_decoded_json(out, event, payload); break;
    }
    out.maybe_flush();
}

}  // namespace evring::cli
