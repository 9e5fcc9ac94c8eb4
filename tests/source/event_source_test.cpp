// Event sources over rings and snapshots (event_source.hpp, ring_source.hpp)
// and the position parser (position.hpp): every sequence number accounted
// for with its reason, counters equal to the Iterator's, positions, batches,
// a truncated file as an error. Processes stand in for writers that exit.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evring/source/event_source.hpp"
#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_reader.hpp"
#include "source/ring_source.hpp"
#include "source/source_renamed.hpp"
#include "evring/ring/ring_writer.hpp"
#include "evring/source/source_open.hpp"
#include "support/seqno_ring.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::TempDir;

// --- Identity --------------------------------------------------------------

// A source's identity is the file its reader opened. A writer re-creating the
// ring at the name between the reader's open and the source's used to give
// the source the new file's identity while it read the old one, so a
// follower of the name (top, watch) stayed on the dead ring for good.
TEST(RingSourceIdentity, IsTheOpenedFileNotTheOneNowAtTheName) {
    TempDir dir;
    const std::string path = dir.file("ring");
    const auto inode_at = [&] {
        struct stat st {};
        EXPECT_EQ(::stat(path.c_str(), &st), 0);
        return static_cast<std::uint64_t>(st.st_ino);
    };
    std::optional<RingReader> reader;
    std::uint64_t old_inode = 0;
    {
        CreateOptions keep;
        keep.keep_on_close = true;
        auto first = RingWriter::create(test::small_spec(path), keep);
        ASSERT_TRUE(first.ok()) << first.error().message();
        auto opened = RingReader::open(path);
        ASSERT_TRUE(opened.ok()) << opened.error().message();
        reader.emplace(std::move(opened).value());
        old_inode = inode_at();
    }  // the writer exits and leaves its ring at the name
    auto second = RingWriter::create(test::small_spec(path), CreateOptions{});
    ASSERT_TRUE(second.ok()) << second.error().message();
    ASSERT_NE(inode_at(), old_inode) << "the second writer re-created the ring";

    auto source = RingSource::open_live(std::move(*reader), path);
    ASSERT_TRUE(source.ok()) << source.error().message();
    EXPECT_EQ((*source)->identity().inode, old_inode);
    auto moved = reopen_if_renamed((*source)->identity(), {});
    ASSERT_TRUE(moved.ok()) << moved.error().message();
    EXPECT_NE(moved->get(), nullptr) << "a follower of the name moves to the new ring";
}

// --- Positions -------------------------------------------------------------

