// lib/record/assembled_schema.hpp — the content of a ring that holds
// assembled span instances as JSON (`evring mirror --assemble`): a tiny
// embedded schema, `evring_assembled`, so `evring watch` shows its events by
// name and `--format jsonl` prints each instance's JSON text in `fields.json`.
//
//     content_type 16723 (0x4153, "AS"), content_name evring_assembled
//     event 2 ASSEMBLED_SPAN: label u64, json_length u64, then json char[json_length]
//
// `json` is the instance's object of query/assembled_json.hpp, byte for byte
// (UTF-8, no newline); `label` repeats its label for `--where label == N`.
// docs/format.md does not change: this is an ordinary schema (docs/schema.md).
//
// Thread safety: assembled_schema() parses once (a function-local static).
#pragma once

#include <cstdint>
#include <string_view>

#include "evring/schema/schema.hpp"

namespace evring {

inline constexpr std::uint16_t kAssembledContentType = 0x4153;
inline constexpr std::uint16_t kAssembledSpanEvent = 2;
inline constexpr std::size_t kAssembledHeaderSize = 16;  // label and json_length, then the JSON

std::string_view assembled_schema_text();
const Schema& assembled_schema();

}  // namespace evring
