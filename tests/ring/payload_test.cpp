#include "evring/ring/payload.hpp"

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "evring/ring/iterator.hpp"
#include "evring/ring/publisher.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::RingPair;

EventDescriptor publish_filled(Publisher& publisher, std::size_t size, std::uint8_t fill) {
    Reservation r = publisher.reserve(size);
    std::memset(r.payload(), fill, size);
    publisher.commit(r);
    return r.descriptor();
}

TEST(Payload, PeekShowsTheBytesInPlace) {
    RingPair rings;
    Publisher publisher(*rings.writer);
    EventDescriptor event = publish_filled(publisher, 32, 0xab);
    const std::byte* p = peek_payload(*rings.reader, event);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(std::to_integer<int>(p[31]), 0xab);
    EXPECT_TRUE(payload_valid(*rings.reader, event));
}

TEST(Payload, ExpiresOnceTheWriterLapsIt) {
    RingPair rings;  // 64 KiB buffer
    Publisher publisher(*rings.writer);
    EventDescriptor first = publish_filled(publisher, 1024, 1);
    std::vector<std::uint8_t> out(1024);
    EXPECT_EQ(copy_payload(*rings.reader, first, out.data(), out.size()), PayloadResult::Ok);
    EXPECT_EQ(out[1023], 1);
    for (int i = 0; i < 64; ++i) publish_filled(publisher, 1024, 2);
    EXPECT_FALSE(payload_valid(*rings.reader, first));
    EXPECT_EQ(copy_payload(*rings.reader, first, out.data(), out.size()), PayloadResult::Expired);
}

TEST(Payload, ExpiredBeforeItsBytesAreActuallyOverwrittenIsStillExpired) {
    // The window moves in increments, so a payload can be declared expired a
    // little early; never late.
    RingPair rings;
    Publisher publisher(*rings.writer);
    const std::uint64_t size = rings.writer->layout().size.payload_buf_size;
    std::vector<EventDescriptor> events;
    while (rings.reader->header().control.next_payload_byte < size + 16)
        events.push_back(publish_filled(publisher, 16, 3));
    const std::uint64_t window = rings.reader->header().control.buffer_window_start;
    for (const EventDescriptor& e : events) {
        const bool overwritten = e.payload_buf_offset < 16;  // only the first 16 bytes were reused
        const bool valid = payload_valid(*rings.reader, e);
        if (overwritten) {
            EXPECT_FALSE(valid) << e.seqno;
        }
        EXPECT_EQ(valid, e.payload_buf_offset >= window) << e.seqno;
    }
}

TEST(Payload, HostileSizeIsNeverDereferenced) {
    RingPair rings;
    EventDescriptor lie{};
    lie.seqno = 1;
    lie.payload_size = 0xffffffff;
    lie.payload_buf_offset = 0xfffffffffffffff0ull;
    EXPECT_EQ(peek_payload(*rings.reader, lie), nullptr);
    std::uint8_t out[16];
    EXPECT_EQ(copy_payload(*rings.reader, lie, out, sizeof out), PayloadResult::Invalid);
}

TEST(Payload, HugeOffsetWithinBoundsSizeStaysInsideTheMapping) {
    RingPair rings;
    EventDescriptor lie{};
    lie.payload_size = static_cast<std::uint32_t>(rings.reader->layout().size.payload_buf_size);
    lie.payload_buf_offset = 0xfffffffffffffff0ull;  // masked into the buffer
    const std::byte* p = peek_payload(*rings.reader, lie);
    ASSERT_NE(p, nullptr);
    const std::byte* end = rings.reader->payload_buffer() + 2 * rings.reader->layout().size.payload_buf_size;
    EXPECT_LE(p + lie.payload_size, end);
}

TEST(Payload, CopyRefusesATooSmallDestination) {
    RingPair rings;
    Publisher publisher(*rings.writer);
    EventDescriptor event = publish_filled(publisher, 64, 1);
    std::uint8_t out[63];
    EXPECT_EQ(copy_payload(*rings.reader, event, out, sizeof out), PayloadResult::Invalid);
}

}  // namespace
}  // namespace evring
