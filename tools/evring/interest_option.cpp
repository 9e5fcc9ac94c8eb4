// --keywords and --level (interest_option.hpp).
#include "interest_option.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "evring/ring/interest.hpp"
#include "output/values.hpp"
#include "read/interest_request.hpp"

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

Result<InterestRequest> InterestOption::request() const {
    InterestRequest asked;
    asked.keywords = keywords_;
    if (level_) {
        // A number first, so that "bad --level 'x'" names the text; the range is the library's.
        auto parsed = parse_count(level_name_, *level_);
        if (!parsed) return std::move(parsed).error();
        asked.level = static_cast<unsigned>(std::min<std::uint64_t>(*parsed, 0xffffffffu));
    }
    return asked;
}

InterestNames InterestOption::names() const {
    InterestNames names;
    names.level = level_name_;
    return names;
}

Result<std::optional<std::uint64_t>> InterestOption::resolve(const Schema* schema, const EventSource& source,
                                                             const std::string& location, bool no_register) const {
    auto asked = request();
    if (!asked) return std::move(asked).error();
    InterestContext context{.registering = !no_register, .location = location, .names = names()};
    return resolve_interest(*asked, schema, source, context);
}

void InterestOption::narrow(std::uint64_t word, const Schema* schema, EventTypeSet& types) {
    narrow_to_interest(word, schema, types);
}

}  // namespace evring::cli
