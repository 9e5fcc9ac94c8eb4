// Interest words in a schema's words (schema_interest.hpp).
#include "schema/schema_interest.hpp"

#include <cerrno>

#include <fmt/format.h>

namespace evring {

namespace {

std::string keyword_list(const Schema& schema) {
    std::string out;
    for (const auto& k : schema.keywords()) out += (out.empty() ? "" : ", ") + k;
    return out.empty() ? std::string("none") : out;
}

}  // namespace

Result<std::uint64_t> interest_from_keywords(const Schema& schema, std::string_view keywords, unsigned level) {
    if (level > kMaxInterestLevel)
        return Error(EINVAL, fmt::format("level {} is above {}, the highest interest level", level,
                                         kMaxInterestLevel));
    if (keywords.empty()) return interest_word(kInterestKeywordMask, level);
    std::uint64_t bits = 0;
    while (true) {
        const std::size_t comma = keywords.find(',');
        const std::string_view name = keywords.substr(0, comma);
        if (name.empty())
            return Error(EINVAL, "an empty keyword name in the keyword list (write K1,K2 without spaces)");
        const auto bit = schema.keyword(name);
        if (!bit)
            return Error(EINVAL, fmt::format("unknown keyword '{}' (schema '{}' has: {})", name,
                                             schema.content_name(), keyword_list(schema)));
        bits |= std::uint64_t{1} << *bit;
        if (comma == std::string_view::npos) break;
        keywords.remove_prefix(comma + 1);
    }
    return interest_word(bits, level);
}

std::string describe_interest(std::uint64_t word, const Schema* schema) {
    if (!interest_narrows(word)) return "everything";
    std::string names;
    for (unsigned i = 0; i < kMaxKeywords; ++i) {
        if (((word >> i) & 1) == 0) continue;
        if (!names.empty()) names += ',';
        if (schema != nullptr && i < schema->keywords().size())
            names += schema->keywords()[i];
        else
            names += fmt::format("bit{}", i);
    }
    if ((word & kInterestKeywordMask) == kInterestKeywordMask) names = "all";
    return fmt::format("keywords {}, levels 0..{}", names.empty() ? "none" : names, interest_level(word));
}

}  // namespace evring
