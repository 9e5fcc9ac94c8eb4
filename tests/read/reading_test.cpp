// The read pipeline (lib/read/reading.hpp, selection.hpp, interest_request.hpp)
// on a live ring in a temporary directory, without the CLI: a selection
// checked before the source opens, the whole pipeline from open to run, its
// refusals (no schema for --where or keywords, interest without registering,
// a source that is not there) and the registration a run makes.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "read/reading.hpp"
#include "support/seqno_ring.hpp"

namespace evring {
namespace {

struct Collect final : FollowSink {
    bool event(const SourceEvent& e) override {
        seen.push_back(e.descriptor);
        return true;
    }
    std::vector<EventDescriptor> seen;
};

ReadRequest request_for(const test::SeqnoRing& ring, const Selection& selection) {
    ReadRequest request;
    request.location = ring.path;
    request.selection = &selection;
    return request;
}

// open, find_schema and select; the error of the first that fails.
Result<std::unique_ptr<Reading>> opened(ReadRequest request, const Selection& selection) {
    FollowOptions follow;
    if (auto s = selection.check(follow); !s) return std::move(s).error();
    auto reading = Reading::open(std::move(request), follow);
    if (!reading) return std::move(reading).error();
    if (auto s = (*reading)->find_schema(); !s) return std::move(s).error();
    if (auto s = (*reading)->select(); !s) return std::move(s).error();
    return reading;
}

TEST(Selection, CheckRefusesBadValuesBeforeAnySourceOpens) {
    Selection bad_count("oldest");
    bad_count.count = "-5";
    FollowOptions follow;
    Status s = bad_count.check(follow);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().errno_value(), EINVAL);
    EXPECT_EQ(s.error().message(), "bad --count '-5': a count cannot be negative");

    Selection reset("oldest");
    reset.reset = true;
    s = reset.check(follow);
    ASSERT_FALSE(s);
    EXPECT_NE(s.error().message().find("--reset goes with --name"), std::string::npos);

    Selection numbers("oldest");
    numbers.types = {"3"};
    numbers.flows = {"1=42"};
    FollowOptions kept;
    ASSERT_TRUE(numbers.check(kept));
    EXPECT_TRUE(kept.filter.types.contains(3));
    EXPECT_FALSE(kept.filter.types.contains(2));
    EXPECT_FALSE(numbers.has_names());
}

TEST(Reading, SelectsTypeAndCountFromOpenToRun) {
    test::SeqnoRing ring;
    ring.publish(30);  // types 2, 3, 4 in turn
    Selection selection("oldest");
    selection.types = {"3"};
    selection.count = "5";
    auto reading = opened(request_for(ring, selection), selection);
    ASSERT_TRUE(reading) << reading.error().message();
    EXPECT_EQ((*reading)->schema(), nullptr);  // the ring carries none
    Collect sink;
    auto result = (*reading)->run(sink);
    ASSERT_TRUE(result) << result.error().message();
    ASSERT_EQ(sink.seen.size(), 5u);
    for (std::size_t i = 0; i < sink.seen.size(); ++i) {
        EXPECT_EQ(sink.seen[i].event_type, 3);
        EXPECT_EQ(sink.seen[i].seqno, 1 + 3 * i);  // seqno % 3 == 1 carries type 3
    }
    EXPECT_EQ(result->end, FollowEnd::Count);
    EXPECT_EQ((*reading)->registration()->registered(), false);  // no reader asked for
}

TEST(Reading, RegistersTheReaderItIsAskedFor) {
    test::SeqnoRing ring;
    ring.publish(4);
    Selection selection("oldest");
    selection.count = "4";
    ReadRequest request = request_for(ring, selection);
    request.reader = ReaderInfo{"reading-test", 0, "tests/read"};
    auto reading = opened(std::move(request), selection);
    ASSERT_TRUE(reading) << reading.error().message();
    Collect sink;
    ASSERT_TRUE((*reading)->run(sink));
    EXPECT_EQ(sink.seen.size(), 4u);
    ASSERT_NE((*reading)->registration(), nullptr);
    EXPECT_TRUE((*reading)->registration()->registered());
}

TEST(Reading, RefusesWhatNeedsASchemaOrARegistration) {
    test::SeqnoRing ring;
    ring.publish(3);
    Selection where("oldest");
    where.where = "type == 3";
    auto refused = opened(request_for(ring, where), where);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().errno_value(), EINVAL);
    EXPECT_NE(refused.error().message().find("no schema"), std::string::npos) << refused.error().message();

    Selection plain("oldest");
    ReadRequest unregistered = request_for(ring, plain);
    unregistered.interest.level = 3;  // interest is registered, and this reader does not register
    refused = opened(std::move(unregistered), plain);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().message(), "--level registers this reader's interest; it cannot go with --no-register");

    ReadRequest keywords = request_for(ring, plain);
    keywords.reader = ReaderInfo{"reading-test", 0, ""};
    keywords.interest.keywords = "trades";
    refused = opened(std::move(keywords), plain);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message().find("--keywords names keywords of the ring's schema"), std::string::npos)
        << refused.error().message();
}

TEST(Reading, NamesASourceThatIsNotThere) {
    test::TempDir dir;
    Selection selection("oldest");
    ReadRequest request;
    request.location = dir.file("absent");
    request.selection = &selection;
    auto reading = Reading::open(std::move(request));
    ASSERT_FALSE(reading);
    EXPECT_NE(reading.error().message().find("absent"), std::string::npos) << reading.error().message();
}

}  // namespace
}  // namespace evring
