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
#include "support/ring_sets.hpp"
#include "support/seqno_ring.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::TempDir;

// A lapped reader of this 64-slot ring goes on 4 slots past the oldest
// (iterator_inline.hpp: capacity / 16 of slack), so the ring gives it the
// newest 60 events; the rest of what it missed is the gap.
constexpr std::uint64_t kHeld = 60;

// A 64-descriptor ring whose events carry their own seqno as payload.
using Ring = test::SeqnoRing;

std::unique_ptr<EventSource> open(const std::string& location, const SourceOptions& options = {}) {
    auto source = open_source(location, options);
    EXPECT_TRUE(source.ok()) << source.error().message();
    if (!source) return nullptr;
    EXPECT_TRUE((*source)->seek(Position::oldest()).ok());
    return std::move(source).value();
}

// What `evring record` does with each item, until `source` has nothing more
// now: events (a ring set's member in the descriptor's reserved field) and gaps.
void copy_what_is_there(EventSource& source, RecordingWriter& writer) {
    SourceItem item;
    for (;;) {
        const SourceStep step = source.next(item, PayloadRead::Copy);
        if (step == SourceStep::Event) {
            EventDescriptor d = item.event.descriptor;
            d.reserved = static_cast<std::uint16_t>(item.event.member);
            const bool intact = item.event.payload_state == PayloadState::Ok;
            std::byte* dst = writer.begin_event(d);
            if (intact) std::memcpy(dst, item.event.payload.data(), item.event.payload.size());
            ASSERT_TRUE(writer.end_event(intact).ok());
        } else if (step == SourceStep::Gap) {
            ASSERT_TRUE(writer.append_gap(item.gap.first_seqno, item.gap.count, item.gap.reason, item.gap.member).ok());
        } else if (step != SourceStep::Notice) {
            return;
        }
    }
}

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

std::vector<std::uint64_t> one_to(std::uint64_t n) {
    std::vector<std::uint64_t> all;
    for (std::uint64_t s = 1; s <= n; ++s) all.push_back(s);
    return all;
}

SourceOptions heal_from(const std::string& recording) {
    SourceOptions options;
    options.heal.recording = recording;
    options.heal.patience = std::chrono::seconds(5);
    return options;
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

// A ring set, healed member by member: each member's lapped gap is read
// from the set's recording (MEMBER:SEQNO through its index), only that
// member's events, and the merge goes on.
struct SetHealing : test::SetFixture {
    // `evring record SET` in miniature (members in every record).
    struct SetRecorder {
        SetRecorder(SetHealing& f, const std::string& out) : path(out), source(f.open_at(Position::oldest())) {
            RecordingOptions options;
            options.ring_set = true;
            options.origin_instance = source->identity().instance;
            auto made = RecordingWriter::create(path, source->member_ring(0)->header(), options);
            if (!made) ADD_FAILURE() << made.error().message();
            writer.emplace(std::move(made).value());
        }
        void catch_up(SetHealing& f) {
            for (int round = 0; round < 3; ++round, f.fake_now += 10'000'000'000)  // stall bounds pass
                copy_what_is_there(*source, *writer);
            ASSERT_TRUE(writer->flush().ok());
        }
        std::string path;
        std::unique_ptr<RingSetSource> source;
        std::optional<RecordingWriter> writer;
    };
    // 200 events to each of two members, interleaved, recorded as they go.
    void publish_interleaved(Members& members, SetRecorder& recorder) {
        std::uint64_t nanos = 1'000'000;
        for (int chunk = 0; chunk < 10; ++chunk) {
            for (int i = 0; i < 20; ++i) {
                test::publish_at(members[0], nanos++);
                test::publish_at(members[1], nanos++);
            }
            recorder.catch_up(*this);
        }
    }
    // Reads until `total` (member, seqno) are accounted for, or 10 s pass:
    // each member's seqnos in `seen`, what was lost counted.
    struct ByMember {
        std::vector<std::vector<std::uint64_t>> seen = std::vector<std::vector<std::uint64_t>>(2);
        std::uint64_t lost = 0;
    };
    ByMember read_by_member(RingSetSource& reader, std::uint64_t total) {
        ByMember read;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (read.seen[0].size() + read.seen[1].size() + read.lost < total &&
               std::chrono::steady_clock::now() < deadline) {
            const test::Drained got = test::drain_all(reader);
            for (const test::Got& g : got.items) {
                if (g.step == SourceStep::Event) read.seen.at(g.member).push_back(g.seqno);
                if (g.step == SourceStep::Gap) read.lost += g.count;
            }
            EXPECT_NE(got.last, SourceStep::Failed) << reader.error().message();
            if (got.last == SourceStep::Failed) break;
            fake_now += 10'000'000'000;
            if (got.last == SourceStep::NotReady) reader.wait(std::chrono::milliseconds(10));
        }
        return read;
    }
};

TEST_F(SetHealing, EachMembersLappedGapIsHealedFromTheSetsRecording) {
    auto members = this->members(2, true, 4, 6);  // 64 slots each
    SetRecorder recorder(*this, dir.file("set.evrec"));
    auto reader = open_at(Position::oldest());
    reader->heal_with(std::make_unique<detail::Healer>(
        detail::HealSettings{recorder.path, false, std::chrono::seconds(5)}, *reader));
    publish_interleaved(members, recorder);  // the reader sleeps: lapped
    // Every (member, seqno) once: 200 of each, none lost.
    const ByMember read = read_by_member(*reader, 400);
    EXPECT_EQ(read.lost, 0u);
    for (std::uint32_t m = 0; m < 2; ++m) EXPECT_EQ(read.seen[m], one_to(200)) << "member " << m;
    EXPECT_EQ(reader->counters().lost, 0u);
    EXPECT_EQ(reader->counters().healed, 2 * (200 - kHeld));
}

// A named set reader resuming after a long stop (Position::after_members):
// each member's start the ring overwrote is read from the set's recording.
TEST_F(SetHealing, AResumeTheMembersOverwroteIsReadFromTheRecording) {
    auto members = this->members(2, true, 4, 6);  // 64 slots each
    SetRecorder recorder(*this, dir.file("set.evrec"));
    publish_interleaved(members, recorder);
    auto reader = open_at(Position::oldest());
    reader->heal_with(std::make_unique<detail::Healer>(
        detail::HealSettings{recorder.path, false, std::chrono::seconds(5)}, *reader));
    const std::vector<Position::MemberAfter> after{{10, reader->member_source(0)->identity().instance},
                                                   {20, reader->member_source(1)->identity().instance}};
    auto notice = reader->seek(Position::after_members(after));
    ASSERT_TRUE(notice.ok()) << notice.error().message();
    EXPECT_NE(notice->find("read from the recording"), std::string::npos) << *notice;
    const ByMember read = read_by_member(*reader, 370);
    EXPECT_EQ(read.lost, 0u);
    std::vector<std::uint64_t> want0, want1;
    for (std::uint64_t s = 11; s <= 200; ++s) want0.push_back(s);
    for (std::uint64_t s = 21; s <= 200; ++s) want1.push_back(s);
    EXPECT_EQ(read.seen[0], want0);
    EXPECT_EQ(read.seen[1], want1);
    EXPECT_EQ(reader->counters().healed, (200 - kHeld - 10) + (200 - kHeld - 20));
}

}  // namespace
}  // namespace evring

