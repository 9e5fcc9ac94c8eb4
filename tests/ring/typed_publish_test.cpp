#include "evring/schema/typed_publish.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evring/source/flow_filter.hpp"
#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::RingPair;

struct Trade {
    std::uint64_t price;
    std::uint32_t quantity;
    std::uint32_t name_length;
};

TEST(TypedPublish, RecordsStructThenTrailingArraysInOrder) {
    RingPair rings;
    Publisher publisher(*rings.writer);
    const std::string name = "ACME";
    const std::vector<std::uint16_t> extra = {1, 2, 3};
    std::uint64_t seqno = publish(publisher, 12, {5, 6, 0, 0}, Trade{100, 7, 4}, as_bytes(name), extra);
    ASSERT_EQ(seqno, 1u);
    Iterator it(*rings.reader);
    EventDescriptor event{};
    ASSERT_TRUE(it.read_descriptor(seqno, event));
    EXPECT_EQ(event.event_type, 12);
    EXPECT_EQ(event.content_ext[1], 6u);
    ASSERT_EQ(event.payload_size, sizeof(Trade) + 4 + 6);
    const std::byte* p = peek_payload(*rings.reader, event);
    Trade trade{};
    std::memcpy(&trade, p, sizeof trade);
    EXPECT_EQ(trade.price, 100u);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(p) + sizeof(Trade), 4), "ACME");
    std::uint16_t third = 0;
    std::memcpy(&third, p + sizeof(Trade) + 4 + 4, 2);
    EXPECT_EQ(third, 3);
}

TEST(TypedPublish, OversizedPayloadRecordsRecordErrorInstead) {
    RingPair rings;
    Publisher publisher(*rings.writer);
    std::vector<std::uint8_t> big(publisher.max_payload_size(), 0x11);
    EXPECT_EQ(publish(publisher, 12, {9, 0, 0, 0}, Trade{1, 2, 3}, big), 0u);
    Iterator it(*rings.reader);
    EventDescriptor event{};
    ASSERT_TRUE(it.read_descriptor(1, event));
    EXPECT_EQ(event.event_type, kRecordErrorEventType);
    EXPECT_EQ(event.content_ext[0], 9u);
    RecordErrorPayload error{};
    std::memcpy(&error, peek_payload(*rings.reader, event), sizeof error);
    EXPECT_EQ(error.error_type, static_cast<std::uint16_t>(RecordErrorKind::PayloadLargerThanRing));
    EXPECT_EQ(error.dropped_event_type, 12);
    EXPECT_EQ(error.requested_payload_size, sizeof(Trade) + big.size());
    EXPECT_EQ(error.truncated_payload_size, sizeof(Trade)) << "the struct part is kept";
}

TEST(TypedPublish, HandleCommitsWhenItGoesOutOfScope) {
    RingPair rings;
    Publisher publisher(*rings.writer);
    Iterator it(*rings.reader);
    EventDescriptor event{};
    {
        auto handle = reserve_typed<Trade>(publisher, 4, 5);
        ASSERT_TRUE(handle);
        handle->price = 77;
        handle.flow(2) = 99;
        std::memcpy(handle.trailing(), "hello", 5);
        EXPECT_EQ(it.try_next(event), NextResult::NotReady);
    }
    ASSERT_EQ(it.try_next(event), NextResult::Success);
    EXPECT_EQ(event.event_type, 4);
    EXPECT_EQ(event.content_ext[2], 99u);
    EXPECT_EQ(event.payload_size, sizeof(Trade) + 5);
    Trade trade{};
    std::memcpy(&trade, peek_payload(*rings.reader, event), sizeof trade);
    EXPECT_EQ(trade.price, 77u);
    EXPECT_EQ(trade.quantity, 0u) << "the struct starts zeroed";
}

TEST(TypedPublish, EmptyHandleForOversizedReservation) {
    RingPair rings;
    Publisher publisher(*rings.writer);
    auto handle = reserve_typed<Trade>(publisher, 4, std::uint64_t{1} << 40);
    EXPECT_FALSE(handle);
    Iterator it(*rings.reader);
    EventDescriptor event{};
    ASSERT_TRUE(it.read_descriptor(1, event));
    RecordErrorPayload error{};
    std::memcpy(&error, peek_payload(*rings.reader, event), sizeof error);
    EXPECT_EQ(error.error_type, static_cast<std::uint16_t>(RecordErrorKind::PayloadOver4GiB));
}

TEST(FlowFilter, MatchesOnTypesAndFlowTagsOnly) {
    FlowFilter filter;
    EXPECT_TRUE(filter.accepts_everything());
    EventDescriptor event{};
    event.event_type = 7;
    event.content_ext = {100, 42, 0, 0};
    EXPECT_TRUE(filter.matches(event));
    filter.types.add(8);
    EXPECT_FALSE(filter.matches(event));
    filter.types.add(7);
    EXPECT_TRUE(filter.matches(event));
    ASSERT_TRUE(filter.require_flow(1, 42));
    EXPECT_TRUE(filter.matches(event));
    ASSERT_TRUE(filter.require_flow(0, 101));
    EXPECT_FALSE(filter.matches(event));
    EXPECT_FALSE(filter.require_flow(4, 1)) << "only four flow tags exist";
    filter.types.remove(7);
    filter.types.remove(8);
    EXPECT_TRUE(filter.types.empty());
}

}  // namespace
}  // namespace evring
