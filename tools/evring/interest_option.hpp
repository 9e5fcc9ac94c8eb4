// tools/evring/interest_option.hpp — --keywords and --level: the interest a
// reading command registers (docs/interest.md), shared by watch, record,
// relay and mirror.
//
//     InterestOption interest;
//     interest.add(*command, "--level");          // record: "--interest-level" (--level is zstd's)
//     ...
//     auto word = interest.resolve(schema, source, ring, no_register);   // after the schema is found
//     if (!word) return usage_error(word.error());
//     if (*word) { interest.narrow(**word, schema, filter.types); seen.set_interest(**word); }
//
// Contract: without either option the command wants everything and registers
// as before (resolve gives nullopt). With them, the source must be a live
// ring or a live ring set (a set's reader registers in every member), the
// command must register, and keywords must be the schema's; every refusal is
// one line naming the option and the value.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "evring/error.hpp"
#include "evring/schema/schema.hpp"
#include "evring/source/event_source.hpp"
#include "evring/source/flow_filter.hpp"
#include "read/interest_request.hpp"

namespace evring::cli {

class InterestOption {
public:
    // Adds --keywords and the level option (named `level_name`) to `command`.
    void add(CLI::App& command, const char* level_name = "--level");
    bool given() const noexcept { return keywords_ || level_; }
    // What the options ask for, the level's text parsed (an Error is a usage
    // error), and how they are spelled, for the read pipeline (reading.hpp).
    Result<InterestRequest> request() const;
    InterestNames names() const;
    // The word to register, or nullopt without the options; an Error is a usage error.
    Result<std::optional<std::uint64_t>> resolve(const Schema* schema, const EventSource& source,
                                                 const std::string& location, bool no_register) const;
    // Without --type (`types` empty), keep only the types `word` admits: a
    // reader gets what it asked for whoever else listens.
    static void narrow(std::uint64_t word, const Schema* schema, EventTypeSet& types);

private:
    std::optional<std::string> keywords_;
    std::optional<std::string> level_;
    const char* level_name_ = "--level";
};

}  // namespace evring::cli
