// One event as a JSON object, decoded with its schema (event_json.hpp).
#include "query/event_json.hpp"

#include <charconv>
#include <string_view>

#include "evring/schema/schema_decode.hpp"
#include "evring/schema/schema_render.hpp"
#include "util/text_escape.hpp"
#include "util/utc_time.hpp"

namespace evring {
namespace {

void put_uint(std::string& out, std::uint64_t value) {
    char digits[20];
    out.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
}

void put_hex(std::string& out, std::span<const std::byte> bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    for (std::byte b : bytes) {
        const auto v = std::to_integer<unsigned>(b);
        out += kDigits[v >> 4];
        out += kDigits[v & 15];
    }
}

// seqno .. content_ext: the descriptor's keys.
void put_descriptor(std::string& out, const Schema& schema, const EventDescriptor& event,
                    const EventJsonOptions& options) {
    out += "{\"seqno\":";
    put_uint(out, event.seqno);
    if (options.member >= 0) {
        out += ",\"member\":";
        put_uint(out, static_cast<std::uint64_t>(options.member));
    }
    out += ",\"event_type\":";
    put_uint(out, event.event_type);
    out += ",\"type_name\":";
    if (const SchemaEvent* type = schema.event(event.event_type)) {
        out += '"';
        out += type->name;  // an identifier: nothing to escape
        out += '"';
    } else {
        out += "null";
    }
    out += ",\"payload_size\":";
    put_uint(out, event.payload_size);
    out += ",\"record_epoch_nanos\":";
    put_uint(out, event.record_epoch_nanos);
    // The same instant as a string: JSON tools read numbers as doubles and
    // round nanoseconds since the epoch.
    char time[kUtcTimeSize];
    out += ",\"time\":\"";
    out.append(time, write_utc_time(event.record_epoch_nanos, time));
    out += "\",\"content_ext\":[";
    for (std::size_t i = 0; i < 4; ++i) {
        if (i > 0) out += ',';
        put_uint(out, event.content_ext[i]);
    }
    out += ']';
}

// The named flow tags by name (all of them, zeros included, so every object has the same keys).
void put_flow(std::string& out, const Schema& schema, const EventDescriptor& event) {
    bool named = false;
    for (std::size_t i = 0; i < 4; ++i) {
        const std::string& name = schema.flow_tags()[i];
        if (name.empty()) continue;
        out += named ? ",\"" : ",\"flow\":{\"";
        named = true;
        out += name;  // an identifier: nothing to escape
        out += "\":";
        put_uint(out, event.content_ext[i]);
    }
    if (named) out += '}';
}

// "fields" or, when the payload does not decode or was lost, "decode_error".
void put_fields(std::string& out, const Schema& schema, const EventDescriptor& event, EventJsonPayload state,
                std::span<const std::byte> payload) {
    char reason[256];  // a fixed buffer: nothing allocated for the words
    std::string_view why;
    if (state == EventJsonPayload::Expired) why = "payload expired (overwritten before it was read)";
    else if (state == EventJsonPayload::NotRead) why = "payload not read";
    if (why.empty()) {
        const std::size_t mark = out.size();
        out += ",\"fields\":";
        const DecodeError error = append_fields_json(schema, event.event_type, payload, out);
        if (error.ok()) return;
        out.resize(mark);
        why = {reason, format_decode_error(schema, error, reason)};
    }
    out += ",\"decode_error\":";
    append_json_string(out, why);
}

}  // namespace

void append_event_json(std::string& out, const Schema& schema, const EventDescriptor& event,
                       EventJsonPayload state, std::span<const std::byte> payload,
                       const EventJsonOptions& options) {
    put_descriptor(out, schema, event, options);
    put_flow(out, schema, event);
    put_fields(out, schema, event, state, payload);
    if (!options.payload_hex) {
        out += '}';
        return;
    }
    out += ",\"payload\":";
    if (state == EventJsonPayload::Ok) {
        out += '"';
        put_hex(out, payload);
        out += '"';
    } else {
        out += "null";
    }
    out += '}';
}

}  // namespace evring
