// lib/schema/schema_data.hpp — the parsed representation a Schema shares (private).
//
// Built once by the parser (schema_parse.cpp), completed by finish() (indexes,
// canonical form, hash), then only read.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "evring/schema/schema.hpp"

namespace evring::detail {

// Limits that keep hostile schemas cheap to parse and decode.
inline constexpr std::size_t kMaxNameLength = 128;
inline constexpr int kMaxStructDepth = 32;

// A name of the language: [A-Za-z_][A-Za-z0-9_]*, at most kMaxNameLength characters.
bool is_identifier(std::string_view name) noexcept;

struct SchemaData {
    std::uint16_t content_type = 0;
    std::string content_name;
    std::string description;
    std::uint32_t payload_alignment = 16;
    std::array<std::string, 4> flow_tags;
    std::vector<SchemaHash> describes;  // sorted

    std::vector<SchemaType> types;
    std::vector<SchemaStruct> structs;  // by name
    std::vector<SchemaEnum> enums;      // by name
    std::vector<SchemaEvent> events;    // by number
    std::vector<SchemaSpan> spans;      // by name

    // events[event_slot[number]] for numbers up to the largest one; -1 when undeclared.
    std::vector<std::int32_t> event_slot;
    // Indices into events, sorted by name.
    std::vector<std::uint32_t> events_by_name;

    std::string canonical;
    SchemaHash hash{};
    std::string source;
    std::string source_name;

    // Sorts events, builds the indexes, computes the canonical form and the
    // hash, and wraps the result in a Schema.
    static Schema finish(std::unique_ptr<SchemaData> data);
};

// The canonical form (docs/schema.md) of a parsed schema.
std::string canonical_form_of(const SchemaData& data);
// SHA-256 through OpenSSL's EVP interface.
SchemaHash sha256(std::string_view bytes);

// The canonical spelling of a type ("u64", "bytes[20]", "struct:block_tag", "u64[4]").
std::string canonical_type_name(const SchemaData& data, TypeId id);

}  // namespace evring::detail
