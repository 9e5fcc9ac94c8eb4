// relay --assemble's resume rule (lib/nats/assembled_stream.hpp, docs/distributed.md "Assembled
// blocks"): the label in a message id, and which instances a stream already holds. No server:
// tests/cli/nats_assemble_test.sh runs the rule against one.
#include <gtest/gtest.h>

#include "nats/assembled_stream.hpp"

namespace evring::nats::detail {
namespace {

TEST(AssembledTail, LabelIsReadFromAnIdOfTheSpanOnly) {
    EXPECT_EQ(label_of_name("block:15000009:00ab:finalized", "block"), 15000009u);
    EXPECT_EQ(label_of_name("block:7::ended", "block"), 7u);
    EXPECT_FALSE(label_of_name("blocks:7::ended", "block"));  // another span
    EXPECT_FALSE(label_of_name("txn:7::ended", "block"));
    EXPECT_FALSE(label_of_name("block:x7::ended", "block"));
    EXPECT_FALSE(label_of_name("block:7", "block"));          // no id or state
    EXPECT_FALSE(label_of_name("block:", "block"));
    EXPECT_FALSE(label_of_name("", "block"));
}

TEST(AssembledTail, HoldsLowerLabelsAndTheNewestLabelsNamesOnly) {
    AssembledTail tail;
    EXPECT_FALSE(tail.holds(1, "block:1::finalized"));  // an empty stream holds nothing
    tail.any = true;
    tail.label = 12;
    tail.names = {"block:12:aa:abandoned"};
    EXPECT_TRUE(tail.holds(11, "block:11:bb:finalized"));   // below the newest label: published
    EXPECT_TRUE(tail.holds(12, "block:12:aa:abandoned"));   // the newest label's, there
    EXPECT_FALSE(tail.holds(12, "block:12:bb:finalized"));  // its rival, not yet there
    EXPECT_FALSE(tail.holds(13, "block:13:cc:finalized"));
}

}  // namespace
}  // namespace evring::nats::detail