namespace evring {
namespace {

// A recording still being written, read as it grows (follow), sought to
// every seqno of its first blocks: the first event handed out is that seqno.
TEST(HealingRecording, AFollowedRecordingSoughtToASeqnoStartsThere) {
    test::TempDir dir;
    const std::string path = dir.file("grow.evrec");
    RecordingOptions options;
    RingHeader header{};
    auto writer = RecordingWriter::create(path, header, options);
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    std::uint64_t seqno = 1;
    auto block = [&](std::uint64_t n) {
        for (std::uint64_t i = 0; i < n; ++i, ++seqno) {
            EventDescriptor d{};
            d.seqno = seqno;
            d.payload_size = 8;
            d.record_epoch_nanos = 1000 + seqno;
            std::memcpy(writer->begin_event(d), &seqno, 8);
            ASSERT_TRUE(writer->end_event(true).ok());
        }
        ASSERT_TRUE(writer->flush().ok());
    };
    block(64);
    block(128);
    for (int i = 0; i < 70; ++i) block(100);  // index blocks come every 64 blocks
    const std::uint64_t last = seqno - 1;
    // The worker writes blocks on its own thread: wait until the last is in the file.
    auto whole = [&] {
        auto source = RecordingSource::open(path, path, true, true);
        EXPECT_TRUE(source.ok());
        SourceItem item;
        std::uint64_t newest = 0;
        for (int n = 0; n < 100000; ++n) {
            const SourceStep step = (*source)->next(item);
            if (step == SourceStep::Event) newest = item.event.descriptor.seqno;
            if (step == SourceStep::NotReady || step == SourceStep::End) break;
        }
        return newest == last;
    };
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!whole() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    for (std::uint64_t want : std::vector<std::uint64_t>{1, 2, 64, 65, 100, 192, 193, 500, 6400, last}) {
        auto source = RecordingSource::open(path, path, true, true);
        ASSERT_TRUE(source.ok());
        ASSERT_TRUE((*source)->seek(Position::seqno(want)).ok());
        SourceItem item;
        SourceStep step;
        while ((step = (*source)->next(item)) == SourceStep::Notice) {
        }
        ASSERT_EQ(step, SourceStep::Event) << "seek to " << want;
        EXPECT_EQ(item.event.descriptor.seqno, want);
    }
}

}  // namespace
}  // namespace evring
