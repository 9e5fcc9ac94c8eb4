// The words of a write refusal (schema_write_check.hpp).
#include <fmt/format.h>

#include "schema/schema_write_check.hpp"

namespace evring {

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
