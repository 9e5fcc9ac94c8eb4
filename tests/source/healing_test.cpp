// Healing (lib/source/healer.hpp, event_source.hpp's heal_with): a reader
// lapped by the writer reads what it missed from a recording of the same
// ring instance, and goes on in the ring; what the recording lacks stays a
// gap, exactly. One process, one thread: the writer, a recorder and the
// reader take turns, so every lap is where the test puts it.
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_writer.hpp"
#include "evring/source/source_open.hpp"
#include "recording/recording_writer.hpp"
#include "source/healer.hpp"
#include "source/recording_source.hpp"
#include "support/healing.hpp"
#include "support/seqno_ring.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::TempDir;
using test::copy_what_is_there;
using test::heal_from;
using test::kHeld;
using test::one_to;
using test::open;

// A 64-descriptor ring whose events carry their own seqno as payload.
using Ring = test::SeqnoRing;

// `evring record` in miniature: its own reader of the ring, into a recording
// that says which ring instance it recorded (or `origin` when given).
struct Recorder {
    Recorder(Ring& ring, std::string out, std::optional<std::uint64_t> origin = std::nullopt,
             std::uint64_t rotate_bytes = 0)
        : path(std::move(out)), source(open(ring.path)) {
        RecordingOptions options;
        options.rotate_bytes = rotate_bytes;
        options.origin_instance = origin.value_or(source->identity().instance);
        auto made = RecordingWriter::create(path, ring.writer->ring().header(), options);
        if (!made) ADD_FAILURE() << made.error().message();
        writer.emplace(std::move(made).value());
    }
    // Everything the ring holds now, then a flush (the file holds it once
    // the writer's worker has written the block: the healer waits for that).
    void catch_up() {
        copy_what_is_there(*source, *writer);
        ASSERT_TRUE(writer->flush().ok());
    }
    std::string path;
    std::unique_ptr<EventSource> source;
    std::optional<RecordingWriter> writer;
};

struct Read {
    std::vector<std::uint64_t> seqnos;
    std::vector<SourceGap> gaps;
    std::vector<std::string> notices;
};

// Reads until seqno `last` has been accounted for (an event or a gap), or
// 10 s pass: a recording block the worker has not written yet is waited for.
Read read_through(EventSource& source, std::uint64_t last, bool batches = false) {
    Read read;
    SourceItem item;
    std::uint64_t accounted = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (accounted < last && std::chrono::steady_clock::now() < deadline) {
        if (batches) {
            std::array<EventDescriptor, 16> out{};
            const Batch batch = source.next_batch(out);
            for (std::size_t i = 0; i < batch.events; ++i) read.seqnos.push_back(accounted = out[i].seqno);
            if (batch.stopped == SourceStep::Notice && source.next(item) == SourceStep::Notice)
                read.notices.emplace_back(item.notice);
            if (batch.stopped == SourceStep::NotReady) source.wait(std::chrono::milliseconds(10));
            continue;
        }
        const SourceStep step = source.next(item, PayloadRead::Copy);
        if (step == SourceStep::Event) {
            std::uint64_t value = 0;
            EXPECT_EQ(item.event.payload_state, PayloadState::Ok) << item.event.descriptor.seqno;
            if (item.event.payload_state == PayloadState::Ok) std::memcpy(&value, item.event.payload.data(), 8);
            EXPECT_EQ(value, item.event.descriptor.seqno) << "the payload travels with its event";
            read.seqnos.push_back(accounted = item.event.descriptor.seqno);
        } else if (step == SourceStep::Gap) {
            read.gaps.push_back(item.gap);
            read.gaps.back().detail = {};  // not kept past the call
            accounted = item.gap.last_seqno();
        } else if (step == SourceStep::Notice) {
            read.notices.emplace_back(item.notice);
        } else if (step == SourceStep::NotReady) {
            source.wait(std::chrono::milliseconds(10));
        } else {
            ADD_FAILURE() << "step " << static_cast<int>(step) << ": " << source.error().message();
            break;
        }
    }
    return read;
}

TEST(Healing, ALappedReaderGetsEveryEventOnceFromTheRecording) {
    Ring ring;
    Recorder recorder(ring, ring.dir.file("rec.evrec"));
    auto reader = open(ring.path, heal_from(recorder.path));
    ASSERT_TRUE(reader);
    ring.publish(10);
    recorder.catch_up();
    // The reader sleeps; the writer laps it three times over; the recorder keeps up.
    for (int i = 0; i < 6; ++i) {
        ring.publish(40);
        recorder.catch_up();
    }
    const Read read = read_through(*reader, 250);
    EXPECT_EQ(read.seqnos, one_to(250));
    EXPECT_TRUE(read.gaps.empty());
    EXPECT_EQ(reader->counters().lost, 0u);
    EXPECT_EQ(reader->counters().events, 250u);
    // The newest 60 came from the ring; the other 190 from the recording.
    EXPECT_EQ(reader->counters().healed, 250 - kHeld);
}

