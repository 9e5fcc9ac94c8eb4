// How `watch` shows events decoded with a schema (event_format.hpp), and
// --type NAME. The line is built in the printer's scratch string and the
// decode error in its fixed buffer, so nothing is allocated per event.
#include <fmt/format.h>

#include <cctype>
#include <cstring>

#include "output/escape.hpp"
#include "output/event_format.hpp"
#include "evring/schema/schema_render.hpp"
#include "output/field_columns.hpp"
#include "query/event_json.hpp"
#include "query/span_labels_schema.hpp"

namespace evring::cli {
namespace {

void put_flow_tags(OutputBuffer& out, const Schema& schema, const EventDescriptor& event, const SpanLabels& labels) {
    for (std::size_t i = 0; i < 4; ++i) {
        if (event.content_ext[i] == 0) continue;
        const std::string& name = schema.flow_tags()[i];
        if (auto label = labels.label_of(event, i); label && !name.empty()) {
            out.put(' ');
            out.put(name);
            out.put('=');
            out.put_uint(*label);
            continue;
        }
        if (name.empty()) {
            out.put(" ext[");
            out.put(static_cast<char>('0' + i));
            out.put("]=");
        } else {
            out.put(" ext.");
            out.put(name);
            out.put('=');
        }
        out.put_uint(event.content_ext[i]);
    }
}

}  // namespace

EventPrinter::EventPrinter(Format format, const Schema* schema)
    : format_(format), schema_(schema), own_labels_(schema ? span_labels_for(*schema) : SpanLabels()) {}

void EventPrinter::set_span_labels(SpanLabels* labels) noexcept {
    labels_ = labels != nullptr ? labels : &own_labels_;
    if (columns_ != nullptr) columns_->set_span_labels(labels_);
}

void EventPrinter::set_columns(FieldColumns* columns) noexcept {
    columns_ = columns;
    if (columns_ != nullptr) columns_->set_span_labels(labels_);
}

std::string_view EventPrinter::decode_reason(const EventDescriptor& event, const PayloadView& payload,
                                             DecodeError& error) {
    if (payload.state == PayloadView::State::Expired) return "payload expired (overwritten before it was read)";
    if (payload.state == PayloadView::State::NotRead) return "payload not read";
    error = check_payload(*schema_, event.event_type, payload.bytes);
    if (error.ok()) return {};
    return {reason_, format_decode_error(*schema_, error, reason_)};
}

void EventPrinter::put_decoded_text(OutputBuffer& out, const EventDescriptor& event, const PayloadView& payload) {
    put_utc_time(out, event.record_epoch_nanos);
    put_member_text(out, member_);
    out.put(" seq=");
    out.put_uint(event.seqno);
    out.put(' ');
    scratch_.clear();
    DecodeError error;
    std::string_view reason = decode_reason(event, payload, error);
    if (reason.empty()) {
        error = append_event_text(*schema_, event.event_type, payload.bytes, scratch_);
        if (!error.ok()) reason = {reason_, format_decode_error(*schema_, error, reason_)};
    }
    if (reason.empty()) {
        out.put(scratch_);
    } else {
        if (const SchemaEvent* type = schema_->event(event.event_type)) {
            out.put(type->name);
        } else {
            out.put("type=");
            out.put_uint(event.event_type);
        }
        out.put(" size=");
        out.put_uint(event.payload_size);
        if (payload.state == PayloadView::State::Expired) {
            out.put(" payload=expired");
        } else {
            out.put(" decode_error=");
            scratch_.clear();
            append_json_string(scratch_, reason);
            out.put(scratch_);
        }
    }
    if (labels_->any() && payload.state == PayloadView::State::Ok) labels_->note(event, payload.bytes);
    put_flow_tags(out, *schema_, event, *labels_);
    out.put('\n');
}

void EventPrinter::put_decoded_json(OutputBuffer& out, const EventDescriptor& event, const PayloadView& payload) {
    // The library's spelling (query/event_json.hpp), which assembled spans share.
    const auto state = payload.state == PayloadView::State::Ok        ? EventJsonPayload::Ok
                       : payload.state == PayloadView::State::Expired ? EventJsonPayload::Expired
                                                                      : EventJsonPayload::NotRead;
    scratch_.clear();
    append_event_json(scratch_, *schema_, event, state, payload.bytes,
                      {.member = member_, .payload_hex = payload_hex_});
    scratch_ += '\n';
    out.put(scratch_);
}

}  // namespace evring::cli
