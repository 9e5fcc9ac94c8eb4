// Batches (Publisher::publish_batch, typed_publish.hpp's publish_many):
// deterministic, on one thread. A batch is what N single reservations by a
// lone writer would have made, apart from sharing one timestamp; readers
// see ordinary events; the limits refuse before reserving anything; the
// window never expires a batch's own events; a writer that dies inside a
// batch leaves reservations readers report Abandoned. Threads and processes:
// publisher_batch_concurrency_test.cpp.
#include <sys/mman.h>
#include <sys/resource.h>

#include <array>
#include <chrono>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "evring/clock.hpp"
#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_extension.hpp"
#include "evring/ring/ring_writer.hpp"
#include "evring/ring/shared_word.hpp"
#include "evring/schema/typed_publish.hpp"
#include "support/child_process.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using namespace std::chrono_literals;
using Flow = std::array<std::uint64_t, 4>;

// Payload i of a test: `size` bytes of (seed + i + byte index).
std::vector<std::byte> bytes_of(std::size_t size, unsigned seed) {
    std::vector<std::byte> out(size);
    for (std::size_t b = 0; b < size; ++b) out[b] = static_cast<std::byte>((seed + b) & 0xff);
    return out;
}

struct Events {
    std::vector<std::vector<std::byte>> payloads;
    std::vector<BatchEvent> batch;
    explicit Events(const std::vector<std::size_t>& sizes) {
        for (std::size_t i = 0; i < sizes.size(); ++i) payloads.push_back(bytes_of(sizes[i], 11 * unsigned(i)));
        for (std::size_t i = 0; i < sizes.size(); ++i)
            batch.push_back({payloads[i].data(), {i, 100 + i, 200 + i, 300 + i},
                             static_cast<std::uint32_t>(sizes[i]), static_cast<std::uint16_t>(20 + i)});
    }
};

EventDescriptor slot_of(const MappedRing& ring, std::uint64_t seqno) {
    EventDescriptor d{};
    std::memcpy(&d, &ring.descriptors()[(seqno - 1) & ring.descriptor_mask()], sizeof d);
    return d;
}

std::vector<std::byte> payload_of(const MappedRing& ring, const EventDescriptor& d) {
    const std::byte* p = ring.payload_buffer() + (d.payload_buf_offset & ring.payload_mask());
    return {p, p + d.payload_size};
}

TEST(PublisherBatch, AreTheEventsSingleReservationsWouldMakeUnderOneTimestamp) {
    const std::vector<std::size_t> sizes{1, 17, 0, 3, 64, 100};
    Events events(sizes);
    test::RingPair singles, batched;
    {
        Publisher publisher(*singles.writer);
        for (const BatchEvent& e : events.batch) {
            Reservation r = publisher.reserve(e.payload_size);
            ASSERT_TRUE(r);
            r.descriptor().event_type = e.event_type;
            r.descriptor().content_ext = e.content_ext;
            if (e.payload_size > 0) std::memcpy(r.payload(), e.payload, e.payload_size);
            publisher.commit(r);
        }
    }
    Publisher publisher(*batched.writer);
    const std::uint64_t before = wall_clock_nanos();
    const std::uint64_t first = publisher.publish_batch(events.batch);
    const std::uint64_t after = wall_clock_nanos();
    ASSERT_EQ(first, 1u);
    EXPECT_EQ(batched.reader->header().control.last_seqno, singles.reader->header().control.last_seqno);
    EXPECT_EQ(batched.reader->header().control.next_payload_byte, singles.reader->header().control.next_payload_byte);
    const std::uint64_t stamp = slot_of(*batched.reader, 1).record_epoch_nanos;
    EXPECT_GE(stamp, before);
    EXPECT_LE(stamp, after);
    for (std::uint64_t s = 1; s <= sizes.size(); ++s) {
        EventDescriptor want = slot_of(*singles.reader, s);
        const EventDescriptor got = slot_of(*batched.reader, s);
        EXPECT_EQ(got.record_epoch_nanos, stamp) << "every event of a batch carries its one timestamp";
        want.record_epoch_nanos = stamp;
        EXPECT_EQ(std::memcmp(&want, &got, sizeof want), 0) << "seqno " << s;
        EXPECT_EQ(payload_of(*batched.reader, got), events.payloads[s - 1]) << "seqno " << s;
    }
}

