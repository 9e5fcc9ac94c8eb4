// The interest a reader registers (interest_request.hpp).
#include "read/interest_request.hpp"

#include <fmt/format.h>

#include "evring/ring/interest.hpp"
#include "schema/schema_interest.hpp"
#include "source/ring_set_source.hpp"
#include "util/text_escape.hpp"

namespace evring {

bool takes_interest(const EventSource& source) {
    if (source.kind() == SourceKind::Ring) return true;
    const auto* set = dynamic_cast<const RingSetSource*>(&source);
    return set != nullptr && !set->frozen();
}

Result<std::optional<std::uint64_t>> resolve_interest(const InterestRequest& asked, const Schema* schema,
                                                      const EventSource& source, const InterestContext& context) {
    if (!asked.given()) return std::optional<std::uint64_t>();
    const InterestNames& names = context.names;
    const char* option = asked.keywords ? names.keywords : names.level;
    const std::string location = context.location.empty() ? source.identity().path : context.location;
    if (!context.registering)
        return Error(EINVAL, fmt::format("{} registers this reader's interest; it cannot go with {}", option,
                                         names.no_register));
    if (!takes_interest(source))
        return Error(EINVAL, fmt::format("{} registers interest with a live ring's writers; '{}' is a {}", option,
                                         printable(location), describe(source.kind())));
    if (asked.level && *asked.level > kMaxInterestLevel)
        return Error(EINVAL, fmt::format("bad {} '{}': levels go from 0 to {}", names.level, *asked.level,
                                         kMaxInterestLevel));
    if (asked.keywords && schema == nullptr)
        return Error(EINVAL, fmt::format("{} names keywords of the ring's schema, and '{}' carries none; {}",
                                         names.keywords, printable(location), names.schema_hint));
    auto word = requested_interest(schema, asked.keywords, asked.level);
    if (!word)
        return Error(EINVAL, fmt::format("bad {} '{}': {}", names.keywords, shortened(asked.keywords.value_or("")),
                                         word.error().message()));
    return word;
}

void narrow_to_interest(std::uint64_t word, const Schema* schema, EventTypeSet& types) {
    if (schema == nullptr || !types.empty()) return;
    for (const auto& e : schema->events())
        if (interest_admits(word, e.interest())) types.add(e.number);
}

}  // namespace evring
