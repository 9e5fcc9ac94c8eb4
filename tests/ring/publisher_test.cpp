#include "evring/ring/publisher.hpp"

#include <cstring>

#include <gtest/gtest.h>

#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::RingPair;

std::uint64_t publish_bytes(Publisher& publisher, std::uint16_t type, std::size_t size, std::uint8_t fill) {
    Reservation r = publisher.reserve(size);
    EXPECT_TRUE(r);
    r.descriptor().event_type = type;
    r.descriptor().content_ext = {1, 2, 3, 4};
    std::memset(r.payload(), fill, size);
    publisher.commit(r);
    return r.seqno();
}

TEST(Publisher, HandsOutConsecutiveSeqnosStartingAtOne) {
    RingPair rings;
    Publisher publisher(*rings.writer);
    EXPECT_EQ(publish_bytes(publisher, 5, 10, 0), 1u);
    EXPECT_EQ(publish_bytes(publisher, 5, 10, 0), 2u);
    EXPECT_EQ(rings.reader->header().control.last_seqno, 2u);
}

TEST(Publisher, AlignsPayloadSpaceTo16Bytes) {
    RingPair rings;
    Publisher publisher(*rings.writer);
    Reservation a = publisher.reserve(1);
    Reservation b = publisher.reserve(17);
    Reservation c = publisher.reserve(0);
    Reservation d = publisher.reserve(3);
    EXPECT_EQ(a.descriptor().payload_buf_offset, 0u);
    EXPECT_EQ(b.descriptor().payload_buf_offset, 16u);
    EXPECT_EQ(c.descriptor().payload_buf_offset, 48u);
    EXPECT_EQ(d.descriptor().payload_buf_offset, 48u);  // empty payloads take no space
    for (auto* r : {&a, &b, &c, &d}) {
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(r->payload()) % 16, 0u);
        publisher.commit(*r);
    }
    EXPECT_EQ(rings.reader->header().control.next_payload_byte, 64u);
}

TEST(Publisher, CommitPublishesTheStagedDescriptor) {
    RingPair rings;
    Publisher publisher(*rings.writer);
    Reservation r = publisher.reserve(8);
    r.descriptor().event_type = 9;
    r.descriptor().content_ext = {10, 20, 30, 40};
    std::memcpy(r.payload(), "abcdefgh", 8);
    const EventDescriptor& slot = reinterpret_cast<const EventDescriptor&>(rings.reader->descriptors()[0]);
    EXPECT_EQ(slot.seqno, 0u) << "nothing is visible before commit";
    publisher.commit(r);
    EXPECT_EQ(slot.seqno, 1u);
    EXPECT_EQ(slot.event_type, 9);
    EXPECT_EQ(slot.payload_size, 8u);
    EXPECT_EQ(slot.content_ext[3], 40u);
    EXPECT_NE(slot.record_epoch_nanos, 0u);
    EXPECT_EQ(std::memcmp(peek_payload(*rings.reader, slot), "abcdefgh", 8), 0);
}