TEST(PublisherBatch, ReadersSeeOrdinaryEventsInSequenceOrder) {
    Events events({8, 40, 0, 64});
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    ASSERT_EQ(publisher.publish_batch(events.batch), 1u);
    ASSERT_EQ(publisher.publish_batch(events.batch), 5u);
    Iterator it(*rings.reader);
    it.seek(1);
    EventDescriptor d{};
    std::vector<std::byte> buffer(64);
    for (std::uint64_t s = 1; s <= 8; ++s) {
        ASSERT_EQ(it.try_next(d), NextResult::Success);
        EXPECT_EQ(d.seqno, s);
        const BatchEvent& e = events.batch[(s - 1) % 4];
        EXPECT_EQ(d.event_type, e.event_type);
        EXPECT_EQ(d.content_ext, e.content_ext);
        ASSERT_EQ(copy_payload(*rings.reader, d, buffer.data(), buffer.size()), PayloadResult::Ok);
        EXPECT_EQ(std::vector<std::byte>(buffer.begin(), buffer.begin() + d.payload_size), events.payloads[(s - 1) % 4]);
    }
    EXPECT_EQ(it.try_next(d), NextResult::NotReady);
}

TEST(PublisherBatch, EmptyOverlongAndOversizedBatchesReserveNothing) {
    test::RingPair rings(test::small_params(8, 12));  // 4 KiB of payload: batches of at most 3840 bytes
    Publisher publisher(*rings.writer);
    ASSERT_EQ(publisher.max_batch_payload(), 4096u - 256u);
    const RingControl& control = rings.reader->header().control;
    EXPECT_EQ(publisher.publish_batch(std::span<const BatchEvent>()), 0u);
    std::vector<BatchEvent> many(Publisher::kMaxBatchEvents + 1);
    EXPECT_EQ(publisher.publish_batch(many), 0u);
    Events big(std::vector<std::size_t>(16, 241));  // 16 x 256 rounded = 4096 > 3840
    EXPECT_EQ(publisher.publish_batch(big.batch), 0u);
    std::vector<std::byte> payloads(16 * 241);
    EXPECT_EQ(publisher.publish_batch(5, payloads.data(), 241, 16, {}), 0u);
    const Flow flows[2] = {};
    EXPECT_EQ(publisher.publish_batch(5, payloads.data(), 16, 3, flows), 0u) << "2 flow tag sets for 3 events";
    EXPECT_EQ(control.last_seqno, 0u);
    EXPECT_EQ(control.next_payload_byte, 0u);
    // At the limits: 64 events, and exactly max_batch_payload() bytes.
    many.pop_back();
    EXPECT_EQ(publisher.publish_batch(many), 1u);
    Events full(std::vector<std::size_t>(15, 256));
    EXPECT_EQ(publisher.publish_batch(full.batch), 65u);
    EXPECT_EQ(control.last_seqno, 79u);
}

TEST(PublisherBatch, AFullBatchNeverExpiresItsOwnEventsWhereverTheBufferWraps) {
    // 4 KiB buffer, window increment 256: each batch of 15 x 256 bytes is as
    // large as a batch may be, and starts at a different place each time.
    test::RingPair rings(test::small_params(8, 12));
    Publisher publisher(*rings.writer);
    Iterator it(*rings.reader);
    it.seek(1);
    std::vector<std::byte> buffer(256);
    for (unsigned round = 0; round < 40; ++round) {
        Events events(std::vector<std::size_t>(15, round % 3 == 0 ? 256 : 240 + round % 16));
        Events filler({16 * (round % 7) + 1});  // moves the next batch's start
        ASSERT_NE(publisher.publish_batch(events.batch), 0u);
        // W3: the window covers every byte the batch overwrote...
        const RingControl& control = rings.reader->header().control;
        ASSERT_GE(control.buffer_window_start + 4096, control.next_payload_byte) << "round " << round;
        EventDescriptor d{};
        for (std::size_t i = 0; i < 15; ++i) {
            ASSERT_EQ(it.try_next(d), NextResult::Success);
            ASSERT_EQ(copy_payload(*rings.reader, d, buffer.data(), buffer.size()), PayloadResult::Ok)
                << "round " << round << " event " << i << ": expired by its own batch";
            ASSERT_EQ(std::memcmp(buffer.data(), events.payloads[i].data(), d.payload_size), 0)
                << "round " << round << " event " << i;
            // ... and none of the batch's own.
            ASSERT_GE(d.payload_buf_offset, control.buffer_window_start);
        }
        ASSERT_NE(publisher.publish_batch(filler.batch), 0u);
        ASSERT_EQ(it.try_next(d), NextResult::Success);
    }
}

