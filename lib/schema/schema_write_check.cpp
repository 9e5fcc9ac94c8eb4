// The words of a write refusal (schema_write_check.hpp).
#include <fmt/format.h>

#include "schema/schema_write_check.hpp"

namespace evring {

WriteRules::WriteRules(const Schema& schema) {
    std::size_t size = 0;
    for (const auto& e : schema.events()) size = std::max<std::size_t>(size, std::size_t{e.number} + 1);
    rules_.resize(size);
    for (const auto& e : schema.events()) {
        Rule& rule = rules_[e.number];
        const SchemaStruct* s = schema.payload_of(e);
        if (s == nullptr) {
            rule.kind = Kind::Exact;  // no payload: exactly 0 bytes
        } else if (s->trailing.empty()) {
            rule.kind = Kind::Exact;
            rule.fixed = s->size;
        } else if (s->trailing.size() == 1 && scalar_size(s->trailing[0].count_scalar) <= 8) {
            const auto& t = s->trailing[0];
            rule.kind = Kind::OneTrailing;
            rule.fixed = s->size;
            rule.count_offset = t.count_offset;
            rule.count_width = static_cast<std::uint8_t>(scalar_size(t.count_scalar));
            rule.element_size = schema.type(t.element).size;
        }
    }
}

std::string describe_payload_rule(const Schema& schema, const SchemaEvent& event) {
    const SchemaStruct* s = schema.payload_of(event);
    if (s == nullptr) return "empty (0 bytes)";
    if (s->trailing.empty()) return fmt::format("exactly {} bytes", s->size);
    std::string rule = fmt::format("a {}-byte fixed part", s->size);
    for (const auto& t : s->trailing)
        rule += fmt::format(", then {}[{}] of {}-byte elements", t.name, t.count_path, schema.type(t.element).size);
    return rule;
}

namespace {

std::string unknown_type(const Schema& schema, std::uint16_t number) {
    std::string known;
    std::size_t listed = 0;
    for (const auto& e : schema.events()) {
        if (listed == 8) {
            known += fmt::format(" and {} more", schema.events().size() - listed);
            break;
        }
        known += fmt::format("{}{} {}", listed++ ? ", " : "", e.number, e.name);
    }
    return fmt::format("event type {} is not in schema '{}' (its types: {})", number, schema.content_name(),
                       known.empty() ? "none" : known);
}

}  // namespace

std::string describe_write_refusal(const Schema& schema, const DecodeError& e) {
    const SchemaEvent* event = schema.event(e.event_type);
    if (e.status == DecodeStatus::UnknownEventType || event == nullptr) return unknown_type(schema, e.event_type);
    const std::string head =
        fmt::format("{} (event type {}): a payload of {} bytes, but its layout is {}", event->name, event->number,
                    e.payload_size, describe_payload_rule(schema, *event));
    if (e.status == DecodeStatus::CountOverflow && e.array != nullptr)
        return head + fmt::format(", and its count {} = {} asks for more than the {} bytes left", e.array->count_path,
                                  e.count, e.available);
    const SchemaStruct* s = schema.payload_of(*event);
    if (e.status == DecodeStatus::SizeMismatch && s != nullptr && !s->trailing.empty() &&
        e.payload_size >= s->size)
        return head + fmt::format(", and its counts say {} bytes", e.expected_size);
    return head;
}

}  // namespace evring
