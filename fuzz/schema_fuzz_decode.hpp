// Fuzz support: decode one payload every way the library offers and trap on
// any broken promise of schema_decode.hpp / schema_render.hpp:
// - a payload is accepted only with exactly the size its layout gives;
// - a refused payload leaves every output untouched and visits nothing;
// - JSON output is one object with balanced brackets outside strings;
// - the span writers report the exact size needed, and writing into exactly
//   that much reproduces the string writer's output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "evring/schema/schema_decode.hpp"
#include "evring/schema/schema_render.hpp"
#include "exercise.hpp"

namespace evring::fuzz {

struct CountingVisitor : FieldVisitor {
    std::uint64_t calls = 0;
    long depth = 0;
    void begin_struct(std::string_view, const SchemaStruct*) override { ++calls, ++depth; }
    void end_struct() override { ++calls, --depth; }
    void begin_array(std::string_view, std::uint64_t) override { ++calls, ++depth; }
    void end_array() override { ++calls, --depth; }
    void scalar(std::string_view, const ScalarValue&) override { ++calls; }
    void enumeration(std::string_view, const SchemaEnum&, const ScalarValue&, std::string_view) override { ++calls; }
    void bytes(std::string_view, std::span<const std::byte>) override { ++calls; }
    void wide_integer(std::string_view, Scalar, std::span<const std::byte>) override { ++calls; }
};

inline bool balanced_json_object(const std::string& json) {
    if (json.size() < 2 || json.front() != '{' || json.back() != '}') return false;
    long depth = 0;
    bool in_string = false;
    for (char c : json) {
        if (in_string) {
            in_string = c != '"';  // names and values never contain escaped quotes
            continue;
        }
        if (c == '"') in_string = true;
        else if (c == '{' || c == '[') ++depth;
        else if (c == '}' || c == ']') --depth;
        if (depth < 0) return false;
    }
    return depth == 0 && !in_string;
}

// Returns true when the payload was accepted.
inline bool decode_every_way(const Schema& schema, std::uint16_t type, std::span<const std::byte> payload) {
    const DecodeError checked = check_payload(schema, type, payload);
    std::string json = "x", text = "x";
    const DecodeError e1 = append_fields_json(schema, type, payload, json);
    const DecodeError e2 = append_event_text(schema, type, payload, text);
    CountingVisitor visitor;
    const DecodeError e3 = visit_payload(schema, type, payload, visitor);
    EVRING_FUZZ_CHECK(e1.status == checked.status && e2.status == checked.status && e3.status == checked.status);
    char reason[64];
    EVRING_FUZZ_CHECK(format_decode_error(schema, checked, reason) <= sizeof reason);
    if (!checked.ok()) {
        EVRING_FUZZ_CHECK(json == "x" && text == "x" && visitor.calls == 0);
        EVRING_FUZZ_CHECK(!describe_decode_error(schema, checked).empty());
        return false;
    }
    EVRING_FUZZ_CHECK(checked.expected_size == payload.size());
    EVRING_FUZZ_CHECK(visitor.depth == 0 && visitor.calls >= 2);
    json.erase(0, 1);
    text.erase(0, 1);
    EVRING_FUZZ_CHECK(balanced_json_object(json));
    EVRING_FUZZ_CHECK(text.compare(0, schema.event(type)->name.size(), schema.event(type)->name) == 0);
    std::vector<char> small(json.size() / 2);
    std::size_t written = 1;
    const DecodeError too_small = write_fields_json(schema, type, payload, small, written);
    EVRING_FUZZ_CHECK(too_small.status == DecodeStatus::OutputTooSmall && too_small.needed == json.size() &&
                      written == 0);
    std::vector<char> exact(json.size());
    EVRING_FUZZ_CHECK(write_fields_json(schema, type, payload, exact, written).ok() && written == json.size());
    EVRING_FUZZ_CHECK(std::string(exact.data(), written) == json);
    std::vector<char> line(text.size());
    EVRING_FUZZ_CHECK(write_event_text(schema, type, payload, line, written).ok() && written == text.size());
    return true;
}

}  // namespace evring::fuzz
