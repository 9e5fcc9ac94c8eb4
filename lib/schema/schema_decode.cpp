// Checking a payload against its layout, visiting it, and the error messages.
#include <iterator>

#include <fmt/format.h>

#include "evring/schema/schema_decode.hpp"
#include "schema/schema_walk.hpp"

namespace evring {

namespace {

// Forwards the walk to the virtual interface.
struct VirtualVisitor {
    FieldVisitor& v;
    bool full() { return v.full(); }
    void begin_struct(std::string_view n, const SchemaStruct* s) { v.begin_struct(n, s); }
    void end_struct() { v.end_struct(); }
    void begin_array(std::string_view n, std::uint64_t c) { v.begin_array(n, c); }
    void end_array() { v.end_array(); }
    void scalar(std::string_view n, const ScalarValue& x) { v.scalar(n, x); }
    void enumeration(std::string_view n, const SchemaEnum& e, const ScalarValue& x, std::string_view name) {
        v.enumeration(n, e, x, name);
    }
    void bytes(std::string_view n, std::span<const std::byte> b) { v.bytes(n, b); }
    void wide_integer(std::string_view n, Scalar t, std::span<const std::byte> b) { v.wide_integer(n, t, b); }
    void text(std::string_view n, std::span<const std::byte> b) { v.text(n, detail::text_of(b), b); }
};

// An output iterator that drops what does not fit. Copies share one cursor,
// as "*it++ = c" writes through a copy.
struct Cursor {
    char* p;
    char* end;
};
struct BoundedOutput {
    using iterator_category = std::output_iterator_tag;
    using value_type = void;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = void;
    Cursor* cursor;
    BoundedOutput& operator*() { return *this; }
    BoundedOutput& operator=(char c) {
        if (cursor->p < cursor->end) *cursor->p++ = c;
        return *this;
    }
    BoundedOutput& operator++() { return *this; }
    BoundedOutput operator++(int) { return *this; }
};

template <class Out>
Out write_reason(Out out, const Schema& schema, const DecodeError& e) {
    const SchemaEvent* event = schema.event(e.event_type);
    const std::string_view name = event != nullptr ? std::string_view(event->name) : std::string_view("?");
    switch (e.status) {
    case DecodeStatus::Ok: return fmt::format_to(out, "ok");
    case DecodeStatus::UnknownEventType:
        return fmt::format_to(out, "unknown event type {} (schema '{}' declares no such number)", e.event_type,
                              schema.content_name());
    case DecodeStatus::SizeMismatch:
        if (event != nullptr && e.payload_size < schema.fixed_size(*event))
            return fmt::format_to(out, "size mismatch: {} payload is {} bytes, shorter than its {}-byte fixed part",
                                  name, e.payload_size, schema.fixed_size(*event));
        return fmt::format_to(out, "size mismatch: {} payload is {} bytes, its layout needs {}", name,
                              e.payload_size, e.expected_size);
    case DecodeStatus::CountOverflow:
        return fmt::format_to(out,
                              "count overflow: {} trailing array '{}' claims {} elements (count field {}), more "
                              "than the {} bytes left in the {}-byte payload hold",
                              name, e.array != nullptr ? e.array->name : "?", e.count,
                              e.array != nullptr ? e.array->count_path : "?", e.available, e.payload_size);
    case DecodeStatus::OutputTooSmall:
        return fmt::format_to(out, "output buffer too small: {} bytes needed", e.needed);
    }
    return out;
}

}  // namespace

DecodeError check_payload(const Schema& schema, std::uint16_t event_type,
                          std::span<const std::byte> payload) noexcept {
    DecodeError e;
    e.event_type = event_type;
    e.payload_size = payload.size();
    const SchemaEvent* event = schema.event(event_type);
    if (event == nullptr) {
        e.status = DecodeStatus::UnknownEventType;
        return e;
    }
    const SchemaStruct* s = schema.payload_of(*event);
    const std::uint64_t fixed = s == nullptr ? 0 : s->size;
    e.expected_size = fixed;
    if (payload.size() < fixed) {
        e.status = DecodeStatus::SizeMismatch;
        return e;
    }
    if (s != nullptr) {
        // used <= payload.size() throughout, so `payload.size() - used` never wraps
        // and count * size is only formed once it is known to fit.
        std::uint64_t used = fixed;
        for (const auto& t : s->trailing) {
            const std::uint64_t count =
                detail::load_unsigned(payload.data() + t.count_offset, scalar_size(t.count_scalar));
            const std::uint64_t size = schema.type(t.element).size;
            const std::uint64_t available = payload.size() - used;
            if (count > available / size) {
                e.status = DecodeStatus::CountOverflow;
                e.array = &t;
                e.count = count;
                e.available = available;
                return e;
            }
            used += count * size;
        }
        e.expected_size = used;
    }
    if (e.expected_size != payload.size()) e.status = DecodeStatus::SizeMismatch;
    return e;
}

DecodeError visit_payload(const Schema& schema, std::uint16_t event_type, std::span<const std::byte> payload,
                          FieldVisitor& visitor) {
    DecodeError e = check_payload(schema, event_type, payload);
    if (!e.ok()) return e;
    VirtualVisitor forward{visitor};
    detail::PayloadWalker<VirtualVisitor>(schema, forward).payload(*schema.event(event_type), payload.data());
    return e;
}

std::string describe_decode_error(const Schema& schema, const DecodeError& error) {
    std::string text;
    write_reason(std::back_inserter(text), schema, error);
    return text;
}

std::size_t format_decode_error(const Schema& schema, const DecodeError& error, std::span<char> out) noexcept {
    try {
        Cursor cursor{out.data(), out.data() + out.size()};
        write_reason(BoundedOutput{&cursor}, schema, error);
        return static_cast<std::size_t>(cursor.p - out.data());
    } catch (...) {  // fmt reports only formatting bugs by exception; none reach a caller
        return 0;
    }
}

}  // namespace evring