TEST(PublisherBatch, ABatchAcrossTheEndOfTheDescriptorArrayWrapsToItsStart) {
    test::RingPair rings(test::small_params(6, 14));  // 64 descriptors
    Publisher publisher(*rings.writer);
    Events first(std::vector<std::size_t>(60, 16));
    ASSERT_EQ(publisher.publish_batch(first.batch), 1u);
    Events across({24, 8, 16, 48, 0, 33, 7, 64});
    ASSERT_EQ(publisher.publish_batch(across.batch), 61u);  // slots 60..63, then 0..3
    const std::uint8_t layout[] = {24, 8, 16, 48, 0, 33, 7, 64};
    ASSERT_EQ(publisher.publish_batch(5, layout, 8, 1, {}), 69u);  // the uniform form, slot 4
    for (std::uint64_t s = 61; s <= 68; ++s) {
        const EventDescriptor d = slot_of(*rings.reader, s);
        EXPECT_EQ(d.seqno, s);
        EXPECT_EQ(d.event_type, across.batch[s - 61].event_type);
        EXPECT_EQ(payload_of(*rings.reader, d), across.payloads[s - 61]) << "seqno " << s;
    }
    EXPECT_EQ(slot_of(*rings.reader, 69).seqno, 69u);
    EXPECT_EQ(slot_of(*rings.reader, 4).seqno, 4u + 64u);
}

// The uniform form (an array of structs) makes the events the BatchEvent
// form makes, with each way of giving flow tags, sizes that are and are not
// multiples of 16.
TEST(PublisherBatch, TheArrayFormMakesWhatTheEventFormMakes) {
    for (const std::uint32_t size : {0u, 16u, 24u, 64u, 100u}) {
        for (const std::size_t flow_sets : {0u, 1u, 5u}) {
            std::vector<std::byte> array(5 * size);
            for (std::size_t b = 0; b < array.size(); ++b) array[b] = static_cast<std::byte>(b * 7);
            std::vector<Flow> flows(flow_sets);
            for (std::size_t i = 0; i < flow_sets; ++i) flows[i] = {i + 1, 2, 3, 40 + i};
            std::vector<BatchEvent> batch(5);
            for (std::size_t i = 0; i < 5; ++i)
                batch[i] = {array.data() + i * size, flow_sets == 0 ? Flow{} : flows[flow_sets == 1 ? 0 : i], size, 9};
            test::RingPair a, b;
            Publisher pa(*a.writer), pb(*b.writer);
            ASSERT_EQ(pa.publish_batch(batch), 1u);
            ASSERT_EQ(pb.publish_batch(9, array.data(), size, 5, flows), 1u);
            const std::uint64_t stamp = slot_of(*b.reader, 1).record_epoch_nanos;
            for (std::uint64_t s = 1; s <= 5; ++s) {
                EventDescriptor want = slot_of(*a.reader, s);
                const EventDescriptor got = slot_of(*b.reader, s);
                want.record_epoch_nanos = stamp;
                EXPECT_EQ(std::memcmp(&want, &got, sizeof want), 0) << "size " << size << " flows " << flow_sets;
                EXPECT_EQ(payload_of(*b.reader, got), payload_of(*a.reader, want));
            }
        }
    }
}

TEST(PublisherBatch, EveryWayOfReservingGivesTheSameRing) {
    Events events({8, 24, 0, 64, 5});
    test::TempDir dir;
    CreateOptions options;  // held exclusively: an Auto publisher claims it
    RingWriter owned = RingWriter::create(test::small_spec(dir.file("owned"), 8, 16), options).value();
    test::RingPair shared_ring, exclusive_ring;
    Publisher claimed(owned.ring());
    Publisher shared_publisher(*shared_ring.writer, WriterSharing::Shared);
    Publisher exclusive_publisher(*exclusive_ring.writer, WriterSharing::Exclusive);
    for (int i = 0; i < 3; ++i) {
        ASSERT_NE(claimed.publish_batch(events.batch), 0u);
        ASSERT_NE(shared_publisher.publish_batch(events.batch), 0u);
        ASSERT_NE(exclusive_publisher.publish_batch(events.batch), 0u);
    }
    EXPECT_TRUE(claimed.holds_claim()) << "batches take the claim's plain path";
    for (const MappedRing* ring : {&shared_ring.reader.value(), &exclusive_ring.reader.value()}) {
        EXPECT_EQ(ring->header().control.last_seqno, owned.ring().header().control.last_seqno);
        EXPECT_EQ(ring->header().control.next_payload_byte, owned.ring().header().control.next_payload_byte);
        for (std::uint64_t s = 1; s <= 15; ++s) {
            EventDescriptor want = slot_of(owned.ring(), s);
            const EventDescriptor got = slot_of(*ring, s);
            want.record_epoch_nanos = got.record_epoch_nanos;
            EXPECT_EQ(std::memcmp(&want, &got, sizeof want), 0) << "seqno " << s;
            EXPECT_EQ(payload_of(*ring, got), payload_of(owned.ring(), want));
        }
    }
}

