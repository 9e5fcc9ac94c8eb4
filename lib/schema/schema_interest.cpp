// Interest words in a schema's words (schema_interest.hpp).
#include "schema/schema_interest.hpp"

#include <cerrno>

#include <fmt/format.h>

#include "util/text_escape.hpp"

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
            return Error(EINVAL, fmt::format("unknown keyword '{}' (schema '{}' has: {})", shortened(name),
                                             shortened(schema.content_name()), keyword_list(schema)));
        bits |= std::uint64_t{1} << *bit;
        if (comma == std::string_view::npos) break;
        keywords.remove_prefix(comma + 1);
    }
    return interest_word(bits, level);
}

Result<std::optional<std::uint64_t>> requested_interest(const Schema* schema,
                                                        std::optional<std::string_view> keywords,
                                                        std::optional<unsigned> level) {
    using Word = std::optional<std::uint64_t>;
    if (!keywords && !level) return Word();
    const unsigned up_to = level.value_or(kMaxInterestLevel);
    if (up_to > kMaxInterestLevel)
        return Error(EINVAL, fmt::format("level {} is above {}, the highest interest level", up_to,
                                         kMaxInterestLevel));
    if (!keywords) return Word(interest_word(kInterestKeywordMask, up_to));
    if (schema == nullptr) return Error(EINVAL, "keywords name keywords of a schema, and the source has none");
    if (keywords->empty()) return Error(EINVAL, "name at least one keyword (K1,K2)");
    auto word = interest_from_keywords(*schema, *keywords, up_to);
    if (!word) return std::move(word).error();
    return Word(*word);
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