// A start that the ring has overwritten (a named reader resuming, --from N)
// is read from the recording, not skipped to the oldest.
TEST(Healing, AStartTheRingOverwroteIsReadFromTheRecording) {
    Ring ring;
    Recorder recorder(ring, ring.dir.file("rec.evrec"));
    for (int i = 0; i < 5; ++i) {
        ring.publish(40);
        recorder.catch_up();
    }
    auto reader = open_source(ring.path, heal_from(recorder.path));
    ASSERT_TRUE(reader.ok()) << reader.error().message();
    auto notice = (*reader)->seek(Position::after(10));  // a named reader resuming after seqno 10
    ASSERT_TRUE(notice.ok()) << notice.error().message();
    EXPECT_NE(notice->find("read from the recording"), std::string::npos) << *notice;
    const Read read = read_through(**reader, 200);
    std::vector<std::uint64_t> want;
    for (std::uint64_t s = 11; s <= 200; ++s) want.push_back(s);
    EXPECT_EQ(read.seqnos, want);
    EXPECT_EQ((*reader)->counters().lost, 0u);
    // Without healing the same start skips to the oldest, as before.
    auto plain = open_source(ring.path, {});
    ASSERT_TRUE(plain.ok());
    auto moved = (*plain)->seek(Position::after(10));
    ASSERT_TRUE(moved.ok());
    EXPECT_NE(moved->find("starting at the oldest"), std::string::npos) << *moved;
}

TEST(Healing, BatchesHealToo) {
    Ring ring;
    Recorder recorder(ring, ring.dir.file("rec.evrec"));
    auto reader = open(ring.path, heal_from(recorder.path));
    ASSERT_TRUE(reader);
    for (int i = 0; i < 5; ++i) {
        ring.publish(50);
        recorder.catch_up();
    }
    const Read read = read_through(*reader, 250, true);
    EXPECT_EQ(read.seqnos, one_to(250));
    EXPECT_EQ(reader->counters().lost, 0u);
    EXPECT_EQ(reader->counters().healed, 250 - kHeld);
}

// A seek while a gap is being healed abandons it: the next event is the
// new position's, not the rest of the old gap.
TEST(Healing, ASeekDuringAHealStartsAtTheNewPosition) {
    Ring ring;
    Recorder recorder(ring, ring.dir.file("rec.evrec"));
    auto reader = open(ring.path, heal_from(recorder.path));
    ASSERT_TRUE(reader);
    for (int i = 0; i < 5; ++i) {
        ring.publish(40);
        recorder.catch_up();
    }
    const Read first = read_through(*reader, 3);  // 1..3 from the recording; 4..140 still owed
    ASSERT_EQ(first.seqnos, one_to(3));
    ASSERT_EQ(reader->counters().healed, 3u);
    ASSERT_TRUE(reader->seek(Position::seqno(190)).ok());
    const Read after = read_through(*reader, 200);
    std::vector<std::uint64_t> want;
    for (std::uint64_t s = 190; s <= 200; ++s) want.push_back(s);
    EXPECT_EQ(after.seqnos, want);
    EXPECT_TRUE(after.gaps.empty());
    EXPECT_EQ(reader->counters().healed, 3u);
    // Sought back into what the ring overwrote: healed again from there.
    ring.publish(10);
    recorder.catch_up();
    ASSERT_TRUE(reader->seek(Position::seqno(50)).ok());
    const Read again = read_through(*reader, 210);
    want.clear();
    for (std::uint64_t s = 50; s <= 210; ++s) want.push_back(s);
    EXPECT_EQ(again.seqnos, want);
    EXPECT_EQ(reader->counters().lost, 0u);
}

// A rotated recording (FILE, FILE.1, ...) heals as one: a gap that spans
// its files is read across them, and a seek back lands in an earlier file.
TEST(Healing, ARotatedSeriesHealsAcrossItsFiles) {
    Ring ring;
    Recorder recorder(ring, ring.dir.file("rec.evrec"), std::nullopt, 1024);
    auto reader = open(ring.path, heal_from(recorder.path));
    ASSERT_TRUE(reader);
    for (int i = 0; i < 10; ++i) {
        ring.publish(25);
        recorder.catch_up();
    }
    ASSERT_TRUE(std::filesystem::exists(rotated_path(recorder.path, 3))) << "the recording rotated";
    const Read read = read_through(*reader, 250);
    EXPECT_EQ(read.seqnos, one_to(250));
    EXPECT_TRUE(read.gaps.empty());
    EXPECT_EQ(reader->counters().healed, 250 - kHeld);
    ASSERT_TRUE(reader->seek(Position::seqno(20)).ok());
    const Read again = read_through(*reader, 250);
    std::vector<std::uint64_t> want;
    for (std::uint64_t s = 20; s <= 250; ++s) want.push_back(s);
    EXPECT_EQ(again.seqnos, want);
    EXPECT_EQ(reader->counters().lost, 0u);
}

