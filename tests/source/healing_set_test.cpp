// Healing a ring set (lib/source/healer.hpp): each member's lapped gap, and
// a named reader's resume the members overwrote, read from the set's
// recording; and a recording still being written, sought to any seqno (what
// a healer does with a recorder that runs).
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "recording/recording_writer.hpp"
#include "source/healer.hpp"
#include "source/recording_source.hpp"
#include "source/ring_source.hpp"
#include "support/healing.hpp"
#include "support/ring_sets.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::copy_what_is_there;
using test::kHeld;
using test::one_to;

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
