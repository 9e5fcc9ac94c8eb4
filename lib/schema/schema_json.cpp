// A checked payload written as one JSON object (rules in schema_render.hpp).
#include "evring/schema/schema_render.hpp"
#include "util/text_escape.hpp"
#include "schema/schema_render_support.hpp"
#include "schema/schema_sinks.hpp"
#include "schema/schema_text_value.hpp"
#include "schema/schema_walk.hpp"

namespace evring {

namespace {

template <class Sink>
class JsonVisitor {
public:
    JsonVisitor(Sink& out, const JsonOptions& options, std::size_t payload_size) noexcept
        : out_(out), options_(options), bound_(options.max_output, payload_size) {}

    bool full() { return bound_.reached(out_); }
    void begin_struct(std::string_view name, const SchemaStruct*) {
        before(name);
        out_.put('{');
        comma_ = false;
        ++depth_;
    }
    void end_struct() {
        if (--depth_ == 0 && bound_.truncated()) {
            // The marker closes the payload object: a key no field can have.
            before(kTruncatedKey);
            out_.write("true");
        }
        out_.put('}');
        comma_ = true;
    }
    void begin_array(std::string_view name, std::uint64_t) {
        before(name);
        out_.put('[');
        comma_ = false;
        ++depth_;
    }
    void end_array() {
        out_.put(']');
        comma_ = true;
        --depth_;
    }
    void scalar(std::string_view name, const ScalarValue& v) {
        before(name);
        detail::put_scalar(out_, v, true);
        comma_ = true;
    }
    void enumeration(std::string_view name, const SchemaEnum& e, const ScalarValue& v, std::string_view value_name) {
        before(name);
        if (!value_name.empty()) {
            out_.put('"');
            out_.write(value_name);  // a name: no character needs escaping
            out_.put('"');
        } else {
            detail::put_enum_number(out_, e, v);
        }
        comma_ = true;
    }
    void bytes(std::string_view name, std::span<const std::byte> b) {
        before(name);
        out_.put('"');
        detail::put_shown_bytes(out_, b.data(), b.size(), options_.max_bytes);
        out_.put('"');
        comma_ = true;
    }
    void wide_integer(std::string_view name, Scalar, std::span<const std::byte> le) {
        before(name);
        out_.put('"');
        detail::put_hex_integer(out_, le.data(), le.size());
        out_.put('"');
        comma_ = true;
    }
    // char[N]: a JSON string (schema_text_value.hpp).
    void text(std::string_view name, std::span<const std::byte> field) {
        before(name);
        out_.put('"');
        put_json_string_body(out_, detail::text_of(field));
        out_.put('"');
        comma_ = true;
    }

private:
    void before(std::string_view name) {
        if (comma_) out_.put(',');
        if (name.empty()) return;
        out_.put('"');
        out_.write(name);  // field names are identifiers: nothing to escape
        out_.write("\":", 2);
    }

    static constexpr std::string_view kTruncatedKey = "(truncated)";

    Sink& out_;
    const JsonOptions& options_;
    detail::OutputBound bound_;
    std::size_t depth_ = 0;
    bool comma_ = false;
};

// The payload as one object, through either sink.
template <class Sink>
void render(const Schema& schema, const SchemaEvent& event, std::span<const std::byte> payload, Sink& sink,
            const JsonOptions& options) {
    JsonVisitor<Sink> visitor(sink, options, payload.size());
    detail::PayloadWalker<JsonVisitor<Sink>>(schema, visitor).payload(event, payload.data());
}

}  // namespace

DecodeError append_fields_json(const Schema& schema, std::uint16_t event_type, std::span<const std::byte> payload,
                               std::string& out, const JsonOptions& options) {
    return detail::render_appending(schema, event_type, payload, out, [&](auto& sink, const SchemaEvent& event) {
        render(schema, event, payload, sink, options);
    });
}

DecodeError write_fields_json(const Schema& schema, std::uint16_t event_type, std::span<const std::byte> payload,
                              std::span<char> out, std::size_t& written) noexcept {
    return detail::render_into(schema, event_type, payload, out, written, [&](auto& sink, const SchemaEvent& event) {
        render(schema, event, payload, sink, JsonOptions{});
    });
}

void append_shown_bytes(std::string& out, std::span<const std::byte> bytes, std::size_t max_bytes) {
    detail::StringSink sink(out);
    detail::put_shown_bytes(sink, bytes.data(), bytes.size(), max_bytes);
}

std::string json_string_literal(std::string_view text) {
    std::string out;
    append_json_string(out, text);  // the one JSON escaper (text_escape.hpp)
    return out;
}

}  // namespace evring
