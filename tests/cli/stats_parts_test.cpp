// evring stats --by's parts (tools/evring/stats/stats_by.hpp): numbers as
// words in their own order, groups by type, field and flow tag, sums of
// signed and floating-point fields, exact nearest-rank quantiles, and the
// errors for keys and fields it cannot figure.
#include "stats/stats_by.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

namespace evring::cli {
namespace {

using detail::FieldKind;

constexpr const char* kSchema = R"(content_type = 1002
content_name = "t"
flow_tags = ["venue"]

[[event]]
number = 1
name = "TICK"
payload = "tick"

[[event]]
number = 2
name = "NOTE"
payload = "note"

[struct.tick]
fields = [
  { name = "price", type = "f64" },
  { name = "delta", type = "i32" },
  { name = "size",  type = "u32" },
  { name = "name",  type = "char[8]" },
  { name = "big",   type = "u128" },
]

[struct.note]
fields = [{ name = "size", type = "i16" }]
)";

struct Tick {
    double price;
    std::int32_t delta;
    std::uint32_t size;
    char name[8];
    std::uint64_t big[2];
};
static_assert(sizeof(Tick) == 40);

class StatsBy : public ::testing::Test {
protected:
    void SetUp() override {
        auto parsed = Schema::parse(kSchema, "t.toml");
        ASSERT_TRUE(parsed.ok()) << parsed.error().message();
        schema_.emplace(std::move(*parsed));
    }
    void add(GroupedStats& g, double price, std::int32_t delta, std::uint32_t size, const char* name,
             std::uint64_t venue = 0) {
        Tick t{price, delta, size, {}, {0, 0}};
        std::memcpy(t.name, name, std::min(std::strlen(name), sizeof t.name));  // a fixed field, not a C string
        bytes_.emplace_back(sizeof t);
        std::memcpy(bytes_.back().data(), &t, sizeof t);
        SourceEvent e;
        e.descriptor.seqno = ++seqno_;
        e.descriptor.event_type = 1;
        e.descriptor.payload_size = sizeof t;
        e.descriptor.record_epoch_nanos = 1000 * seqno_;
        e.descriptor.content_ext[0] = venue;
        e.payload_state = PayloadState::Ok;
        e.payload = bytes_.back();
        g.add(e);
    }
    Result<GroupedStats> make(std::string by, std::vector<std::string> fields = {}) {
        return GroupedStats::make(&*schema_, {std::move(by), std::move(fields)}, nullptr);
    }
    std::optional<Schema> schema_;
    std::vector<std::vector<std::byte>> bytes_;
    std::uint64_t seqno_ = 0;
};

TEST(OrderedWord, KeepsTheOrderOfSignedAndFloatingPointNumbersAndReadsBack) {
    auto word = [](FieldKind kind, auto v) {
        std::byte b[8];
        std::memcpy(b, &v, sizeof v);
        return ordered_word(kind, b, sizeof v);
    };
    const std::int64_t ints[] = {INT64_MIN, -5, -1, 0, 1, 7, INT64_MAX};
    for (std::size_t i = 1; i < std::size(ints); ++i)
        EXPECT_LT(word(FieldKind::Signed, ints[i - 1]), word(FieldKind::Signed, ints[i])) << ints[i];
    EXPECT_EQ(word_text(FieldKind::Signed, word(FieldKind::Signed, std::int64_t{-5})), "-5");
    EXPECT_EQ(word_text(FieldKind::Signed, word(FieldKind::Signed, std::int16_t{-300})), "-300");
    const double reals[] = {-1e300, -2.5, -0.0, 0.5, 3.25, 1e300};
    for (std::size_t i = 1; i < std::size(reals); ++i)
        EXPECT_LT(word(FieldKind::Float, reals[i - 1]), word(FieldKind::Float, reals[i])) << reals[i];
    EXPECT_EQ(word_text(FieldKind::Float, word(FieldKind::Float, -2.5)), "-2.5");
    EXPECT_EQ(word_text(FieldKind::Float, word(FieldKind::Float, 3.25f)), "3.25");
    EXPECT_EQ(word_text(FieldKind::Unsigned, word(FieldKind::Unsigned, std::uint32_t{4000000000u})), "4000000000");
}

TEST_F(StatsBy, GroupsByATextFieldWithExactNearestRankQuantilesAndSums) {
    auto g = make("name", {"price", "delta"});
    ASSERT_TRUE(g.ok()) << g.error().message();
    EXPECT_TRUE(g->needs_payloads());
    // 100 ticks of "A" with delta -1..-100 and price 0.5 each; 1 of "B".
    for (int i = 1; i <= 100; ++i) add(*g, 0.5, -i, 1, "A");
    add(*g, -2.25, 7, 1, "B");
    g->finish();
    // Nearest rank over -100..-1: p50 is the 50th smallest (-51), p99 the 99th (-2).
    EXPECT_EQ(g->csv(),
              "name,events,bytes,first_nanos,last_nanos,price.count,price.sum,price.p50,price.p99,price.max,"
              "delta.count,delta.sum,delta.p50,delta.p99,delta.max\n"
              "A,100,4000,1000,100000,100,50,0.5,0.5,0.5,100,-5050,-51,-2,-1\n"
              "B,1,40,101000,101000,1,-2.25,-2.25,-2.25,-2.25,1,7,7,7,7\n");
    const std::string json = g->json();
    EXPECT_NE(json.find("\"over_groups\":{\"events\":{\"groups\":2,\"p50\":1,\"p99\":100,\"max\":100}"),
              std::string::npos)
        << json;
    EXPECT_NE(json.find("\"delta.sum\":{\"groups\":2,\"p50\":-5050,\"p99\":7,\"max\":7}"), std::string::npos) << json;
}

TEST_F(StatsBy, GroupsByAFlowTagAndLeavesEventsWithoutOneInAGroupOfTheirOwn) {
    auto g = make("venue", {"delta"});
    ASSERT_TRUE(g.ok()) << g.error().message();
    add(*g, 1, 10, 0, "x", 2);
    add(*g, 1, 30, 0, "x", 2);
    add(*g, 1, 5, 0, "x", 0);
    g->finish();
    EXPECT_EQ(g->csv(),
              "venue,events,bytes,first_nanos,last_nanos,delta.count,delta.sum,delta.p50,delta.p99,delta.max\n"
              "2,2,80,1000,2000,2,40,10,30,30\n"
              ",1,40,3000,3000,1,5,5,5,5\n");
    // One keyed group: no figures over groups.
    EXPECT_EQ(g->text(),
              "venue  events  bytes  delta.sum  delta.p50  delta.p99  delta.max\n"
              "2           2     80         40         10         30         30\n"
              "-           1     40          5          5          5          5\n");
}

TEST_F(StatsBy, RefusesWhatItCannotFigureNamingTheOptionAndTheReason) {
    auto message = [this](std::string by, std::vector<std::string> fields) {
        auto g = make(std::move(by), std::move(fields));
        return g.ok() ? std::string("accepted") : g.error().message();
    };
    EXPECT_EQ(message("nope", {}), "bad --by 'nope': no event of schema t has a field 'nope' (--by takes 'type', a "
                                   "span with a label, a flow tag or a payload field)");
    EXPECT_EQ(message("type", {"name"}), "bad --field 'name': 'name' is bytes in TICK; --field takes numbers");
    EXPECT_EQ(message("type", {"big"}),
              "bad --field 'big': 'big' is a 128-bit number in TICK; --field takes numbers of at most 64 bits");
    EXPECT_EQ(message("type", {"size"}),
              "bad --field 'size': it is a signed number in NOTE and an unsigned number in another event type");
    EXPECT_EQ(message("", {"price"}), "--field is figured per group: give --by too (--by type: a group per event type)");
    EXPECT_NE(message("type", {"price +"}).find("bad --field 'price +'"), std::string::npos);
}

}  // namespace
}  // namespace evring::cli
