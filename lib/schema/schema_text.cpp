// A checked payload as "TYPE_NAME field=value ..." (rules in schema_render.hpp).
#include "evring/schema/schema_render.hpp"
#include "schema/schema_data.hpp"
#include "schema/schema_render_support.hpp"
#include "schema/schema_sinks.hpp"
#include "schema/schema_text_value.hpp"
#include "schema/schema_walk.hpp"

namespace evring {

namespace {

// Struct nesting is at most kMaxStructDepth, with at most one array level
// between two structs (arrays of arrays are not in the language).
constexpr std::size_t kMaxLevels = 2 * (detail::kMaxStructDepth + 2);
constexpr std::size_t kMaxPath = (detail::kMaxStructDepth + 1) * (detail::kMaxNameLength + 1);

template <class Sink>
class TextVisitor {
public:
    TextVisitor(Sink& out, const TextOptions& options, std::size_t payload_size) noexcept
        : out_(out), options_(options), bound_(options.max_output, payload_size) {}

    bool full() { return bound_.reached(out_); }
    bool truncated() const noexcept { return bound_.truncated(); }

    void begin_struct(std::string_view name, const SchemaStruct*) {
        if (depth_ == 0) return push(Kind::Path);  // the payload itself
        if (top().kind == Kind::Path) {
            const std::size_t saved = path_length_;
            append_path(name);
            push(Kind::Path);
            levels_[depth_ - 1].saved_path = saved;
            return;
        }
        before(name);
        out_.put('{');
        push(Kind::Braced);
    }
    void end_struct() {
        if (depth_ == 0) return;
        const Level level = levels_[--depth_];
        if (level.kind == Kind::Braced) out_.put('}');
        else path_length_ = level.saved_path;
    }
    void begin_array(std::string_view name, std::uint64_t) {
        before(name);
        out_.put('[');
        push(Kind::Array);
    }
    void end_array() {
        out_.put(']');
        if (depth_ > 0) --depth_;
    }
    void scalar(std::string_view name, const ScalarValue& v) {
        before(name);
        detail::put_scalar(out_, v, false);
    }
    void enumeration(std::string_view name, const SchemaEnum& e, const ScalarValue& v, std::string_view value_name) {
        before(name);
        if (!value_name.empty()) out_.write(value_name);
        else detail::put_enum_number(out_, e, v);
    }
    void bytes(std::string_view name, std::span<const std::byte> b) {
        before(name);
        detail::put_shown_bytes(out_, b.data(), b.size(), options_.max_bytes);
    }
    void wide_integer(std::string_view name, Scalar, std::span<const std::byte> le) {
        before(name);
        detail::put_hex_integer(out_, le.data(), le.size());
    }
    // char[N]: name="text" (schema_text_value.hpp).
    void text(std::string_view name, std::span<const std::byte> field) {
        before(name);
        detail::put_quoted_text(out_, detail::text_of(field));
    }

private:
    enum class Kind : std::uint8_t {
        Path,    // fields print as " path.name=value"
        Array,   // elements print comma-separated inside [ ]
        Braced,  // a struct inside an array: {name=value name=value}
    };
    struct Level {
        Kind kind;
        bool first;
        std::size_t saved_path;
    };

    Level& top() noexcept { return levels_[depth_ - 1]; }
    void push(Kind kind) noexcept {
        if (depth_ < kMaxLevels) levels_[depth_++] = Level{kind, true, path_length_};
    }
    void append_path(std::string_view name) noexcept {
        if (path_length_ + name.size() + 1 > kMaxPath) return;
        std::memcpy(path_ + path_length_, name.data(), name.size());
        path_length_ += name.size();
        path_[path_length_++] = '.';
    }
    void before(std::string_view name) {
        Level& level = top();
        switch (level.kind) {
        case Kind::Path:
            out_.put(' ');
            out_.write(path_, path_length_);
            out_.write(name);
            out_.put('=');
            break;
        case Kind::Array:
            if (!level.first) out_.put(',');
            break;
        case Kind::Braced:
            if (!level.first) out_.put(' ');
            out_.write(name);
            out_.put('=');
            break;
        }
        level.first = false;
    }

    Sink& out_;
    const TextOptions& options_;
    detail::OutputBound bound_;
    Level levels_[kMaxLevels];
    std::size_t depth_ = 0;
    char path_[kMaxPath];
    std::size_t path_length_ = 0;
};

template <class Sink>
void render(const Schema& schema, const SchemaEvent& event, std::span<const std::byte> payload, Sink& sink,
            const TextOptions& options) {
    sink.write(event.name);
    TextVisitor<Sink> visitor(sink, options, payload.size());
    detail::PayloadWalker<TextVisitor<Sink>>(schema, visitor).payload(event, payload.data());
    if (visitor.truncated()) sink.write(" (truncated)");
}

}  // namespace

DecodeError append_event_text(const Schema& schema, std::uint16_t event_type, std::span<const std::byte> payload,
                              std::string& out, const TextOptions& options) {
    return detail::render_appending(schema, event_type, payload, out, [&](auto& sink, const SchemaEvent& event) {
        render(schema, event, payload, sink, options);
    });
}

DecodeError write_event_text(const Schema& schema, std::uint16_t event_type, std::span<const std::byte> payload,
                             std::span<char> out, std::size_t& written, const TextOptions& options) noexcept {
    return detail::render_into(schema, event_type, payload, out, written, [&](auto& sink, const SchemaEvent& event) {
        render(schema, event, payload, sink, options);
    });
}

}  // namespace evring