// The recorder was lapped as well: what it lost is lost, counted exactly,
// and everything it has still comes back.
TEST(Healing, WhatTheRecorderLostStaysLostExactly) {
    Ring ring;
    Recorder recorder(ring, ring.dir.file("rec.evrec"));
    auto reader = open(ring.path, heal_from(recorder.path));
    ASSERT_TRUE(reader);
    ring.publish(30);
    recorder.catch_up();
    ring.publish(100);  // the recorder misses 31..70 (it goes on at 71)
    recorder.catch_up();
    ring.publish(40);
    recorder.catch_up();
    const Read read = read_through(*reader, 170);
    ASSERT_EQ(read.gaps.size(), 1u);
    EXPECT_EQ(read.gaps[0].first_seqno, 31u);
    EXPECT_EQ(read.gaps[0].count, 40u);
    EXPECT_EQ(read.gaps[0].reason, GapReason::FellBehind);
    EXPECT_EQ(reader->counters().lost, 40u);
    EXPECT_EQ(reader->counters().healed, 30u + (170 - kHeld - 70));
    EXPECT_EQ(read.seqnos.size() + 40u, 170u);
    EXPECT_EQ(read.seqnos.front(), 1u);
    EXPECT_EQ(read.seqnos.back(), 170u);
    EXPECT_TRUE(std::is_sorted(read.seqnos.begin(), read.seqnos.end()));
}

TEST(Healing, ARecordingOfAnotherRingInstanceIsRefusedByName) {
    Ring ring;
    Recorder recorder(ring, ring.dir.file("other.evrec"), 0x1234);
    auto reader = open(ring.path, heal_from(recorder.path));
    ASSERT_TRUE(reader);
    ring.publish(100);
    recorder.catch_up();
    const Read read = read_through(*reader, 100);
    ASSERT_EQ(read.gaps.size(), 1u);
    EXPECT_EQ(read.gaps[0].count, 100 - kHeld);
    EXPECT_EQ(reader->counters().healed, 0u);
    ASSERT_EQ(read.notices.size(), 1u);
    EXPECT_NE(read.notices[0].find("other.evrec"), std::string::npos) << read.notices[0];
    EXPECT_NE(read.notices[0].find("ring instance 0000000000001234"), std::string::npos) << read.notices[0];
}

// The recorder stopped (its file has its end record) before the events the
// reader missed: those are a gap that says why.
TEST(Healing, ARecordingThatEndedLeavesTheRestAGap) {
    Ring ring;
    Recorder recorder(ring, ring.dir.file("rec.evrec"));
    auto reader = open(ring.path, heal_from(recorder.path));
    ASSERT_TRUE(reader);
    ring.publish(20);
    recorder.catch_up();
    ASSERT_TRUE(recorder.writer->finish().ok());
    ring.publish(80);  // the reader misses 1..40; the recording has 1..20
    const Read read = read_through(*reader, 100);
    ASSERT_EQ(read.gaps.size(), 1u);
    EXPECT_EQ(read.gaps[0].first_seqno, 21u);
    EXPECT_EQ(read.gaps[0].count, 100 - kHeld - 20);
    EXPECT_EQ(reader->counters().healed, 20u);
    EXPECT_EQ(read.seqnos.size(), 20 + kHeld);
}

// A recording not flushed yet is waited for, up to the patience, then the
// gap stands; the wait is bounded even though the file stays open.
TEST(Healing, ARecordingThatDoesNotCatchUpIsWaitedForBoundedly) {
    Ring ring;
    Recorder recorder(ring, ring.dir.file("rec.evrec"));
    SourceOptions options = heal_from(recorder.path);
    options.heal.patience = std::chrono::milliseconds(200);
    auto reader = open(ring.path, options);
    ASSERT_TRUE(reader);
    ring.publish(100);  // never recorded: the recorder does not read
    const auto start = std::chrono::steady_clock::now();
    const Read read = read_through(*reader, 100);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    ASSERT_EQ(read.gaps.size(), 1u);
    EXPECT_EQ(read.gaps[0].count, 100 - kHeld);
    EXPECT_EQ(reader->counters().lost, 100 - kHeld);
    EXPECT_EQ(read.seqnos.size(), kHeld);
}

TEST(Healing, OnlyLiveRingsAndSetsHeal) {
    Ring ring;
    Recorder recorder(ring, ring.dir.file("rec.evrec"));
    ring.publish(5);
    recorder.catch_up();
    ASSERT_TRUE(recorder.writer->finish().ok());
    auto refused = open_source(recorder.path, heal_from(recorder.path));
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().errno_value(), EINVAL);
    EXPECT_NE(refused.error().message().find("is a recording"), std::string::npos) << refused.error().message();
}

}  // namespace
}  // namespace evring