TEST(PublisherBatch, ABatchRingsTheDoorbellOnceForAllItsEvents) {
    test::RingPair rings;
    Publisher publisher(*rings.writer);
    std::uint32_t& doorbell = extension_in(&rings.writer->header())->doorbell;
    Events events({8, 8, 8});
    ASSERT_EQ(publisher.publish_batch(events.batch), 1u);
    EXPECT_EQ(shared::load_relaxed(doorbell), 0u) << "nobody asleep: the doorbell line is not written";
    shared::fetch_or_seq_cst(doorbell, 1u);  // a reader announcing a sleep
    ASSERT_EQ(publisher.publish_batch(events.batch), 4u);
    EXPECT_EQ(shared::load_relaxed(doorbell), 2u) << "woken once: epoch 1, nobody announced";
    const std::uint8_t three[48] = {};
    shared::fetch_or_seq_cst(doorbell, 1u);
    ASSERT_EQ(publisher.publish_batch(4, three, 16, 3, {}), 7u);
    EXPECT_EQ(shared::load_relaxed(doorbell), 4u) << "the array form wakes too";
    ASSERT_EQ(publisher.publish_batch(events.batch), 10u);
    EXPECT_EQ(shared::load_relaxed(doorbell), 4u) << "no second wake without a second announcement";
}

// A writer that dies inside publish_batch: a child whose batch has, at event
// `dies_at`, a payload on a page it may not read, so it is killed (SIGSEGV)
// in the middle of the call, after committing the events before it. The
// rest of its batch stays reserved and uncommitted; once another writer
// commits a later event, a reader reports each of them Abandoned, even when
// the whole batch (Publisher::kMaxBatchEvents events) died.
void expect_dead_batch_reported_abandoned(std::size_t dies_at) {
    constexpr std::size_t kEvents = Publisher::kMaxBatchEvents;
    test::RingPair rings(test::small_params(10, 16));
    void* page = ::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(page, MAP_FAILED);
    const std::string path = rings.path;
    const pid_t child = test::spawn([&] {
        const rlimit no_core{0, 0};
        ::setrlimit(RLIMIT_CORE, &no_core);
        MappedRing ring = test::map_path(path, Access::ReadWrite);
        Publisher publisher(ring);
        Events events(std::vector<std::size_t>(kEvents, 32));
        events.batch[dies_at].payload = page;
        (void)publisher.publish_batch(events.batch);
        return 0;  // not reached
    });
    const int code = test::exit_code_of(child);
    ::munmap(page, 4096);
    // SIGSEGV, or (under a sanitizer that reports the fault) its exit code.
    ASSERT_NE(code, 0) << "the child was to die inside its batch";
    ASSERT_EQ(rings.reader->header().control.last_seqno, kEvents) << "the whole batch was reserved";
    Publisher survivor(*rings.writer);
    Events later({16});
    ASSERT_EQ(survivor.publish_batch(later.batch), kEvents + 1);

    Iterator it(*rings.reader);
    it.seek(1);
    it.set_abandon_after(0ns);
    it.set_poll_style(PollStyle::Sleeping);  // looks for a later commit at every poll
    EventDescriptor d{};
    std::vector<std::uint64_t> read, abandoned;
    // A stalled reader scans ahead on every 64th look: 64 polls per dead event.
    for (int poll = 0; poll < 100'000 && it.next_seqno() <= kEvents + 1; ++poll) {
        const NextResult r = it.try_next(d);
        if (r == NextResult::Success) read.push_back(d.seqno);
        if (r == NextResult::Abandoned) abandoned.push_back(it.last_abandoned_seqno());
    }
    std::vector<std::uint64_t> want_read, want_abandoned;
    for (std::uint64_t s = 1; s <= dies_at; ++s) want_read.push_back(s);
    want_read.push_back(kEvents + 1);
    for (std::uint64_t s = dies_at + 1; s <= kEvents; ++s) want_abandoned.push_back(s);
    EXPECT_EQ(read, want_read);
    EXPECT_EQ(abandoned, want_abandoned);
}

TEST(PublisherBatch, AWriterDyingMidBatchLeavesReservationsReadersReportAbandoned) {
    expect_dead_batch_reported_abandoned(5);
}

