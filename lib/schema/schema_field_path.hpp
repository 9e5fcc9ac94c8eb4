// lib/schema/schema_field_path.hpp — the one walk of a payload field path
// through an event type's layout: --where, --fields, stats --field, span
// labels and marks, assembled spans, the C ABI's field lookup and
// Schema::find_field all find fields through it.
//
// A path is a list of steps: NAME ('.' NAME | '[' INDEX ']')* as filter
// expressions write it (`txn_header.gas_limit`, `levels[2].price`,
// `topics[0]`; the text is parsed by lib/query/field_path.hpp). Its first
// step may name a trailing array of the payload (`note`, `topics[1]`); the
// others go through nested structs and fixed arrays.
//
// Contract: only the schema is read, never a payload, so where a trailing
// array's element lies is left to the caller (it depends on the counts of the
// payload at hand). An index past a fixed array's count is no field.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "evring/schema/schema.hpp"

namespace evring::detail {

struct FieldPathStep {
    std::string name;     // empty for an index step
    bool index = false;
    std::uint64_t i = 0;
};

struct FieldPlace {
    TypeId type = 0;           // the field's type (for a trailing array not indexed: its element type)
    std::uint32_t offset = 0;  // in the fixed part, or inside the trailing array's element
    int trailing = -1;         // the payload's trailing array the path starts with, or -1
    bool element = false;      // trailing: the path indexes one element (else it names the whole array)
    std::uint64_t index = 0;   // trailing with element: which one
    std::size_t steps = 0;     // how many steps were walked: fewer than the path's when the path goes on
                               // past a trailing array it does not index (`note.x`)
};

// Where `path` leads in `event`'s payload; nullopt when the event has no such field.
std::optional<FieldPlace> find_field_path(const Schema& schema, const SchemaEvent& event,
                                          std::span<const FieldPathStep> path);

}  // namespace evring::detail
