// lib/schema/schema_write_check.hpp — refusing an event its schema rules out, before it is published.
//
// How a writer checks an event:
//
//     evring::DecodeError e = evring::check_payload(schema, type, payload);   // schema_decode.hpp
//     if (!e.ok()) return fail(evring::describe_write_refusal(schema, e));
//     // "QUOTE (event type 2): a payload of 2 bytes, but its layout is exactly 48 bytes"
//
// Readers and writers apply one rule (check_payload): a payload is exactly the
// fixed part of its event type's layout plus each trailing array, the element
// count read from its count field. The typed writers of the C ABI
// (evring_writer_record with a schema), of Python (Writer.record) and the
// generated headers' check_payload_size refuse what it refuses; raw
// publishing (Publisher::reserve/commit, evring_writer_reserve/commit,
// Writer.record_raw) is unchecked unless asked to check.
//
// Contract: describe_write_refusal names the event type (name and number),
// the payload's size and the rule it breaks; for an unknown type it lists the
// schema's types (at most 8 of them, then how many more).
//
// WriteRules is the typed writers' fast path to the same verdict: a table,
// built once per writer, of each event type's exact size, or its fixed part
// and single trailing array. admits() is true only where check_payload would
// accept; false means "not decided here", and the writer then asks
// check_payload, which also gives the reason. It exists because walking the
// schema costs the C ABI and Python about 9 ns per event, against the 3 ns a
// checked write may add (issue 22; bench/micro/checked_publish_bench.cpp).
//
// Thread safety: free functions; a WriteRules is immutable once built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "evring/schema/schema.hpp"
#include "evring/schema/schema_decode.hpp"

namespace evring {

// The refusal in words; `error` comes from check_payload and is not ok().
std::string describe_write_refusal(const Schema& schema, const DecodeError& error);

// The layout rule of an event type in words: "exactly 48 bytes", or
// "a 32-byte fixed part, then name[name_length] of 1-byte elements".
std::string describe_payload_rule(const Schema& schema, const SchemaEvent& event);

class WriteRules {
public:
    WriteRules() = default;
    explicit WriteRules(const Schema& schema);

    bool admits(std::uint16_t event_type, std::span<const std::byte> payload) const noexcept {
        if (event_type >= rules_.size()) return false;
        const Rule& rule = rules_[event_type];
        switch (rule.kind) {
        case Kind::Exact: return payload.size() == rule.fixed;
        case Kind::OneTrailing: {
            if (payload.size() < rule.fixed) return false;
            std::uint64_t count = 0;  // little-endian, as every RING01 field
            std::memcpy(&count, payload.data() + rule.count_offset, rule.count_width);
            std::uint64_t bytes = 0;
            return !__builtin_mul_overflow(count, rule.element_size, &bytes) && bytes == payload.size() - rule.fixed;
        }
        case Kind::Ask: return false;
        }
        return false;
    }

private:
    enum class Kind : std::uint8_t { Ask, Exact, OneTrailing };
    struct Rule {
        Kind kind = Kind::Ask;         // unknown types and two or more trailing arrays: Ask
        std::uint8_t count_width = 0;  // bytes of the trailing array's count field
        std::uint32_t count_offset = 0;  // inside the fixed part (the schema guarantees it)
        std::uint64_t fixed = 0;
        std::uint64_t element_size = 0;
    };
    std::vector<Rule> rules_;  // by event number: at most 65,536 entries
};

}  // namespace evring
