// lib/read/interest_request.hpp — the interest a reader registers
// (docs/interest.md): the CLI's --keywords and --level, the C ABI's and
// Python's open options, resolved by one function so each is refused alike.
//
//     InterestRequest asked{.keywords = "trades"};
//     auto word = resolve_interest(asked, schema, source, {.registering = true});
//     if (!word) ... usage error ...
//     if (*word) narrow_to_interest(**word, schema, follow.filter.types);
//
// Contract: without keywords or a level the reader wants everything and
// registers as before (nullopt). With them, the source must be a live ring or
// a live ring set (a set's reader registers in every member), the reader must
// register, and keywords must be the schema's; every refusal is one line
// naming the option (as the caller spells it: InterestNames) and the value,
// with errno EINVAL.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "evring/error.hpp"
#include "evring/schema/schema.hpp"
#include "evring/source/event_source.hpp"
#include "evring/source/flow_filter.hpp"

namespace evring {

struct InterestRequest {
    std::optional<std::string> keywords;  // comma-separated keywords of the source's schema
    std::optional<unsigned> level;        // 0..15
    bool given() const noexcept { return keywords || level; }
};

// How the caller spells what it was asked, for the messages.
struct InterestNames {
    const char* keywords = "--keywords";
    const char* level = "--level";
    const char* no_register = "--no-register";
    const char* schema_hint = "give --schema FILE";  // how to give a source without one a schema
};

struct InterestContext {
    bool registering = true;  // the reader registers (interest is registered with it)
    std::string location;     // the source as the user named it; empty: its path
    InterestNames names;
};

// The word to register, or nullopt without keywords or level.
Result<std::optional<std::uint64_t>> resolve_interest(const InterestRequest& asked, const Schema* schema,
                                                      const EventSource& source, const InterestContext& context);

// Without types asked for (`types` empty), keep only the types `word`
// admits: a reader gets what it asked for whoever else listens.
void narrow_to_interest(std::uint64_t word, const Schema* schema, EventTypeSet& types);

// Whether `source` takes interest: a live ring or a live ring set.
bool takes_interest(const EventSource& source);

}  // namespace evring
