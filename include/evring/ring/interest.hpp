// evring/ring/interest.hpp — which events anybody wants: the interest word.
//
// How a writer skips what nobody wants:
//
//     // generated header (evring schema compile): interest_of(EventType) is constexpr
//     if (auto* p = publisher.wants(demo::EventType::QUOTE)) {
//         auto text = expensive_formatting();            // only when some reader wants QUOTE
//         demo::publish_quote(*p, quote_from(text));
//     }
//     demo::publish_quote(publisher, quote);            // the helpers check by themselves
//
// An event type carries keywords (bits, declared by its schema's `keywords`
// list) and a level (0, most important, to 15); a schema may mark a type
// `always_recorded`, which no interest can skip. A reader registers the
// keywords and the highest level it wants (reader_registration.hpp); each
// ring keeps the union of what its live registered readers want in one
// 64-bit word of its extension block (ring_extension.hpp), and a writer
// loads it, relaxed, before building an event (docs/interest.md has the
// protocol and the ordering argument).
//
// The word:
//
//   bits 0..47    keywords wanted (bit i: the schema's i-th keyword)
//   bits 48..51   the highest level wanted
//   bits 52..63   kInterestTag when the word narrows; anything else
//                 (zero included: a ring nobody registered interest in, a
//                 ring of another implementation) means "everything"
//
// An event with keywords K and level L is wanted when the word does not
// narrow, or when L <= the word's level and either K is empty or K shares a
// bit with the word's keywords. So a type without keywords at level 0 is
// always wanted (what schemas without interest declare), and the union of
// two interests (their keywords or-ed, the higher level) wants at least what
// each wants.
//
// Contract: every value of the word is a valid word. A damaged or hostile
// word can only choose between "publish" and "skip": it is never an index,
// a count or a shift, and a value without the tag publishes everything.
//
// Thread safety: constexpr functions on values.
#pragma once

#include <cstdint>

namespace evring {

inline constexpr unsigned kMaxKeywords = 48;
inline constexpr unsigned kMaxInterestLevel = 15;
inline constexpr std::uint64_t kInterestKeywordMask = (std::uint64_t{1} << kMaxKeywords) - 1;
inline constexpr unsigned kInterestLevelShift = 48;
inline constexpr std::uint64_t kInterestTagMask = std::uint64_t{0xfff} << 52;
inline constexpr std::uint64_t kInterestTag = std::uint64_t{0xe71} << 52;
// The word of a ring nobody narrowed, and a reader's "I want everything".
inline constexpr std::uint64_t kInterestEverything = 0;

// What an event type asks of the interest word (the generated headers'
// interest_of(EventType) returns one; the schema's SchemaEvent carries the same).
struct EventInterest {
    std::uint64_t keywords = 0;  // bits below kMaxKeywords
    std::uint8_t level = 0;      // 0..kMaxInterestLevel
    bool always = false;         // always recorded: no interest skips it
};

// True when `word` restricts what is wanted.
constexpr bool interest_narrows(std::uint64_t word) noexcept {
    return (word & kInterestTagMask) == kInterestTag;
}

constexpr unsigned interest_level(std::uint64_t word) noexcept {
    return static_cast<unsigned>(word >> kInterestLevelShift) & kMaxInterestLevel;
}

// The word of a reader that wants `keywords` (bits beyond kMaxKeywords are
// dropped) up to `level` (clamped to kMaxInterestLevel).
constexpr std::uint64_t interest_word(std::uint64_t keywords, unsigned level) noexcept {
    if (level > kMaxInterestLevel) level = kMaxInterestLevel;
    return kInterestTag | std::uint64_t{level} << kInterestLevelShift | (keywords & kInterestKeywordMask);
}

// Whether an event with `keywords` and `level` is wanted by `word` (see the top).
constexpr bool interest_admits(std::uint64_t word, std::uint64_t keywords, unsigned level) noexcept {
    if (!interest_narrows(word)) return true;
    return (keywords == 0 || (word & keywords) != 0) && level <= interest_level(word);
}

constexpr bool interest_admits(std::uint64_t word, const EventInterest& event) noexcept {
    return event.always || interest_admits(word, event.keywords, event.level);
}

// What two readers want together: everything when either wants everything.
constexpr std::uint64_t interest_union(std::uint64_t a, std::uint64_t b) noexcept {
    if (!interest_narrows(a) || !interest_narrows(b)) return kInterestEverything;
    const unsigned level = interest_level(a) > interest_level(b) ? interest_level(a) : interest_level(b);
    return interest_word((a | b) & kInterestKeywordMask, level);
}

// For generated publish helpers and any publisher-like type: whether
// `publisher` (which may have no interest() at all: then yes) wants an event
// with `keywords` and `level`. One relaxed load when it has one.
template <class P>
constexpr bool publisher_wants(const P& publisher, std::uint64_t keywords, unsigned level) noexcept {
    if constexpr (requires { publisher.interest(); })
        return interest_admits(publisher.interest(), keywords, level);
    else
        return true;
}

}  // namespace evring
