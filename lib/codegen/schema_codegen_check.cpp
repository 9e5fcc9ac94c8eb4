// The payload check of a generated header: check_payload_size and
// publish_checked (the raw path, checked against the compiled-in layout).
//
// check_payload_size decides what evring::check_payload (schema_decode.hpp)
// decides, with no schema at run time: the event type is declared and the
// payload is exactly its fixed part plus each trailing array, every count
// checked against the bytes left before it is multiplied.
#include <fmt/format.h>

#include "schema/schema_write_check.hpp"
#include "codegen/schema_codegen_names.hpp"

namespace evring::detail {

namespace {

constexpr std::string_view kPreamble = R"(// check_payload_size(type, payload): would evring::check_payload accept this event? The
// type must be declared and the payload exactly its fixed part plus each trailing array (the
// count read from its count field). The publish_<event> helpers need no check: their structs
// are static_asserted and they set the counts from the spans. It is for bytes built by hand.
struct PayloadCheck {
    enum class Status : std::uint8_t { Ok, UnknownType, WrongSize };
    Status status = Status::Ok;
    std::uint16_t event_type = 0;
    std::uint64_t size = 0;      // the payload's size
    std::uint64_t expected = 0;  // WrongSize: what the layout and its counts need (0: a count overflows)
    std::string_view rule;       // the layout in words, "exactly 48 bytes"; empty for an unknown type
    constexpr explicit operator bool() const noexcept { return status == Status::Ok; }
};

namespace generated_detail {
// Adds count x element_size bytes to `used`; false when they do not fit the payload's `size`
// bytes. used <= size; the count is read from the fixed part at `fixed`.
inline bool take_trailing(const std::byte* fixed, std::size_t count_offset, std::size_t count_width,
                          std::uint64_t element_size, std::uint64_t size, std::uint64_t& used) noexcept {
    std::uint64_t count = 0;  // little-endian, as the ring is
    std::memcpy(&count, fixed + count_offset, count_width);
    if (count > (size - used) / element_size) return false;
    used += count * element_size;
    return true;
}
}  // namespace generated_detail

// The check of a payload of `size` bytes whose fixed part (when size allows one) is at `fixed`.
inline PayloadCheck check_layout(std::uint16_t event_type, const std::byte* fixed, std::uint64_t size) noexcept {
    PayloadCheck c;
    c.event_type = event_type;
    c.size = size;
    std::uint64_t fixed_size = 0;
    switch (event_type) {
)";

// A C++ string literal of plain text (rules are ASCII made of schema names).
std::string literal(std::string_view text) {
    std::string out = "\"";
    for (char ch : text) {
        if (ch == '"' || ch == '\\') out += '\\';
        out += ch;
    }
    return out + "\"";
}

}  // namespace

void append_payload_checks(std::string& out, const Schema& schema) {
    out += kPreamble;
    for (const auto& e : schema.events())
        out += fmt::format("    case {}: c.rule = {}; fixed_size = {}; break;  // {}\n", e.number,
                           literal(describe_payload_rule(schema, e)), schema.fixed_size(e), e.name);
    out += "    default: c.status = PayloadCheck::Status::UnknownType; return c;\n    }\n"
           "    c.expected = fixed_size;\n"
           "    if (size < fixed_size) {\n        c.status = PayloadCheck::Status::WrongSize;\n        return c;\n    }\n"
           "    std::uint64_t used = fixed_size;\n    bool fits = true;\n    (void)fixed;  // unread when no event has trailing arrays\n    switch (event_type) {\n";
    for (const auto& e : schema.events()) {
        const SchemaStruct* s = schema.payload_of(e);
        if (s == nullptr || s->trailing.empty()) continue;
        out += fmt::format("    case {}:\n        fits =", e.number);
        for (std::size_t i = 0; i < s->trailing.size(); ++i) {
            const SchemaTrailing& t = s->trailing[i];
            out += fmt::format("{}generated_detail::take_trailing(fixed, {}, {}, {}, size, used)",
                               i ? " &&\n               " : " ", t.count_offset, scalar_size(t.count_scalar),
                               schema.type(t.element).size);
        }
        out += ";\n        break;\n";
    }
    out += "    default: break;\n    }\n"
           "    c.expected = fits ? used : 0;\n"
           "    if (!fits || used != size) c.status = PayloadCheck::Status::WrongSize;\n"
           "    return c;\n}\n\n"
           "inline PayloadCheck check_payload_size(std::uint16_t event_type, std::span<const std::byte> payload) noexcept {\n"
           "    return check_layout(event_type, payload.data(), payload.size());\n}\n\n";
    out += "namespace generated_detail {\n"
           "template <class Publisher>\n"
           "std::uint64_t publisher_interest(const Publisher& publisher) noexcept {\n"
           "    if constexpr (requires { publisher.interest(); }) return publisher.interest();\n"
           "    else return evring::kInterestEverything;\n"
           "}\n"
           "}  // namespace generated_detail\n\n";
    out += "// publish_checked: publishes bytes built by hand only when check_payload_size accepts them;\n"
           "// *seqno gets the event's sequence number, or 0 when refused, when the payload did not fit, or\n"
           "// when no reader wants the event (interest_of; the check is then still Ok).\n"
           "template <class Publisher>\n"
           "PayloadCheck publish_checked(Publisher& publisher, std::uint16_t event_type, std::span<const std::byte> "
           "payload,\n                             const Flow& flow = {}, std::uint64_t* seqno = nullptr) noexcept {\n"
           "    if (seqno != nullptr) *seqno = 0;\n"
           "    const PayloadCheck check = check_payload_size(event_type, payload);\n"
           "    if (!check) return check;\n"
           "    if (!evring::interest_admits(generated_detail::publisher_interest(publisher), interest_of(static_cast<EventType>(event_type))))\n"
           "        return check;\n"
           "    auto reservation = publisher.reserve(payload.size());\n"
           "    if (!reservation) return check;\n"
           "    reservation.descriptor().event_type = event_type;\n"
           "    reservation.descriptor().content_ext = flow.tags();\n"
           "    if (!payload.empty()) std::memcpy(reservation.payload(), payload.data(), payload.size());\n"
           "    publisher.commit(reservation);\n"
           "    if (seqno != nullptr) *seqno = reservation.seqno();\n"
           "    return check;\n}\n\n";
}

}  // namespace evring::detail
