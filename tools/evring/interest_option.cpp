// --keywords and --level (interest_option.hpp).
#include "interest_option.hpp"

#include <fmt/format.h>

#include "evring/ring/interest.hpp"
#include "schema/schema_interest.hpp"
#include "source/ring_set_source.hpp"
#include "output/values.hpp"
#include "util/text_escape.hpp"

namespace evring::cli {

void InterestOption::add(CLI::App& command, const char* level_name) {
    level_name_ = level_name;
    command
        .add_option("--keywords", keywords_,
                    "Register interest in event types with these keywords of the schema (writers skip what no reader "
                    "wants; docs/interest.md); take only those types")
        ->type_name("K1,K2");
    command
        .add_option(level_name, level_,
                    "With or without --keywords: want event types up to this level (0..15, default 15)")
        ->type_name("N");
}

namespace {

// A live ring, or a live ring set (its reader registers in every member).
bool takes_interest(const EventSource& source) {
    if (source.kind() == SourceKind::Ring) return true;
    const auto* set = dynamic_cast<const RingSetSource*>(&source);
    return set != nullptr && !set->frozen();
}

}  // namespace

Result<std::optional<std::uint64_t>> InterestOption::resolve(const Schema* schema, const EventSource& source,
                                                             const std::string& location, bool no_register) const {
    if (!given()) return std::optional<std::uint64_t>();
    const char* option = keywords_ ? "--keywords" : level_name_;
    if (no_register)
        return Error(EINVAL, fmt::format("{} registers this reader's interest; it cannot go with --no-register", option));
    if (!takes_interest(source))
        return Error(EINVAL, fmt::format("{} registers interest with a live ring's writers; '{}' is a {}", option,
                                         location, describe(source.kind())));
    std::optional<unsigned> level;
    if (level_) {
        auto parsed = parse_count(level_name_, *level_);
        if (!parsed) return std::move(parsed).error();
        if (*parsed > kMaxInterestLevel)
            return Error(EINVAL, fmt::format("bad {} '{}': levels go from 0 to {}", level_name_, *level_,
                                             kMaxInterestLevel));
        level = static_cast<unsigned>(*parsed);
    }
    if (keywords_ && schema == nullptr)
        return Error(EINVAL, fmt::format("--keywords names keywords of the ring's schema, and '{}' carries none; "
                                         "give --schema FILE",
                                         location));
    auto word = requested_interest(schema, keywords_, level);
    if (!word) return Error(EINVAL, fmt::format("bad --keywords '{}': {}", shortened(keywords_.value_or("")), word.error().message()));
    return word;
}

void InterestOption::narrow(std::uint64_t word, const Schema* schema, EventTypeSet& types) {
    if (schema == nullptr || !types.empty()) return;
    for (const auto& e : schema->events())
        if (interest_admits(word, e.interest())) types.add(e.number);
}

}  // namespace evring::cli
