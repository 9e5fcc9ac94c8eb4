// lib/schema/schema_render_support.hpp — what the JSON and text renderers
// (schema_json.cpp, schema_text.cpp) share: the per-event output bound, the
// spelling of numbers, and the two entry shapes (append to a string, write
// into a caller's buffer). Private to the renderers.
//
// One place for each so that the two formats cannot drift on the rules that
// schema_render.hpp promises for both: where output stops ("Bounded
// output"), that nothing is written on a DecodeError, and that a buffer too
// small reports the exact size needed.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "evring/schema/schema_decode.hpp"
#include "evring/schema/schema_render.hpp"
#include "schema/schema_sinks.hpp"

namespace evring::detail {

// The per-event bound (output_bound in schema_render.hpp). A visitor's full()
// is reached(sink): true once the output has reached the bound, which the
// walk (schema_walk.hpp) takes as "no more values". It remembers that it
// stopped the walk, so the visitor can end with the format's marker.
class OutputBound {
public:
    OutputBound(std::size_t max_output, std::size_t payload_size) noexcept
        : bound_(output_bound(max_output, payload_size)) {}

    template <class Sink>
    bool reached(const Sink& out) noexcept {
        if (out.total() < bound_) return false;
        truncated_ = true;
        return true;
    }
    bool truncated() const noexcept { return truncated_; }

private:
    std::size_t bound_;
    bool truncated_ = false;
};

// A scalar as a number (bool as true/false, or its byte value when it is
// neither 0 nor 1). `quote_words`: JSON, where nan and inf are strings.
template <class Sink>
void put_scalar(Sink& out, const ScalarValue& v, bool quote_words) {
    switch (v.type) {
    case Scalar::Bool:
        if (v.u <= 1) out.write(v.u ? std::string_view("true") : std::string_view("false"));
        else put_unsigned(out, v.u);
        break;
    case Scalar::I8: case Scalar::I16: case Scalar::I32: case Scalar::I64: put_signed(out, v.i); break;
    case Scalar::F32: case Scalar::F64: put_float(out, v.f, v.type == Scalar::F32, quote_words); break;
    default: put_unsigned(out, v.u); break;
    }
}

// An enum value that has no name: its number, signed as the enum is.
template <class Sink>
void put_enum_number(Sink& out, const SchemaEnum& e, const ScalarValue& v) {
    if (e.is_signed()) put_signed(out, v.i);
    else put_unsigned(out, v.u);
}

// Checks the payload, then `render(sink, event)` appends to `out`. On a DecodeError
// `out` is untouched.
template <class Render>
DecodeError render_appending(const Schema& schema, std::uint16_t event_type, std::span<const std::byte> payload,
                             std::string& out, Render&& render) {
    DecodeError e = check_payload(schema, event_type, payload);
    if (!e.ok()) return e;
    StringSink sink(out);
    render(sink, *schema.event(event_type));
    return e;
}

// Checks the payload, then `render(sink, event)` writes into `out` from its
// start.
// A SpanSink counts past the buffer's end, so a buffer too small gets
// OutputTooSmall with the exact size needed (and `written` stays 0).
template <class Render>
DecodeError render_into(const Schema& schema, std::uint16_t event_type, std::span<const std::byte> payload,
                        std::span<char> out, std::size_t& written, Render&& render) noexcept {
    written = 0;
    DecodeError e = check_payload(schema, event_type, payload);
    if (!e.ok()) return e;
    SpanSink sink(out);
    render(sink, *schema.event(event_type));
    if (sink.total() > out.size()) {
        e.status = DecodeStatus::OutputTooSmall;
        e.needed = sink.total();
        return e;
    }
    written = sink.total();
    return e;
}

}  // namespace evring::detail