TEST(ParsePosition, AcceptsEveryDocumentedForm) {
    EXPECT_EQ(parse_start("latest")->kind, Position::Kind::Latest);
    EXPECT_EQ(parse_start("oldest")->kind, Position::Kind::Oldest);
    EXPECT_EQ(parse_start("12345")->value, 12345u);
    EXPECT_EQ(parse_start("-10")->kind, Position::Kind::Back);
    EXPECT_EQ(parse_start("-250ms")->value, 250'000'000u);
    EXPECT_EQ(parse_start("-3m")->value, 180'000'000'000u);
    EXPECT_EQ(parse_start("2026-11-22T01:45:00.5Z")->value, 1795311900'500000000u);
    EXPECT_EQ(parse_start("2024-02-29T00:00:00Z")->value, 1709164800'000000000u);  // a leap day
    EXPECT_EQ(parse_start("@1795311900.5")->value, 1795311900'500000000u);
    EXPECT_EQ(parse_start("@1795311900.000000001")->value, 1795311900'000000001u);
    EXPECT_EQ(parse_stop("-5s")->kind, Position::Kind::RelativeTime);
}

TEST(ParsePosition, RefusesWhatDoesNotExistNamingOptionAndValue) {
    for (const char* bad : {"", "yesterday", "-", "-0", "-5parsecs", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z",
                            "2025-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "1969-12-31T23:59:59Z",
                            "2026-11-22T24:00:00Z", "2026-11-22T01:45:00.1234567891Z", "@abc",
                            "@99999999999999999999", "12x", "4611686018427387905", "99999999999999999999",
                            "-99999999999999999999", "-99999999999999999h"}) {
        auto parsed = parse_start(bad, "--from");
        ASSERT_FALSE(parsed.ok()) << bad;
        EXPECT_EQ(parsed.error().message().rfind(std::string("bad --from '") + bad + "': ", 0), 0u)
            << parsed.error().message();
    }
    EXPECT_NE(parse_start("2026-02-30T00:00:00Z").error().message().find("28 days"), std::string::npos);
    EXPECT_FALSE(parse_stop("-5").ok());
    EXPECT_FALSE(parse_stop("latest").ok());
}

// --- A ring in a temporary directory, written by this process or a child ---

using Ring = test::SeqnoRing;  // support/seqno_ring.hpp

std::vector<std::uint64_t> drain_seqnos(EventSource& source, std::vector<SourceGap>* gaps = nullptr) {
    std::vector<std::uint64_t> seqnos;
    SourceItem item;
    for (int guard = 0; guard < 100000; ++guard) {
        const SourceStep step = source.next(item, PayloadRead::Copy);
        if (step == SourceStep::Event) {
            std::uint64_t value = 0;
            if (item.event.payload_state == PayloadState::Ok) std::memcpy(&value, item.event.payload.data(), 8);
            EXPECT_EQ(value, item.event.descriptor.seqno) << "the payload travels with its event";
            seqnos.push_back(item.event.descriptor.seqno);
        } else if (step == SourceStep::Gap) {
            if (gaps) gaps->push_back(item.gap);
        } else if (step != SourceStep::Notice) {
            break;
        }
    }
    return seqnos;
}

TEST(RingSource, LappedReaderCountsExactlyWhatTheIteratorCounts) {
    Ring ring(6);  // 64 descriptors
    ring.publish(10);
    auto source = ring.open();
    ASSERT_TRUE(source->seek(Position::oldest()).ok());
    Iterator mirror(ring.writer->ring());
    mirror.seek(1);
    ring.publish(200);  // both readers are lapped the same way
    std::uint64_t mirror_gaps = 0;
    EventDescriptor d;
    for (NextResult r; (r = mirror.try_next(d)) != NextResult::NotReady;) mirror_gaps += r == NextResult::Gap;
    std::vector<SourceGap> gaps;
    const auto seqnos = drain_seqnos(*source, &gaps);
    EXPECT_EQ(source->counters().lost, mirror.total_lost());
    EXPECT_EQ(source->counters().gaps, mirror_gaps);
    EXPECT_EQ(source->counters().events, seqnos.size());
    ASSERT_FALSE(gaps.empty());
    EXPECT_EQ(gaps[0].first_seqno, 1u);
    EXPECT_EQ(gaps[0].reason, GapReason::FellBehind);
    // Every sequence number is an event or inside a gap, exactly once.
    EXPECT_EQ(seqnos.size() + source->counters().lost, 210u);
    EXPECT_EQ(seqnos.back(), 210u);
}

TEST(RingSource, HolesInARingNobodyWritesAreOneNeverCommittedGapThenTheEnd) {
    Ring ring(6);
    ring.publish(5);
    {
        Publisher publisher(ring.writer->ring());
        Reservation a = publisher.reserve(8), b = publisher.reserve(8), c = publisher.reserve(8);  // 6, 7, 8: never committed
        (void)a;
        (void)b;
        (void)c;
    }
    ring.publish(2);  // 9, 10
    ring.writer.reset();  // the writer is gone (the file stays)
    auto source = ring.open();
    EXPECT_FALSE(source->live());
    ASSERT_TRUE(source->seek(Position::oldest()).ok());
    std::vector<SourceGap> gaps;
    EXPECT_EQ(drain_seqnos(*source, &gaps), (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 9, 10}));
    ASSERT_EQ(gaps.size(), 1u);
    EXPECT_EQ(gaps[0].first_seqno, 6u);
    EXPECT_EQ(gaps[0].count, 3u);
    EXPECT_EQ(gaps[0].reason, GapReason::NeverCommitted);
    EXPECT_EQ(source->counters().never_committed, 3u);
    SourceItem item;
    EXPECT_EQ(source->next(item), SourceStep::End);
    EXPECT_EQ(source->next(item), SourceStep::End);
    EXPECT_EQ(source->end_text(), "end of the ring");
}

TEST(RingSource, WriterThatExitsIsNoticedAndItsHolesAreWriterGone) {
    TempDir dir;
    const std::string path = dir.file("ring");
    int ready[2], go[2];
    ASSERT_EQ(::pipe(ready), 0);
    ASSERT_EQ(::pipe(go), 0);
    const pid_t child = ::fork();
    if (child == 0) {
        CreateOptions options;
        options.keep_on_close = true;
        auto writer = RingWriter::create(test::small_spec(path, 6, 16), options);
        if (!writer) ::_exit(1);
        Publisher publisher(writer->ring());
        for (int i = 0; i < 4; ++i) publisher.commit(publisher.reserve(8));
        Reservation held = publisher.reserve(8);  // seqno 5, never committed
        (void)held;
        char c = 1;
        if (::write(ready[1], &c, 1) != 1 || ::read(go[0], &c, 1) != 1) ::_exit(2);
        ::_exit(0);  // exits holding seqno 5
    }
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    auto reader = RingReader::open(path);
    ASSERT_TRUE(reader.ok()) << reader.error().message();
    auto source = RingSource::open_live(std::move(reader).value(), path);
    ASSERT_TRUE(source.ok());
    RingSource& s = **source;
    EXPECT_TRUE(s.live());
    ASSERT_TRUE(s.seek(Position::oldest()).ok());
    SourceItem item;
    for (std::uint64_t want = 1; want <= 4; ++want) {
        ASSERT_EQ(s.next(item), SourceStep::Event);
        EXPECT_EQ(item.event.descriptor.seqno, want);
    }
    EXPECT_EQ(s.next(item), SourceStep::NotReady);
    ASSERT_EQ(::write(go[1], &c, 1), 1);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    SourceStep step = SourceStep::NotReady;
    for (int i = 0; i < 100 && step == SourceStep::NotReady; ++i) {
        step = s.next(item);
        if (step == SourceStep::NotReady) s.wait(std::chrono::milliseconds(50));
    }
    ASSERT_EQ(step, SourceStep::Notice);
    EXPECT_NE(std::string(item.notice).find("the writer exited"), std::string::npos) << item.notice;
    EXPECT_FALSE(s.live());
    ASSERT_EQ(s.next(item), SourceStep::Gap);
    EXPECT_EQ(item.gap.first_seqno, 5u);
    EXPECT_EQ(item.gap.count, 1u);
    EXPECT_EQ(item.gap.reason, GapReason::WriterGone);
    EXPECT_EQ(s.next(item), SourceStep::End);
}

// --- Positions resolved over a ring -----------------------------------------

TEST(RingSource, StartPositions) {
    Ring ring(6);
    ring.publish(100);  // 37..100 still in the ring
    ring.writer.reset();
    auto source = ring.open();
    SourceItem item;
    ASSERT_TRUE(source->seek(Position::latest()).ok());
    EXPECT_EQ(source->next_seqno(), 100u);
    ASSERT_TRUE(source->seek({Position::Kind::Back, 5}).ok());
    EXPECT_EQ(source->next_seqno(), 96u);
    ASSERT_TRUE(source->seek({Position::Kind::Back, 1000}).ok());
    EXPECT_EQ(source->next_seqno(), 37u);
    auto moved = source->seek(Position::seqno(3));
    ASSERT_TRUE(moved.ok());
    EXPECT_NE(moved->find("no longer in ring file"), std::string::npos) << *moved;
    EXPECT_EQ(source->next_seqno(), 37u);
    auto beyond = source->seek(Position::seqno(101));
    ASSERT_FALSE(beyond.ok());
    EXPECT_NE(beyond.error().message().find("beyond the newest event (100)"), std::string::npos);
}

TEST(RingSource, TimeSearchFindsTheFirstEventAtOrAfterAndStepsBackOverDisorder) {
    Ring ring(8);
    Publisher publisher(ring.writer->ring());
    // Two writers' worth of disorder: seqno 3 was stamped at 100, after 4..6.
    for (std::uint64_t stamp : {10, 20, 100, 40, 50, 60, 70, 110, 120}) {
        Reservation r = publisher.reserve(8);
        r.descriptor().record_epoch_nanos = stamp;  // test-only: overwrite the stamp before publishing
        publisher.commit(r);
    }
    auto source = ring.open();
    EXPECT_EQ(source->seek_time(0).value(), 1u);
    EXPECT_EQ(source->seek_time(11).value(), 2u);
    EXPECT_EQ(source->seek_time(65).value(), 3u);  // 3 (stamped 100) comes before 7 (stamped 70)
    EXPECT_EQ(source->seek_time(105).value(), 8u);
    EXPECT_EQ(source->seek_time(121).value(), 10u);  // none yet: the next one to be written
}

TEST(RingSource, TimeSearchStepsOverHoles) {
    Ring ring(8);
    Publisher publisher(ring.writer->ring());
    std::vector<Reservation> stalled;
    for (std::uint64_t i = 1; i <= 200; ++i) {
        Reservation r = publisher.reserve(8);
        r.descriptor().record_epoch_nanos = i * 10;
        if (i >= 90 && i <= 130) {
            stalled.push_back(r);  // never committed: a hole around the middle
            continue;
        }
        publisher.commit(r);
    }
    auto source = ring.open();
    EXPECT_EQ(source->seek_time(1500).value(), 150u);
    EXPECT_EQ(source->seek_time(1000).value(), 131u);
    EXPECT_EQ(source->seek_time(500).value(), 50u);
}

// --- Batches ---------------------------------------------------------------

TEST(RingSource, BatchesHandOutTheSameDescriptorsAndCounts) {
    Ring ring(6);
    ring.publish(300);
    ring.writer.reset();
    auto batched = ring.open();
    auto single = ring.open();
    ASSERT_TRUE(batched->seek(Position::seqno(250)).ok());
    ASSERT_TRUE(single->seek(Position::seqno(250)).ok());
    std::vector<EventDescriptor> out(16);
    std::vector<std::uint64_t> from_batches;
    for (int i = 0; i < 100; ++i) {
        const Batch b = batched->next_batch(out);
        for (std::size_t k = 0; k < b.events; ++k) from_batches.push_back(out[k].seqno);
        if (b.stopped == SourceStep::End) break;
    }
    EXPECT_EQ(from_batches, drain_seqnos(*single));
    EXPECT_EQ(batched->counters().events, 51u);
    EXPECT_EQ(single->counters().events, 51u);
}

// --- A truncated file ------------------------------------------------------

TEST(RingSource, RingFileTruncatedUnderTheReaderIsAnErrorNotASignal) {
    Ring ring(6);
    ring.publish(10);
    auto source = ring.open();
    ASSERT_TRUE(source->seek(Position::oldest()).ok());
    ASSERT_EQ(::truncate(ring.path.c_str(), 0), 0);
    SourceItem item;
    ASSERT_EQ(source->next(item), SourceStep::Failed);
    EXPECT_NE(source->error().message().find(ring.path), std::string::npos) << source->error().message();
    EXPECT_NE(source->error().message().find("truncated"), std::string::npos) << source->error().message();
    EXPECT_EQ(source->next(item), SourceStep::Failed);
}

// The payload buffer cut off while descriptors stay readable: the payload's
// copy faults. Once the scratch buffer has grown, payloads are copied under
// the descriptor's guard (ring_source.cpp, read): the error still says it
// was copying a payload.
TEST(RingSource, PayloadsCutOffUnderTheReaderAreAnErrorNamingThePayload) {
    Ring ring(6);
    ring.publish(10);
    auto source = ring.open();
    ASSERT_TRUE(source->seek(Position::oldest()).ok());
    SourceItem item;
    ASSERT_EQ(source->next(item, PayloadRead::Copy), SourceStep::Event);
    ASSERT_EQ(item.event.payload_state, PayloadState::Ok);
    const std::uint64_t payload_offset = RingLayout::of(source->identity().ring_size).payload_offset;
    ASSERT_EQ(::truncate(ring.path.c_str(), static_cast<off_t>(payload_offset)), 0);
    ASSERT_EQ(source->next(item, PayloadRead::Copy), SourceStep::Failed);
    EXPECT_NE(source->error().message().find("copying a payload"), std::string::npos) << source->error().message();
    EXPECT_NE(source->error().message().find(ring.path), std::string::npos) << source->error().message();
}

// --- Opening ---------------------------------------------------------------

TEST(OpenSource, SchemesAreOpenedByTheirRegisteredOpenerAndUnknownOnesNamed) {
    auto unknown = open_source("nosuch://host/x", {});
    ASSERT_FALSE(unknown.ok());
    EXPECT_NE(unknown.error().message().find("no 'nosuch://' sources"), std::string::npos)
        << unknown.error().message();
    std::string seen;
    register_source_scheme("test", [&seen](std::string_view location, const SourceOptions&)
                                       -> Result<std::unique_ptr<EventSource>> {
        seen = std::string(location);
        return Error(ENOENT, "the test opener was called");
    });
    auto opened = open_source("test://somewhere/STREAM", {});
    ASSERT_FALSE(opened.ok());
    EXPECT_EQ(seen, "test://somewhere/STREAM");
    EXPECT_EQ(location_scheme("./a://b"), "");
    EXPECT_EQ(location_scheme("nats://h:4222/S"), "nats");
}

TEST(OpenSource, RingNameSnapshotAndIdentity) {
    Ring ring(6);
    ring.publish(20);
    auto source = open_source(ring.path, {});
    ASSERT_TRUE(source.ok()) << source.error().message();
    const SourceIdentity& id = (*source)->identity();
    EXPECT_EQ(id.kind, SourceKind::Ring);
    EXPECT_EQ(id.ring_size.descriptor_capacity, 64u);
    EXPECT_NE(id.instance, 0u);
    EXPECT_NE((*source)->ring(), nullptr);
    auto again = open_source(ring.path, {});
    EXPECT_EQ((*again)->identity().instance, id.instance) << "the same ring, the same instance";
}

}  // namespace
}  // namespace evring
