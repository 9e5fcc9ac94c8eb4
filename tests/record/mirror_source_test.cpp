// The mirror pipeline (lib/record/mirror_source.hpp) on a live ring in a
// temporary directory: every kept event in the new ring with its type,
// time, tags and payload, numbered by the mirror from 1, the seqno tag, the
// "mirror seqno M = source seqno S" lines at each change of the offset, the
// source's content in the mirror ring, and an event too large refused.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "record/mirror_source.hpp"
#include "support/seqno_ring.hpp"

namespace evring {
namespace {

struct Mirror {
    explicit Mirror(const test::TempDir& dir) {
        job.ring.name_or_path = dir.file("copy");
        job.keep = true;  // read it back after the pipeline closed it
        job.register_reader = false;
        job.report = [this](std::string_view line) { lines.emplace_back(line); };
    }
    Result<Mirrored> run(test::SeqnoRing& from) {
        std::unique_ptr<EventSource> source = from.open();
        return mirror_source(source, job);
    }
    MirrorJob job;
    std::vector<std::string> lines;
};

// The mirror ring's descriptors from seqno 1, with each event's payload value.
std::vector<std::pair<EventDescriptor, std::uint64_t>> read_back(const std::string& path) {
    MappedRing ring = test::map_path(path, Access::ReadOnly);
    Iterator it(ring);
    it.seek(1);
    std::vector<std::pair<EventDescriptor, std::uint64_t>> out;
    EventDescriptor d;
    while (it.try_next(d) == NextResult::Success) {
        std::uint64_t value = 0;
        if (d.payload_size == 8) std::memcpy(&value, peek_payload(ring, d), 8);
        out.emplace_back(d, value);
    }
    return out;
}

TEST(MirrorSource, NumbersFromOneAndSaysWhereTheSourceStarts) {
    test::SeqnoRing from;
    from.publish(10, 1000);
    test::TempDir dir;
    Mirror mirror(dir);
    mirror.job.follow.start = Position::seqno(4);
    mirror.job.follow.count = 5;
    mirror.job.seqno_tag = 2;
    auto mirrored = mirror.run(from);
    ASSERT_TRUE(mirrored.ok()) << mirrored.error().message();
    EXPECT_EQ(mirrored->events, 5u);
    EXPECT_EQ(mirrored->ring_path, dir.file("copy"));
    ASSERT_EQ(mirror.lines.size(), 2u);
    EXPECT_EQ(mirror.lines[0], "mirroring " + from.path + " into ring file " + dir.file("copy"));
    EXPECT_EQ(mirror.lines[1], "mirror seqno 1 = source seqno 4");
    const auto events = read_back(dir.file("copy"));
    ASSERT_EQ(events.size(), 5u);
    for (std::size_t i = 0; i < events.size(); ++i) {
        const auto& [d, value] = events[i];
        const std::uint64_t source_seqno = 4 + i;
        EXPECT_EQ(d.seqno, i + 1);
        EXPECT_EQ(value, source_seqno) << "the payload travels with its event";
        EXPECT_EQ(d.event_type, 2 + source_seqno % 3);
        EXPECT_EQ(d.record_epoch_nanos, 1000 + source_seqno * 10);
        EXPECT_EQ(d.content_ext[2], source_seqno);
    }
}

TEST(MirrorSource, KeepsTheSourcesContentAndQuietWithoutReport) {
    test::SeqnoRing from;
    from.publish(3);
    test::TempDir dir;
    Mirror mirror(dir);
    mirror.job.report = {};
    mirror.job.follow.start = Position::oldest();
    mirror.job.follow.count = 3;
    auto mirrored = mirror.run(from);
    ASSERT_TRUE(mirrored.ok()) << mirrored.error().message();
    EXPECT_EQ(mirrored->events, 3u);
    EXPECT_TRUE(mirror.lines.empty());
    MappedRing ring = test::map_path(dir.file("copy"), Access::ReadOnly);
    const RingContent want = test::test_content();
    EXPECT_EQ(ring.header().content_type, want.content_type);
    EXPECT_EQ(ring.header().schema_hash, want.schema_hash);
}

TEST(MirrorSource, RefusesAnEventTooLargeForTheRing) {
    test::SeqnoRing from;  // 64 KiB of payload buffer
    {
        Publisher publisher(from.writer->ring());
        Reservation r = publisher.reserve(6000);
        ASSERT_TRUE(r);
        publisher.commit(r);
    }
    test::TempDir dir;
    Mirror mirror(dir);
    mirror.job.follow.start = Position::oldest();
    mirror.job.follow.count = 1;
    mirror.job.sizes_given = true;
    mirror.job.ring.descriptor_shift = kMinDescriptorShift;
    mirror.job.ring.payload_buf_shift = kMinPayloadBufShift;  // 4 KiB
    auto mirrored = mirror.run(from);
    ASSERT_FALSE(mirrored.ok());
    EXPECT_EQ(mirrored.error().errno_value(), EFBIG) << mirrored.error().message();
    EXPECT_NE(mirrored.error().message().find("source seqno 1: a 6000-byte payload does not fit the mirror ring"),
              std::string::npos)
        << mirrored.error().message();
}

}  // namespace
}  // namespace evring
