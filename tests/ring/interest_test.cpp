// Interest (interest.hpp, docs/interest.md): the word, the schema's keywords
// and levels, the publisher's check, and readers keeping the ring's word the
// union of what the live ones want.
#include <sys/wait.h>
#include <unistd.h>

#include <random>

#include <gtest/gtest.h>

#include "evring/ring/interest.hpp"
#include "evring/ring/ring_extension.hpp"
#include "evring/schema/schema.hpp"
#include "codegen/schema_codegen.hpp"
#include "schema/schema_interest.hpp"
#include "evring/ring/shared_word.hpp"
#include "support/registry_ring.hpp"

namespace evring {
namespace {

using test::attach;
using test::quiet;
using test::RegistryRing;

constexpr std::uint64_t kTrades = 1, kQuotes = 2, kRisk = 4;

TEST(InterestWord, ZeroAndUntaggedWordsWantEverything) {
    EXPECT_TRUE(interest_admits(kInterestEverything, kTrades, 15));
    EXPECT_TRUE(interest_admits(0x00ff'ffff'ffff'ffffull, kTrades, 15)) << "keyword bits without the tag";
    EXPECT_TRUE(interest_admits(~std::uint64_t{0}, kRisk, 15)) << "all ones: a different tag";
}

TEST(InterestWord, NarrowingWordWantsItsKeywordsUpToItsLevel) {
    const std::uint64_t word = interest_word(kTrades | kQuotes, 3);
    EXPECT_TRUE(interest_narrows(word));
    EXPECT_TRUE(interest_admits(word, kTrades, 3));
    EXPECT_TRUE(interest_admits(word, kQuotes | kRisk, 0)) << "any shared keyword";
    EXPECT_FALSE(interest_admits(word, kTrades, 4)) << "above the level";
    EXPECT_FALSE(interest_admits(word, kRisk, 0)) << "no shared keyword";
    EXPECT_TRUE(interest_admits(word, 0, 0)) << "a type without keywords at level 0: always";
    EXPECT_FALSE(interest_admits(word, 0, 5)) << "without keywords, the level still counts";
    EXPECT_TRUE(interest_admits(word, EventInterest{kRisk, 9, true})) << "always recorded";
}

TEST(InterestWord, UnionWantsWhatEitherWants) {
    const std::uint64_t a = interest_word(kTrades, 2), b = interest_word(kRisk, 7);
    const std::uint64_t both = interest_union(a, b);
    EXPECT_TRUE(interest_admits(both, kTrades, 2));
    EXPECT_TRUE(interest_admits(both, kRisk, 7));
    EXPECT_FALSE(interest_admits(both, kQuotes, 0));
    EXPECT_EQ(interest_union(a, kInterestEverything), kInterestEverything);
    EXPECT_EQ(interest_union(kInterestEverything, b), kInterestEverything);
    EXPECT_EQ(interest_word(kTrades, 99), interest_word(kTrades, 15)) << "levels clamp";
}

TEST(InterestWord, AnyWordOnlyChoosesPublishOrSkip) {
    // Hostile words: every value is a valid word; only tagged ones narrow.
    std::mt19937_64 random(22);
    int narrowing = 0;
    for (int i = 0; i < 100000; ++i) {
        const std::uint64_t word = random();
        const bool wanted = interest_admits(word, random() & kInterestKeywordMask, random() & 15);
        if (!interest_narrows(word)) {
            EXPECT_TRUE(wanted);
        }
        narrowing += interest_narrows(word);
    }
    EXPECT_LT(narrowing, 100) << "random words almost never carry the tag";
}

constexpr const char* kSchema = R"(
content_type = 900
content_name = "market"
keywords = ["trades", "quotes", "risk"]
[[event]]
number = 2
name = "TRADE"
keywords = ["trades"]
level = 2
fields = [{ name = "price", type = "u64" }]
[[event]]
number = 3
name = "QUOTE"
keywords = ["quotes", "risk"]
level = 5
fields = [{ name = "price", type = "u64" }]
[[event]]
number = 4
name = "CHECKPOINT"
keywords = ["risk"]
always_recorded = true
fields = [{ name = "block", type = "u64" }]
[[event]]
number = 5
name = "PLAIN"
fields = [{ name = "x", type = "u64" }]
)";

TEST(SchemaInterest, KeywordsLevelsAndAlwaysRecordedParse) {
    auto schema = Schema::parse(kSchema);
    ASSERT_TRUE(schema) << schema.error().message();
    ASSERT_EQ(schema->keywords().size(), 3u);
    EXPECT_EQ(schema->keyword("risk"), 2u);
    EXPECT_FALSE(schema->keyword("nope"));
    const SchemaEvent* quote = schema->event("QUOTE");
    EXPECT_EQ(quote->keywords, kQuotes | kRisk);
    EXPECT_EQ(quote->level, 5);
    EXPECT_FALSE(quote->always_recorded);
    EXPECT_TRUE(schema->event("CHECKPOINT")->always_recorded);
    EXPECT_EQ(schema->event("PLAIN")->keywords, 0u);
    EXPECT_NE(schema->canonical_form().find("event_interest 3 keywords quotes,risk level 5\n"), std::string::npos)
        << schema->canonical_form();
    EXPECT_NE(schema->canonical_form().find("event_always_recorded 4\n"), std::string::npos);
    EXPECT_NE(schema->canonical_form().find("keyword 0 trades\n"), std::string::npos);
}

TEST(SchemaInterest, SchemasWithoutInterestKeepTheirCanonicalForm) {
    const std::string without = R"(
content_type = 900
content_name = "market"
[[event]]
number = 2
name = "TRADE"
fields = [{ name = "price", type = "u64" }]
)";
    auto plain = Schema::parse(without);
    ASSERT_TRUE(plain);
    EXPECT_EQ(plain->canonical_form().find("keyword"), std::string::npos);
    EXPECT_EQ(plain->canonical_form().find("event_interest"), std::string::npos);
    EXPECT_EQ(plain->canonical_form().find("event_always"), std::string::npos);
    // level 0 spelled out is the default: same hash.
    std::string explicit_level = without;
    explicit_level.replace(explicit_level.find("fields"), 0, "level = 0\n");
    auto same = Schema::parse(explicit_level);
    ASSERT_TRUE(same) << same.error().message();
    EXPECT_EQ(same->hash(), plain->hash());
    // A keyword changes it: writers and readers must agree on its bit.
    auto keyed = Schema::parse(std::string(without).insert(without.find("[[event]]"), "keywords = [\"trades\"]\n"));
    ASSERT_TRUE(keyed) << keyed.error().message();
    EXPECT_NE(keyed->hash(), plain->hash());
}

TEST(SchemaInterest, BadInterestDeclarationsAreRefusedByLine) {
    struct Case {
        std::string text;
        std::string message;
    };
    const std::string head = "content_type = 900\ncontent_name = \"m\"\n";
    const std::string event = "[[event]]\nnumber = 2\nname = \"E\"\n";
    std::string many = "keywords = [";
    for (int i = 0; i < 49; ++i) many += (i ? ", \"k" : "\"k") + std::to_string(i) + "\"";
    many += "]\n";
    const Case cases[] = {
        {head + event + "keywords = [\"nope\"]\n", "keyword 'nope' is not in the schema's keywords list"},
        {head + "keywords = [\"a\", \"a\"]\n", "duplicate keyword 'a'"},
        {head + "keywords = [\"a\"]\n" + event + "keywords = [\"a\", \"a\"]\n", "listed twice"},
        {head + event + "level = 16\n", "level"},
        {head + event + "level = -1\n", "level"},
        {head + event + "always_recorded = 1\n", "always_recorded must be true or false"},
        {head + "keywords = [\"not a name\"]\n", "keyword"},
        {head + many, "at most 48 keywords"},
    };
    for (const Case& c : cases) {
        auto schema = Schema::parse(c.text, "bad.toml");
        ASSERT_FALSE(schema) << c.text;
        EXPECT_NE(schema.error().message().find(c.message), std::string::npos) << schema.error().message();
        EXPECT_EQ(schema.error().message().rfind("bad.toml:", 0), 0u) << schema.error().message();
    }
}

TEST(SchemaInterest, ReaderKeywordListsResolveByName) {
    auto schema = Schema::parse(kSchema).value();
    EXPECT_EQ(interest_from_keywords(schema, "trades,risk", 3).value(), interest_word(kTrades | kRisk, 3));
    EXPECT_EQ(interest_from_keywords(schema, "", 4).value(), interest_word(kInterestKeywordMask, 4));
    auto unknown = interest_from_keywords(schema, "trades,trade");
    ASSERT_FALSE(unknown);
    EXPECT_NE(unknown.error().message().find("unknown keyword 'trade'"), std::string::npos);
    EXPECT_NE(unknown.error().message().find("trades, quotes, risk"), std::string::npos);
    EXPECT_FALSE(interest_from_keywords(schema, "trades,,risk"));
    EXPECT_FALSE(interest_from_keywords(schema, "trades", 16));
    EXPECT_EQ(describe_interest(interest_word(kTrades | kRisk, 3), &schema), "keywords trades,risk, levels 0..3");
    EXPECT_EQ(describe_interest(interest_word(std::uint64_t{1} << 40, 0), &schema), "keywords bit40, levels 0..0");
    EXPECT_EQ(describe_interest(kInterestEverything, &schema), "everything");
}

TEST(SchemaInterest, GeneratedKeywordNamesNeverCollide) {
    const std::string head = "content_type = 900\ncontent_name = \"m\"\n";
    auto escaped = Schema::parse(head + "keywords = [\"class\", \"EOF\"]\n");
    ASSERT_TRUE(escaped) << escaped.error().message();
    auto header = generate_cpp_header(*escaped);
    ASSERT_TRUE(header) << header.error().message();
    EXPECT_NE(header->find("inline constexpr std::uint64_t class_ = std::uint64_t{1} << 0;"), std::string::npos);
    EXPECT_NE(header->find("inline constexpr std::uint64_t EOF_ = std::uint64_t{1} << 1;"), std::string::npos);
    auto colliding = Schema::parse(head + "keywords = [\"int\", \"int_\"]\n");
    ASSERT_TRUE(colliding) << colliding.error().message();
    auto refused = generate_cpp_header(*colliding);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message().find("keywords 'int' and 'int_' are both keyword::int_"), std::string::npos)
        << refused.error().message();
}

std::uint64_t ring_word(const RegistryRing& ring) {
    return shared::load_relaxed(extension_in(&ring.writer->header())->interest);
}

TEST(PublisherInterest, WantsFollowsTheRingsWord) {
    RegistryRing ring;
    Publisher& publisher = *ring.publisher;
    const EventInterest trade{kTrades, 2, false};
    EXPECT_EQ(publisher.wants(trade), &publisher) << "a fresh ring wants everything";
    shared::store_relaxed(extension_in(&ring.writer->header())->interest, interest_word(kQuotes, 15));
    EXPECT_EQ(publisher.interest(), interest_word(kQuotes, 15));
    EXPECT_EQ(publisher.wants(trade), nullptr);
    EXPECT_EQ(publisher.wants(EventInterest{kTrades, 2, true}), &publisher) << "always recorded";
    shared::store_relaxed(extension_in(&ring.writer->header())->interest, 0x1234'5678'9abc'def0ull);
    EXPECT_EQ(publisher.wants(trade), &publisher) << "a lying, untagged word publishes";
}

TEST(PublisherInterest, RingsWithoutTheDoorbellNeverNarrow) {
    RegistryRing ring;
    RingExtension* extension = extension_in(&ring.writer->header());
    extension->features &= ~kRingFeatureDoorbell;
    extension->interest = interest_word(kQuotes, 0);
    Publisher publisher(*ring.writer, WriterSharing::Shared);
    EXPECT_EQ(publisher.interest(), kInterestEverything);
    EXPECT_NE(publisher.wants(EventInterest{kTrades, 2, false}), nullptr);
}

RegistrationOptions wanting(std::uint64_t interest) {
    RegistrationOptions options = quiet();
    options.interest = interest;
    return options;
}

TEST(RegistryInterest, TheRingsWordIsTheUnionOfLiveReaders) {
    RegistryRing ring;
    ring.publish(5);
    const std::uint64_t trades = interest_word(kTrades, 2), risk = interest_word(kRisk, 7);
    ReaderRegistration a = attach(ring, "a", wanting(trades));
    ASSERT_TRUE(a.registered()) << a.warning();
    EXPECT_TRUE(a.interest_problem().empty()) << a.interest_problem();
    EXPECT_EQ(ring_word(ring), trades);
    EXPECT_EQ(a.ring_interest(), trades);
    EXPECT_EQ(a.interest_from(), 6u) << "after the five events already reserved";
    {
        ReaderRegistration b = attach(ring, "b", wanting(risk));
        EXPECT_EQ(ring_word(ring), interest_union(trades, risk));
        {
            ReaderRegistration everything = attach(ring, "plain");  // registers no interest
            EXPECT_EQ(ring_word(ring), kInterestEverything);
        }
        EXPECT_EQ(ring_word(ring), interest_union(trades, risk)) << "the plain reader left";
    }
    EXPECT_EQ(ring_word(ring), trades);
    a.unregister();
    EXPECT_EQ(ring_word(ring), kInterestEverything) << "no registered reader: today's default";
}

TEST(RegistryInterest, ADeadReadersInterestGoesAtTheNextRecomputation) {
    RegistryRing ring;
    const std::uint64_t trades = interest_word(kTrades, 2), quotes = interest_word(kQuotes, 2);
    const pid_t child = ::fork();
    if (child == 0) {
        ReaderRegistration dying = attach(ring, "dying", wanting(quotes));
        ::_exit(dying.registered() ? 0 : 1);  // no destructor: it dies registered
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(ring_word(ring), quotes) << "dead, not yet noticed: still counted (publishes more)";
    ReaderRegistration a = attach(ring, "a", wanting(trades));
    EXPECT_EQ(ring_word(ring), trades) << "the dead reader's lock is gone";
    a.unregister();
    // A lister reclaiming a dead slot recomputes too.
    const pid_t second = ::fork();
    if (second == 0) {
        ReaderRegistration dying = attach(ring, "dying", wanting(quotes));
        ::_exit(dying.registered() ? 0 : 1);
    }
    ASSERT_EQ(::waitpid(second, &status, 0), second);
    EXPECT_EQ(ring_word(ring), quotes);
    auto listing = list_readers(*ring.reader);
    ASSERT_TRUE(listing) << listing.error().message();
    ASSERT_EQ(listing->readers.size(), 2u) << "both dead readers (a took a free slot)";
    EXPECT_TRUE(listing->readers[0].reclaimed && listing->readers[1].reclaimed);
    EXPECT_EQ(listing->readers[1].interest, quotes);
    EXPECT_EQ(listing->interest, kInterestEverything);
    EXPECT_EQ(ring_word(ring), kInterestEverything);
}

TEST(RegistryInterest, ReadersOfARingTheyCannotWriteAreStillRegistered) {
    if (::geteuid() == 0) GTEST_SKIP() << "root writes any file";
    RegistryRing ring;
    const std::uint64_t quotes = interest_word(kQuotes, 2);
    ReaderRegistration q = attach(ring, "q", wanting(quotes));
    ASSERT_EQ(ring_word(ring), quotes);
    ::chmod(ring.path.c_str(), 0444);
    ReaderRegistration plain = attach(ring, "plain", wanting(quotes));  // wants nothing new: no problem
    ReaderRegistration a = attach(ring, "a", wanting(interest_word(kTrades, 2)));
    ::chmod(ring.path.c_str(), 0644);
    ASSERT_TRUE(a.registered()) << a.warning();
    EXPECT_TRUE(plain.interest_problem().empty()) << plain.interest_problem();
    EXPECT_NE(a.interest_problem().find("not applied"), std::string::npos) << a.interest_problem();
    EXPECT_EQ(ring_word(ring), quotes) << "unchanged: nobody could write it";
}

}  // namespace
}  // namespace evring
