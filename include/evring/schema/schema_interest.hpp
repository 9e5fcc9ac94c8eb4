// lib/schema/schema_interest.hpp — interest words in a schema's words.
//
// How a reader turns `--keywords trades,quotes --level 3` into the word it
// registers (reader_registration.hpp), and how tools show a word:
//
//     auto word = evring::interest_from_keywords(schema, "trades,quotes", 3);
//     if (!word) fail(word.error().message());  // "unknown keyword 'trade' (the schema has: trades, quotes)"
//     options.interest = *word;
//     evring::describe_interest(*word, &schema);  // "keywords trades,quotes, levels 0..3"
//
// Contract: interest_from_keywords refuses an unknown keyword naming it and
// the schema's keywords, an empty name, and a level above 15; an empty list
// means every keyword (only the level narrows). describe_interest shows any
// word, a damaged one included, without failing: keyword bits the schema
// does not name are shown by number.
//
// Thread safety: free functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "evring/error.hpp"
#include "evring/ring/interest.hpp"
#include "evring/schema/schema.hpp"

namespace evring {

// The interest word wanting `keywords` (comma-separated names of `schema`'s
// keywords; empty: all of them) up to `level`.
Result<std::uint64_t> interest_from_keywords(const Schema& schema, std::string_view keywords,
                                             unsigned level = kMaxInterestLevel);

// "everything", or "keywords a,b, levels 0..3" ("keywords none", "bit 40"
// for bits without a name; no schema: every bit by number).
std::string describe_interest(std::uint64_t word, const Schema* schema = nullptr);

}  // namespace evring