TEST(Publisher, TimestampsAreWallClockNanos) {
    RingPair rings;
    Publisher publisher(*rings.writer);
    timespec before{};
    ::clock_gettime(CLOCK_REALTIME, &before);
    Reservation r = publisher.reserve(0);
    publisher.commit(r);
    const std::uint64_t before_ns =
        static_cast<std::uint64_t>(before.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(before.tv_nsec);
    // Generous bound: the point is the epoch and unit, not the precision.
    EXPECT_GT(r.descriptor().record_epoch_nanos + 1'000'000'000u, before_ns);
    EXPECT_LT(r.descriptor().record_epoch_nanos, before_ns + 60'000'000'000u);
}

TEST(Publisher, RefusesPayloadsLargerThanTheRingAllows) {
    RingPair rings;  // 64 KiB buffer: 4 KiB window increment, 60 KiB max payload
    Publisher publisher(*rings.writer);
    EXPECT_EQ(publisher.max_payload_size(), 61440u);
    EXPECT_FALSE(publisher.reserve(61441));
    EXPECT_EQ(rings.reader->header().control.last_seqno, 0u) << "a refused reservation takes nothing";
    Reservation ok = publisher.reserve(61440);
    EXPECT_TRUE(ok);
    publisher.commit(ok);
}

TEST(Publisher, WrappingPayloadIsContiguousAndReadableAcrossTheEnd) {
    RingPair rings;
    Publisher publisher(*rings.writer);
    const std::uint64_t size = rings.writer->layout().size.payload_buf_size;
    // Advance to 32 bytes before the end, then write 100 bytes that wrap.
    while (rings.reader->header().control.next_payload_byte < size - 32)
        publish_bytes(publisher, 1, 16, 0);
    ASSERT_EQ(rings.reader->header().control.next_payload_byte, size - 32);
    std::uint8_t pattern[100];
    for (int i = 0; i < 100; ++i) pattern[i] = static_cast<std::uint8_t>(i + 1);
    Reservation r = publisher.reserve(sizeof pattern);
    std::memcpy(r.payload(), pattern, sizeof pattern);
    publisher.commit(r);
    Iterator it(*rings.reader);
    EventDescriptor event{};
    ASSERT_TRUE(it.read_descriptor(r.seqno(), event));
    std::uint8_t out[100];
    ASSERT_EQ(copy_payload(*rings.reader, event, out, sizeof out), PayloadResult::Ok);
    EXPECT_EQ(std::memcmp(out, pattern, sizeof out), 0);
    // The first bytes past the end landed at the start of the buffer.
    EXPECT_EQ(std::to_integer<std::uint8_t>(rings.reader->payload_buffer()[0]), 33);
}

TEST(Publisher, WindowAdvancesInIncrementsOnlyOnceTheBufferWraps) {
    RingPair rings;
    Publisher publisher(*rings.writer);
    const std::uint64_t size = rings.writer->layout().size.payload_buf_size;
    const std::uint64_t increment = window_increment_for(size);
    auto window = [&] { return rings.reader->header().control.buffer_window_start; };
    while (rings.reader->header().control.next_payload_byte < size) {
        publish_bytes(publisher, 1, 64, 0);
        EXPECT_EQ(window(), 0u);
    }
    publish_bytes(publisher, 1, 64, 0);  // first bytes of the second lap
    EXPECT_EQ(window(), increment);
    // The window stays put until the writer needs the next increment.
    while (rings.reader->header().control.next_payload_byte < size + increment) {
        EXPECT_EQ(window(), increment);
        publish_bytes(publisher, 1, 64, 0);
    }
    publish_bytes(publisher, 1, 64, 0);
    EXPECT_EQ(window(), 2 * increment);
}

// The window a publisher remembers (W3', publisher_inline.hpp) may only
// spare it the window's load while the window still covers what it
// overwrites: checked for every reservation over three laps, with two
// publishers taking turns, so each also writes past windows the other raised.
TEST(Publisher, EveryReservationFindsTheWindowAboveTheBytesItOverwrites) {
    RingPair rings;
    Publisher first(*rings.writer, WriterSharing::Shared);
    Publisher second(*rings.writer, WriterSharing::Shared);
    const std::uint64_t size = rings.writer->layout().size.payload_buf_size;
    const RingControl& control = rings.reader->header().control;
    std::uint64_t reservations = 0;
    for (std::uint64_t n = 0; control.next_payload_byte < 3 * size; ++n) {
        Publisher& publisher = (n / 7) % 2 == 0 ? first : second;
        Reservation r = publisher.reserve(16 + (n * 37) % 1000);
        ASSERT_TRUE(r);
        const std::uint64_t end = control.next_payload_byte;  // this reservation's end
        if (end > size) {
            ASSERT_GE(control.buffer_window_start, end - size) << "reservation " << n;
        }
        publisher.commit(r);
        ++reservations;
    }
    EXPECT_GT(control.buffer_window_start, size);
    EXPECT_GT(reservations, 100u);
}

TEST(Publisher, RecordErrorDescribesTheDroppedPayload) {
    RingPair rings;
    Publisher publisher(*rings.writer);
    const char start[] = "the start of a huge payload";
    std::uint64_t seqno = publisher.publish_record_error(RecordErrorKind::PayloadLargerThanRing, 42,
                                                1u << 20, start, sizeof start, {7, 0, 0, 0});
    Iterator it(*rings.reader);
    EventDescriptor event{};
    ASSERT_TRUE(it.read_descriptor(seqno, event));
    EXPECT_EQ(event.event_type, kRecordErrorEventType);
    EXPECT_EQ(event.content_ext[0], 7u);
    ASSERT_EQ(event.payload_size, sizeof(RecordErrorPayload) + sizeof start);
    RecordErrorPayload error{};
    std::memcpy(&error, peek_payload(*rings.reader, event), sizeof error);
    EXPECT_EQ(error.error_type, 2);
    EXPECT_EQ(error.dropped_event_type, 42);
    EXPECT_EQ(error.truncated_payload_size, sizeof start);
    EXPECT_EQ(error.requested_payload_size, 1u << 20);
    EXPECT_STREQ(reinterpret_cast<const char*>(peek_payload(*rings.reader, event)) + sizeof error, start);
}

}  // namespace
}  // namespace evring
