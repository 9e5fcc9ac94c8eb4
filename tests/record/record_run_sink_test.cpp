// The recorder's direct path (lib/record/record_run_sink.hpp) through
// record_source, on a live ring in a temporary directory written by this
// process: taken for a plain ring and not with a filter, and recording what
// the general path records, record for record, when the recorder is lapped
// (the exact gap), when payloads were overwritten under it (expired
// records), with --count, a stop seqno and a stop time, the registration's
// position and losses, the stop flag; a payload buffer cut off under it
// ends the recording with the ring source's error.
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "evring/ring/ring_reader.hpp"
#include "evring/schema/schema.hpp"
#include "cursor/named_reader.hpp"
#include "record/record_source.hpp"
#include "recording/recording_reader.hpp"
#include "registry/reader_kinds.hpp"
#include "registry/reader_listing.hpp"
#include "sink/registering_sink.hpp"
#include "support/seqno_ring.hpp"

namespace evring {
namespace {

// A record as the tests compare them: kind, seqno (a gap's first), count
// (a gap's), reason, payload bytes.
struct Seen {
    RecordKind kind;
    std::uint64_t seqno, count;
    GapReason reason;
    std::vector<std::byte> payload;
    bool operator==(const Seen&) const = default;
};

std::vector<Seen> read_back(const std::string& path) {
    auto reader = RecordingReader::open(path);
    EXPECT_TRUE(reader.ok()) << reader.error().message();
    std::vector<Seen> out;
    Record r;
    for (;;) {
        auto status = reader->next(r);
        EXPECT_TRUE(status.ok());
        if (!status.ok() || *status != ReadStatus::Record) break;
        if (r.kind == RecordKind::Event || r.kind == RecordKind::ExpiredPayload)
            out.push_back({r.kind, r.event.seqno, 1, GapReason{}, {r.payload.begin(), r.payload.end()}});
        else if (r.kind == RecordKind::Gap)
            out.push_back({r.kind, r.gap.first_lost_seqno, r.gap.lost_count, r.gap.reason, {}});
    }
    return out;
}

struct Recorder {
    explicit Recorder(const std::string& output) {
        job.output = output;
        job.register_reader = false;
        job.follow.start = Position::oldest();
    }
    Result<Recorded> run(test::SeqnoRing& ring) {
        std::unique_ptr<EventSource> source = ring.open();
        return record_source(source, job);
    }
    RecordJob job;
};

// The general path's twin of a job: a filter that keeps every type the
// rings here hold (2, 3, 4) turns the direct path away.
void keep_general(RecordJob& job) {
    for (int type : {2, 3, 4}) job.follow.filter.types.add(static_cast<std::uint16_t>(type));
}

// A job recorded directly and, with keep_general, event by event: `set`
// configures both jobs alike, `run` records the same ring both ways.
struct BothWays {
    explicit BothWays(test::TempDir& dir) : direct(dir.file("direct.evrec")), general(dir.file("general.evrec")) {
        keep_general(general.job);
    }
    template <class Configure>
    void set(Configure&& configure) {
        configure(direct.job);
        configure(general.job);
    }
    std::pair<Result<Recorded>, Result<Recorded>> run(test::SeqnoRing& ring) {
        auto a = direct.run(ring);
        return {std::move(a), general.run(ring)};
    }
    Recorder direct, general;
};

TEST(RecordRunSink, APlainRingIsRecordedDirectlyAndAFilteredOneIsNot) {
    test::SeqnoRing ring;
    ring.publish(40);
    test::TempDir dir;
    BothWays both(dir);
    both.set([](RecordJob& job) { job.follow.count = 30; });
    auto [a, b] = both.run(ring);
    ASSERT_TRUE(a.ok()) << a.error().message();
    ASSERT_TRUE(b.ok()) << b.error().message();
    EXPECT_TRUE(a->direct);
    EXPECT_FALSE(b->direct);
    EXPECT_EQ(a->follow.end, FollowEnd::Count);
    EXPECT_EQ(a->follow.handed_out, 30u);
    EXPECT_EQ(a->follow.counters.events, b->follow.counters.events) << "reads no further than --count";
    EXPECT_EQ(a->follow.counters.payloads, b->follow.counters.payloads);
    EXPECT_EQ(a->totals.events, 30u);
    const auto recorded = read_back(dir.file("direct.evrec"));
    ASSERT_EQ(recorded.size(), 30u);
    for (std::size_t i = 0; i < recorded.size(); ++i) {
        EXPECT_EQ(recorded[i].seqno, i + 1);
        ASSERT_EQ(recorded[i].payload.size(), 8u);
        std::uint64_t value = 0;
        std::memcpy(&value, recorded[i].payload.data(), 8);
        EXPECT_EQ(value, i + 1) << "the payload travels with its event";
    }
    EXPECT_EQ(recorded, read_back(dir.file("general.evrec")));
}

// The rings here as a schema with a span: type 2 (every third seqno) opens
// "round", labelled by its payload, the seqno.
constexpr std::string_view kRounds = R"(
content_type = 1003
content_name = "t"
flow_tags = ["round"]

[[event]]
number = 2
name = "OPEN"
payload = "round"

[[event]]
number = 3
name = "WORK"

[[event]]
number = 4
name = "CLOSE"

[struct.round]
fields = [{ name = "number", type = "u64" }]

[span.round]
begin = "OPEN"
end = "CLOSE"
key = ["round"]
label = "number"
)";

// A schema with span labels (a Monad ring's case) keeps the direct path:
// only the opening events go through the sinks for their span marks, and
// the recording and its span index are the general path's.
TEST(RecordRunSink, ARingWithSpanMarksIsRecordedDirectlyWithTheSameSpanIndex) {
    auto schema = Schema::parse(kRounds, "rounds.toml");
    ASSERT_TRUE(schema.ok()) << schema.error().message();
    test::SeqnoRing ring;
    ring.publish(60);
    test::TempDir dir;
    BothWays both(dir);
    both.set([&](RecordJob& job) {
        job.schema = &*schema;
        job.follow.count = 60;
    });
    auto [a, b] = both.run(ring);
    ASSERT_TRUE(a.ok()) << a.error().message();
    ASSERT_TRUE(b.ok()) << b.error().message();
    EXPECT_TRUE(a->direct);
    EXPECT_EQ(a->totals.events, 60u);
    EXPECT_EQ(read_back(dir.file("direct.evrec")), read_back(dir.file("general.evrec")));
    auto x = RecordingReader::open(dir.file("direct.evrec"));
    auto y = RecordingReader::open(dir.file("general.evrec"));
    ASSERT_TRUE(x.ok() && y.ok());
    const std::uint32_t key = span_index_key("round");
    for (std::uint64_t label = 1; label <= 61; ++label) {
        auto p = x->find(IndexQuery::span(key, label));
        auto q = y->find(IndexQuery::span(key, label));
        ASSERT_TRUE(p.ok() && q.ok());
        if (label % 3 == 0 && label <= 60) {
            ASSERT_EQ(p->outcome, IndexOutcome::Found) << "round " << label;
            EXPECT_EQ(p->seqno, label);
        } else {
            EXPECT_NE(p->outcome, IndexOutcome::Found) << "no round " << label;
        }
        EXPECT_EQ(p->outcome, q->outcome) << "round " << label;
        EXPECT_EQ(p->seqno, q->seqno) << "round " << label;
    }
}

// Rotation keeps the direct path: the same files, each holding the same
// records, as the general path writes.
TEST(RecordRunSink, ARotatingRecordingIsRecordedDirectlyIntoTheSameFiles) {
    test::SeqnoRing ring(10);  // 1024 descriptors
    ring.publish(1000);
    test::TempDir dir;
    BothWays both(dir);
    both.set([](RecordJob& job) {
        job.recording.rotate_bytes = 8 << 10;
        job.recording.compress = false;
        job.follow.count = 1000;
    });
    auto [a, b] = both.run(ring);
    ASSERT_TRUE(a.ok()) << a.error().message();
    ASSERT_TRUE(b.ok()) << b.error().message();
    EXPECT_TRUE(a->direct);
    EXPECT_EQ(a->totals.events, 1000u);
    EXPECT_GT(a->totals.files, 5u);
    EXPECT_EQ(a->totals.files, b->totals.files);
    for (std::uint32_t i = 0; i < a->totals.files; ++i)
        EXPECT_EQ(read_back(rotated_path(dir.file("direct.evrec"), i)), read_back(rotated_path(dir.file("general.evrec"), i)))
            << "file " << i;
}

// A named recorder keeps the direct path: its position moves with every
// stretch (CommitSink::taken), so what it commits is the last event
// recorded, and a second run resumes after it.
TEST(RecordRunSink, ANamedRecorderIsRecordedDirectlyAndResumesAfterWhatItRecorded) {
    test::SeqnoRing ring;
    ring.publish(40);
    test::TempDir dir;
    ASSERT_EQ(::setenv("EVRING_STATE_DIR", dir.file("state").c_str(), 1), 0);
    auto run = [&](const std::string& output, std::uint64_t count) -> std::uint64_t {
        auto named = NamedReader::open("direct-recorder");
        EXPECT_TRUE(named.ok()) << named.error().message();
        std::unique_ptr<EventSource> source = ring.open();
        std::vector<std::string> notices;
        auto start = (*named)->resume(*source, Position::oldest(), false, false, notices);
        EXPECT_TRUE(start.ok()) << start.error().message();
        Recorder r(output);
        r.job.named = named->get();
        r.job.follow.start = *start;
        r.job.follow.count = count;
        auto recorded = record_source(source, r.job);
        EXPECT_TRUE(recorded.ok()) << recorded.error().message();
        EXPECT_TRUE(recorded->direct);
        return (*named)->last_committed();
    };
    EXPECT_EQ(run(dir.file("first.evrec"), 25), 25u);
    EXPECT_EQ(run(dir.file("second.evrec"), 10), 35u);
    const auto second = read_back(dir.file("second.evrec"));
    ASSERT_EQ(second.size(), 10u);
    EXPECT_EQ(second.front().seqno, 26u) << "resumed after the first run's last event";
    ::unsetenv("EVRING_STATE_DIR");
}

TEST(RecordRunSink, StopsAtTheStopSeqnoAsTheGeneralPathDoes) {
    test::SeqnoRing ring;
    ring.publish(50);
    test::TempDir dir;
    BothWays both(dir);
    both.set([](RecordJob& job) {
        job.follow.start = Position::seqno(7);
        job.follow.stop = Position::seqno(20);
    });
    auto [a, b] = both.run(ring);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_TRUE(a->direct);
    EXPECT_EQ(a->follow.end, FollowEnd::Stop);
    EXPECT_EQ(a->follow.why, b->follow.why);
    EXPECT_EQ(a->totals.events, 14u);
    EXPECT_EQ(a->follow.counters.events, b->follow.counters.events);
    EXPECT_EQ(read_back(dir.file("direct.evrec")), read_back(dir.file("general.evrec")));
}

TEST(RecordRunSink, StopsAtAStopTimeAsTheGeneralPathDoes) {
    test::SeqnoRing ring;
    ring.publish(50, 1000);  // event N stamped 1000 + 10 * N
    test::TempDir dir;
    BothWays both(dir);
    both.set([](RecordJob& job) { job.follow.stop = Position(Position::Kind::AbsoluteTime, 1155); });
    auto [a, b] = both.run(ring);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_TRUE(a->direct);
    EXPECT_EQ(a->follow.end, FollowEnd::Stop);
    EXPECT_EQ(a->totals.events, 15u) << "events 1..15; 16 is past the time";
    EXPECT_EQ(a->follow.counters.events, b->follow.counters.events);
    EXPECT_EQ(read_back(dir.file("direct.evrec")), read_back(dir.file("general.evrec")));
}

// The stop flag (Ctrl-C), set once the recorder is positioned: seen before
// the first run is read.
TEST(RecordRunSink, TheStopFlagEndsItAsInterrupted) {
    test::SeqnoRing ring;
    ring.publish(20);
    test::TempDir dir;
    Recorder r(dir.file("direct.evrec"));
    std::atomic<bool> stop{false};
    r.job.follow.stop_flag = &stop;
    r.job.report = [&](std::string_view) { stop = true; };
    auto recorded = r.run(ring);
    ASSERT_TRUE(recorded.ok()) << recorded.error().message();
    EXPECT_TRUE(recorded->direct);
    EXPECT_EQ(recorded->follow.end, FollowEnd::Stopped);
    EXPECT_EQ(record_end(*recorded), RecordEnd::Stopped);
    EXPECT_EQ(recorded->totals.events, 0u);
}

// Lapped: the writer goes round the ring (64 descriptors) once the recorder
// is positioned (its first report line) and before it reads.
TEST(RecordRunSink, ALappedRecorderRecordsTheExactGap) {
    test::TempDir dir;
    std::vector<std::vector<Seen>> runs;
    for (bool filtered : {false, true}) {
        test::SeqnoRing ring;
        ring.publish(10);
        Recorder r(dir.file(filtered ? "general.evrec" : "direct.evrec"));
        if (filtered) keep_general(r.job);
        r.job.follow.start = Position::seqno(5);
        r.job.follow.count = 20;
        bool lapped = false;
        r.job.report = [&](std::string_view) {
            if (!std::exchange(lapped, true)) ring.publish(200);
        };
        auto recorded = r.run(ring);
        ASSERT_TRUE(recorded.ok()) << recorded.error().message();
        EXPECT_EQ(recorded->direct, !filtered);
        EXPECT_EQ(recorded->totals.gaps, 1u);
        EXPECT_EQ(recorded->totals.events, 20u);
        runs.push_back(read_back(r.job.output));
    }
    const std::vector<Seen>& direct = runs[0];
    ASSERT_EQ(direct.size(), 21u);
    EXPECT_EQ(direct[0].kind, RecordKind::Gap);
    EXPECT_EQ(direct[0].seqno, 5u);
    EXPECT_EQ(direct[0].reason, GapReason::FellBehind);
    EXPECT_EQ(direct[1].seqno, direct[0].seqno + direct[0].count) << "the gap ends where the events resume";
    EXPECT_EQ(direct, runs[1]);
}

// Registered and lapped: the registry lists the recorder where it stands
// once caught up, with what it lost, and it published as it went (every
// 1024 events, ReaderRegistration::on_event) as often as the general path.
TEST(RecordRunSink, TheRegistrationShowsThePositionAndTheLossesAsTheGeneralPath) {
    test::TempDir dir;
    std::vector<ReaderEntry> listed;
    for (bool filtered : {false, true}) {
        test::SeqnoRing ring(12);  // 4096 descriptors
        ring.publish(10);
        Recorder r(dir.file(filtered ? "general.evrec" : "direct.evrec"));
        if (filtered) keep_general(r.job);
        r.job.register_reader = true;
        r.job.follow.start = Position::seqno(5);
        bool lapped = false;
        r.job.report = [&](std::string_view) {
            if (!std::exchange(lapped, true)) ring.publish(5000);
        };
        // Asked when idle, every 50 ms at most: caught up, after idle() published.
        r.job.keep_going = [&] {
            auto reader = RingReader::open(ring.path);
            EXPECT_TRUE(reader.ok());
            auto listing = list_readers(*reader);
            EXPECT_TRUE(listing.ok());
            if (listing.ok() && listing->readers.size() == 1) listed.push_back(listing->readers[0]);
            return false;
        };
        auto recorded = r.run(ring);
        ASSERT_TRUE(recorded.ok()) << recorded.error().message();
        EXPECT_EQ(recorded->direct, !filtered);
        EXPECT_TRUE(recorded->stopped);
        ASSERT_EQ(listed.size(), filtered ? 2u : 1u);
        EXPECT_EQ(listed.back().next_seqno, 5011u);
        EXPECT_EQ(listed.back().lost_reported, recorded->totals.lost);
        EXPECT_GT(recorded->totals.lost, 0u);
    }
    EXPECT_EQ(listed[0].updates, listed[1].updates);
    EXPECT_GE(listed[0].updates, 4u) << "published as it read, not only when idle";
}

// A binding's reader handle recording (evring_source_record, Reader.record)
// keeps the direct path: its own registration is the one whose position
// moves, as on the general path, listed as the recorder while it records and
// as before after.
TEST(RecordRunSink, ABindingsOwnRegistrationIsPublishedOnTheDirectPath) {
    struct Pass final : FollowSink {
        bool event(const SourceEvent&) override { return true; }
    } pass;
    test::TempDir dir;
    std::vector<ReaderEntry> after;
    for (bool filtered : {false, true}) {
        test::SeqnoRing ring(12);  // 4096 descriptors; payloads of 64 KiB hold 1024 of them
        ring.publish(1000);
        std::unique_ptr<EventSource> source = ring.open();
        RegisteringSink handle(pass, {"handle", reader_kinds::kPython, ""});
        handle.started(*source);
        ASSERT_TRUE(handle.registered());
        Recorder r(dir.file(filtered ? "general.evrec" : "direct.evrec"));
        if (filtered) keep_general(r.job);
        r.job.registration = &handle;
        r.job.follow.count = 1000;
        std::vector<ReaderEntry> during;
        r.job.report = [&](std::string_view) {
            auto reader = RingReader::open(ring.path);
            auto listing = list_readers(*reader);
            if (listing.ok()) during = listing->readers;
        };
        auto recorded = record_source(source, r.job);
        ASSERT_TRUE(recorded.ok()) << recorded.error().message();
        EXPECT_EQ(recorded->direct, !filtered);
        EXPECT_EQ(recorded->totals.events, 1000u);
        ASSERT_EQ(during.size(), 1u) << "the handle's registration, no second one";
        EXPECT_EQ(during[0].kind, reader_kinds::kRecord);
        auto reader = RingReader::open(ring.path);
        auto listing = list_readers(*reader);
        ASSERT_TRUE(listing.ok());
        ASSERT_EQ(listing->readers.size(), 1u);
        EXPECT_EQ(listing->readers[0].kind, reader_kinds::kPython);
        after.push_back(listing->readers[0]);
    }
    EXPECT_GT(after[0].updates, 1u) << "published as it recorded";
    EXPECT_EQ(after[0].next_seqno, after[1].next_seqno);
    EXPECT_EQ(after[0].updates, after[1].updates);
}

// Payloads overwritten while their descriptors stay: two 40000-byte events
// push the payload window (64 KiB) past events 1..11. Each is copied and then
// found overwritten (payload.hpp's check after the copy): expired records.
TEST(RecordRunSink, OverwrittenPayloadsAreRecordedExpired) {
    test::TempDir dir;
    std::vector<std::vector<Seen>> runs;
    for (bool filtered : {false, true}) {
        test::SeqnoRing ring(10);
        ring.publish(10);
        {
            Publisher publisher(ring.writer->ring());
            for (int i = 0; i < 2; ++i) {
                Reservation big = publisher.reserve(40000);
                ASSERT_TRUE(big);
                std::memset(big.payload(), 0x5a, 40000);
                big.descriptor().event_type = 3;
                publisher.commit(big);
            }
        }
        Recorder r(dir.file(filtered ? "general.evrec" : "direct.evrec"));
        if (filtered) keep_general(r.job);
        r.job.follow.count = 12;
        auto recorded = r.run(ring);
        ASSERT_TRUE(recorded.ok()) << recorded.error().message();
        EXPECT_EQ(recorded->direct, !filtered);
        EXPECT_EQ(recorded->totals.expired, 11u);
        EXPECT_EQ(recorded->totals.events, 1u);
        runs.push_back(read_back(r.job.output));
    }
    ASSERT_EQ(runs[0].size(), 12u);
    for (std::size_t i = 0; i < 11; ++i) EXPECT_EQ(runs[0][i].kind, RecordKind::ExpiredPayload) << i;
    EXPECT_EQ(runs[0][11].kind, RecordKind::Event);
    EXPECT_EQ(runs[0][11].payload, std::vector<std::byte>(40000, std::byte{0x5a}));
    EXPECT_EQ(runs[0], runs[1]);
}

// The payload buffer cut off once the recorder is positioned: descriptors
// stay readable, the copy of the first payload faults under the direct
// path's guard, and the recording ends with the ring source's error.
TEST(RecordRunSink, PayloadsCutOffUnderTheRecorderAreAnError) {
    test::SeqnoRing ring;
    ring.publish(10);
    test::TempDir dir;
    Recorder r(dir.file("direct.evrec"));
    bool cut = false;
    r.job.report = [&](std::string_view) {
        if (std::exchange(cut, true)) return;
        const std::uint64_t payload_offset =
            RingLayout::of(ring.writer->ring().header().size).payload_offset;
        ASSERT_EQ(::truncate(ring.path.c_str(), static_cast<off_t>(payload_offset)), 0);
    };
    auto recorded = r.run(ring);
    ASSERT_FALSE(recorded.ok());
    EXPECT_NE(recorded.error().message().find("copying a payload"), std::string::npos) << recorded.error().message();
    EXPECT_NE(recorded.error().message().find(ring.path), std::string::npos) << recorded.error().message();
}

}  // namespace
}  // namespace evring