TEST(PublisherBatch, AWholeDeadBatchOfTheMostEventsIsStillReportedAbandoned) {
    expect_dead_batch_reported_abandoned(0);
}

// publish_many: any number of events, in batches; an oversized event is a
// RECORD_ERROR in its place; seqnos reported per event.
TEST(PublishMany, SplitsIntoBatchesAndRecordsOversizedEventsAsErrorsInPlace) {
    test::RingPair rings(test::small_params(10, 12));  // payloads of at most 3840 bytes
    Publisher publisher(*rings.writer);
    std::vector<std::size_t> sizes(150, 40);
    sizes[70] = 5000;  // larger than the ring allows
    Events events(sizes);
    std::vector<std::uint64_t> seqnos(150, 99);
    EXPECT_EQ(publish_many(publisher, events.batch, seqnos), 149u);
    EXPECT_EQ(seqnos[0], 1u);
    EXPECT_EQ(seqnos[69], 70u);
    EXPECT_EQ(seqnos[70], 0u) << "recorded as a RECORD_ERROR";
    EXPECT_EQ(seqnos[71], 72u) << "the RECORD_ERROR took seqno 71";
    EXPECT_EQ(seqnos[149], 150u);
    const EventDescriptor error = slot_of(*rings.reader, 71);
    EXPECT_EQ(error.event_type, kRecordErrorEventType);
    RecordErrorPayload p{};
    std::memcpy(&p, payload_of(*rings.reader, error).data(), sizeof p);
    EXPECT_EQ(p.dropped_event_type, events.batch[70].event_type);
    EXPECT_EQ(p.requested_payload_size, 5000u);
    for (std::uint64_t s = 1; s <= 150; ++s) {
        if (s == 71) continue;  // event i has seqno i + 1 on both sides of the RECORD_ERROR
        EXPECT_EQ(slot_of(*rings.reader, s).event_type, events.batch[s - 1].event_type) << "seqno " << s;
    }
    // Batches of at most 64 events: events 0..63 share a timestamp, 64 does not have to.
    EXPECT_EQ(slot_of(*rings.reader, 64).record_epoch_nanos, slot_of(*rings.reader, 1).record_epoch_nanos);
    std::vector<std::uint64_t> too_few(3);
    EXPECT_EQ(publish_many(publisher, events.batch, too_few), 0u);
    EXPECT_EQ(rings.reader->header().control.last_seqno, 150u) << "a short seqnos publishes nothing";
}

struct Tick {
    std::uint64_t count;
    std::int32_t price;
    std::uint32_t pad;
    std::uint64_t more[3];
};

TEST(PublishMany, TypedValuesAreOneEventEachWithTheirFlowTags) {
    test::RingPair rings(test::small_params(10, 16));
    Publisher publisher(*rings.writer);
    std::vector<Tick> ticks(100);
    std::vector<FlowTags> flows(100);
    for (std::size_t i = 0; i < ticks.size(); ++i) {
        ticks[i] = {i, static_cast<std::int32_t>(1000 - i), 0, {i, i, i}};
        flows[i] = {i * 3, 0, 0, 1};
    }
    std::vector<std::uint64_t> seqnos(100);
    ASSERT_EQ(publish_many<Tick>(publisher, 7, ticks, flows, seqnos), 100u);
    const FlowTags one[1] = {{5, 6, 7, 8}};
    ASSERT_EQ(publish_many<Tick>(publisher, 8, std::span<const Tick>(ticks).first(3), one), 3u);
    for (std::uint64_t s = 1; s <= 103; ++s) {
        const EventDescriptor d = slot_of(*rings.reader, s);
        const std::size_t i = s <= 100 ? s - 1 : s - 101;
        EXPECT_EQ(d.event_type, s <= 100 ? 7 : 8);
        EXPECT_EQ(d.payload_size, sizeof(Tick));
        EXPECT_EQ(d.content_ext, s <= 100 ? flows[i] : (FlowTags{5, 6, 7, 8}));
        Tick got{};
        std::memcpy(&got, payload_of(*rings.reader, d).data(), sizeof got);
        EXPECT_EQ(got.count, ticks[i].count);
        EXPECT_EQ(got.price, ticks[i].price);
        if (s <= 100) {
            EXPECT_EQ(seqnos[i], s);
        }
    }
    EXPECT_EQ(publish_many<Tick>(publisher, 7, ticks, std::span<const FlowTags>(flows).first(2)), 0u)
        << "two flow tag sets for 100 events";
}

}  // namespace
}  // namespace evring
