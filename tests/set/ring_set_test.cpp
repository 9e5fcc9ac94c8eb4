// Ring sets (ring_set.hpp, ring_set_source.hpp, ring_set_manifest.hpp):
// the merge rule deterministically on one thread (each RingSetWriter object
// gives the calling thread one member, so one thread can write several
// members in a chosen order, with chosen timestamps), the manifest's checks,
// and members coming and going.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <optional>
#include <thread>

#include <gtest/gtest.h>

#include "registry/reader_listing.hpp"
#include "registry/reader_kinds.hpp"
#include "sink/registering_sink.hpp"
#include "evring/ring/ring_reader.hpp"
#include "evring/set/ring_set.hpp"
#include "set/ring_set_manifest.hpp"
#include "source/ring_set_source.hpp"
#include "evring/source/source_open.hpp"
#include "support/ring_sets.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::TempDir;

using test::drain;
using test::drain_all;
using test::publish_at;
using test::publisher_of;
using test::Seen;

struct SetFixture : test::SetFixture {
    // The merged reader, at `start`; it waits for a stuck member up to `stall`.
    std::unique_ptr<RingSetSource> open(const Position& start = Position::oldest(),
                                        std::chrono::nanoseconds stall = std::chrono::milliseconds(100)) {
        RingSetSourceOptions o;
        o.stall_bound = stall;
        return open_at(start, o);
    }
};

TEST_F(SetFixture, EachWriterObjectGivesTheThreadItsOwnMemberOnTheClaimedPath) {
    auto set = members(2);
    RingSetWriter& a = set.writers[0];
    RingSetWriter& b = set.writers[1];
    EXPECT_NE(&set[0].ring(), &set[1].ring());
    EXPECT_EQ(&set[0], &publisher_of(a));  // the same publisher on later calls
    EXPECT_TRUE(set[0].holds_claim());
    EXPECT_TRUE(set[1].holds_claim());
    auto manifest = read_set_manifest(dir.file("set"));
    ASSERT_TRUE(manifest.ok()) << manifest.error().message();
    ASSERT_EQ(manifest->members.size(), 2u);
    EXPECT_EQ(manifest->members[0].name, "m0");
    EXPECT_EQ(manifest->members[1].name, "m1");
    EXPECT_TRUE(a.created());
    EXPECT_FALSE(b.created());
}

TEST_F(SetFixture, MergesInterleavedMembersByTime) {
    auto set = members(2);
    for (std::uint64_t t : {10, 30, 50}) publish_at(set[0], t);
    for (std::uint64_t t : {20, 40, 60}) publish_at(set[1], t);
    auto source = open();
    const std::vector<Seen> want{{0, 10, 1}, {1, 20, 1}, {0, 30, 2}, {1, 40, 2}, {0, 50, 3}, {1, 60, 3}};
    EXPECT_EQ(drain(*source), want);
    EXPECT_EQ(source->late_events(), 0u);
}

TEST_F(SetFixture, TiesGoToTheLowerMemberThenToSequenceOrder) {
    auto set = members(2);
    publish_at(set[1], 100);
    publish_at(set[1], 100);
    publish_at(set[0], 100);
    auto source = open();
    const std::vector<Seen> want{{0, 100, 1}, {1, 100, 1}, {1, 100, 2}};
    EXPECT_EQ(drain(*source), want);
}

TEST_F(SetFixture, AnIdleMemberNeverStallsTheMerge) {
    auto set = members(2);  // member 1 exists, never writes
    publish_at(set[0], 5);
    publish_at(set[0], 6);
    auto source = open();
    SourceStep last{};
    EXPECT_EQ(drain(*source, &last).size(), 2u);
    EXPECT_EQ(last, SourceStep::NotReady);
}

TEST_F(SetFixture, AStuckMemberStallsAtMostTheBoundAndItsLateEventIsDeliveredAndCounted) {
    auto set = members(2);
    Publisher& pb = set[1];
    auto stuck = pb.reserve(8);  // member 1: reserved, not committed
    ASSERT_TRUE(stuck);
    publish_at(set[0], 200);
    auto source = open(Position::oldest(), std::chrono::milliseconds(100));
    SourceStep last{};
    EXPECT_TRUE(drain(*source, &last).empty());  // held back: member 1 may still produce an earlier event
    EXPECT_EQ(last, SourceStep::NotReady);
    fake_now += 99'000'000;
    EXPECT_TRUE(drain(*source).empty());
    fake_now += 1'000'000;  // the bound has passed
    EXPECT_EQ(drain(*source), (std::vector<Seen>{{0, 200, 1}}));
    stuck.descriptor().record_epoch_nanos = 100;  // earlier than what was released
    pb.commit(stuck);
    EXPECT_EQ(drain(*source), (std::vector<Seen>{{1, 100, 1}}));
    EXPECT_EQ(source->late_events(), 1u);
}

TEST_F(SetFixture, AMemberWhoseClockGoesBackwardsKeepsItsOrderAndIsCountedLate) {
    auto set = members(1);
    for (std::uint64_t t : {50, 40, 60}) publish_at(set[0], t);
    auto source = open();
    const std::vector<Seen> want{{0, 50, 1}, {0, 40, 2}, {0, 60, 3}};
    EXPECT_EQ(drain(*source), want);
    EXPECT_EQ(source->late_events(), 1u);
}

TEST_F(SetFixture, GapsArePerMemberAndExact) {
    auto set = members(2, false, 4, 6);  // 64 descriptors per member
    publish_at(set[0], 1);
    publish_at(set[1], 2);
    auto source = open();
    EXPECT_EQ(drain(*source).size(), 2u);
    for (std::uint64_t t = 10; t < 210; ++t) publish_at(set[1], t);  // laps member 1's reader
    const auto got = drain_all(*source);
    for (const auto& e : got.events()) EXPECT_EQ(e.member, 1u);
    for (const auto& g : got.gaps()) {
        EXPECT_EQ(g.member, 1u);
        EXPECT_EQ(g.reason, GapReason::FellBehind);
    }
    const std::uint64_t lost = got.lost();
    EXPECT_EQ(got.events().size() + lost, 200u);
    EXPECT_GT(lost, 0u);
    EXPECT_EQ(source->member_counters(1).lost, lost);
    EXPECT_EQ(source->member_counters(0).lost, 0u);
    EXPECT_EQ(source->counters().lost, lost);
}

TEST_F(SetFixture, BackNStartsAtTheNNewestEventsOfTheSet) {
    auto set = members(2);
    for (std::uint64_t t : {1, 3, 5, 7}) publish_at(set[0], t);
    for (std::uint64_t t : {2, 4, 6, 8}) publish_at(set[1], t);
    auto source = open(Position{Position::Kind::Back, 3});
    const std::vector<Seen> want{{1, 6, 3}, {0, 7, 4}, {1, 8, 4}};
    EXPECT_EQ(drain(*source), want);
}

TEST_F(SetFixture, MemberSeqnoStartsThereAndTheOthersAtItsTime) {
    auto set = members(2);
    for (std::uint64_t t : {1, 3, 5, 7}) publish_at(set[0], t);
    for (std::uint64_t t : {2, 4, 6, 8}) publish_at(set[1], t);
    auto source = open(Position::member_seqno(1, 2));  // member 1's seqno 2: time 4
    const std::vector<Seen> want{{1, 4, 2}, {0, 5, 3}, {1, 6, 3}, {0, 7, 4}, {1, 8, 4}};
    EXPECT_EQ(drain(*source), want);
    EXPECT_FALSE(source->seek(Position::seqno(2)).ok());  // a plain seqno names no member
}

TEST_F(SetFixture, AMemberJoiningWhileFollowingIsReadFromItsOldest) {
    auto a = writer();
    publish_at(publisher_of(a), 1);
    auto source = open();
    EXPECT_EQ(drain(*source).size(), 1u);
    auto b = writer();
    Publisher& pb = publisher_of(b);
    publish_at(pb, 2);
    publish_at(pb, 3);
    std::vector<Seen> got;
    for (int i = 0; i < 200 && got.size() < 2; ++i) {  // the manifest is re-read every 10 ms
        source->wait(std::chrono::milliseconds(20));
        for (const auto& s : drain(*source)) got.push_back(s);
    }
    EXPECT_EQ(got, (std::vector<Seen>{{1, 2, 1}, {1, 3, 2}}));
}

TEST_F(SetFixture, AThreadsMemberIsReleasedForReuseAtThreadExit) {
    auto w = writer();
    std::uint64_t first_ring = 0, second_ring = 0;
    std::thread([&] {
        Publisher& p = publisher_of(w);
        first_ring = reinterpret_cast<std::uintptr_t>(&p.ring().header());
        publish_at(p, 1);
    }).join();
    std::thread([&] {
        Publisher& p = publisher_of(w);
        second_ring = reinterpret_cast<std::uintptr_t>(&p.ring().header());
        EXPECT_TRUE(p.holds_claim());  // a new publisher claims the member again
        publish_at(p, 2);
    }).join();
    EXPECT_EQ(first_ring, second_ring);
    EXPECT_EQ(w.members_held(), 1u);
}

TEST_F(SetFixture, AFullSetRefusesAnotherMemberByName) {
    auto a = writer(false, 1);
    auto b = writer(false, 1);
    (void)publisher_of(a);
    auto p = b.publisher();
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().errno_value(), ENOSPC);
}

TEST_F(SetFixture, AnotherSpecAgainstALiveSetIsRefusedAndTheLastWriterRemovesTheSet) {
    {
        auto a = writer();
        auto other = RingSetWriter::create(spec(8), options());
        ASSERT_FALSE(other.ok());
        EXPECT_EQ(other.error().errno_value(), EPROTO);
        EXPECT_NE(other.error().message().find("8 members"), std::string::npos) << other.error().message();
        (void)publisher_of(a);
    }
    struct stat st {};
    EXPECT_NE(::stat(dir.file("set").c_str(), &st), 0);  // removed
}

TEST_F(SetFixture, OpenSourceRecognisesASetByNameAndEndsWhenItsWritersAreGone) {
    {
        auto a = writer(true);
        publish_at(publisher_of(a), 9);
    }
    SourceOptions options;
    options.directory = this->options().directory;
    auto source = open_source("set", options);
    ASSERT_TRUE(source.ok()) << source.error().message();
    EXPECT_EQ((*source)->kind(), SourceKind::RingSet);
    EXPECT_TRUE((*source)->identity().members);
    ASSERT_TRUE((*source)->seek(Position::oldest()).ok());
    SourceStep last{};
    EXPECT_EQ(drain(**source, &last).size(), 1u);
    EXPECT_EQ(last, SourceStep::End);
}

TEST_F(SetFixture, ASetHeldByAWriterWithoutAMemberYetHasNotEnded) {
    std::optional<RingSetWriter> a(writer(true));  // holds the set; its thread has taken no member
    auto source = open();
    SourceStep last{};
    EXPECT_TRUE(drain(*source, &last).empty());
    EXPECT_EQ(last, SourceStep::NotReady);
    EXPECT_TRUE(source->live());
    a.reset();  // kept on close: the set stays, nobody holds it
    EXPECT_TRUE(drain(*source, &last).empty());
    EXPECT_EQ(last, SourceStep::End);
    EXPECT_FALSE(source->live());
}

struct NullSink : FollowSink {
    bool event(const SourceEvent&) override { return true; }
};

std::size_t readers_of(const std::string& member_path) {
    auto reader = RingReader::open(member_path);
    EXPECT_TRUE(reader.ok()) << reader.error().message();
    if (!reader) return 0;
    ListingOptions look;
    look.reclaim_dead = false;
    auto listing = list_readers(*reader, look);
    return listing ? listing->readers.size() : 0;
}

TEST_F(SetFixture, AMergedReaderRegistersInEveryMembersRegistryAndInMembersThatJoinLater) {
    auto set = members(2);
    publish_at(set[0], 1);
    publish_at(set[1], 2);
    auto source = open_with({});  // where it starts does not matter
    NullSink inner;
    RegisteringSink sink(inner, {"merged", reader_kinds::kWatch, ""});
    sink.started(*source);
    EXPECT_TRUE(sink.registered());
    EXPECT_EQ(readers_of(dir.file("set/m0")), 1u);
    EXPECT_EQ(readers_of(dir.file("set/m1")), 1u);
    auto c = writer();  // a third member joins
    publish_at(publisher_of(c), 3);
    fake_now += 1'000'000'000;
    SourceItem item;
    for (int i = 0; i < 64 && source->members().size() < 3; ++i) {
        (void)source->next(item);
        source->wait(std::chrono::milliseconds(20));
    }
    ASSERT_EQ(source->members().size(), 3u);
    EXPECT_TRUE(sink.idle());
    EXPECT_EQ(readers_of(dir.file("set/m2")), 1u);
}

// --- Members that lie, are missing or are foreign --------------------------

TEST_F(SetFixture, AMissingOrForeignMemberIsSkippedWithANoticeAndTheOthersAreRead) {
    {
        auto set = members(3, true);
        for (std::uint64_t t : {1, 2, 3}) publish_at(set[t - 1], t);
    }
    ASSERT_EQ(::unlink(dir.file("set/m1").c_str()), 0);                 // missing
    std::ofstream(dir.file("set/m2"), std::ios::trunc) << "not a ring";  // foreign
    auto source = open();
    const auto got = drain_all(*source);
    const auto notices = got.notices();
    EXPECT_EQ(got.events().size(), 1u);
    ASSERT_EQ(notices.size(), 2u);
    EXPECT_NE(notices[0].find("set/m1"), std::string::npos) << notices[0];
    EXPECT_NE(notices[1].find("set/m2"), std::string::npos) << notices[1];
}

TEST_F(SetFixture, AMemberOfAnotherSchemaIsSkipped) {
    {
        auto set = members(2, true);
        publish_at(set[0], 1);
        publish_at(set[1], 2);
    }
    // m1 replaced by a ring of another schema hash.
    ASSERT_EQ(::unlink(dir.file("set/m1").c_str()), 0);
    RingParams params = test::small_params();
    params.content.schema_hash[0] ^= 0xff;
    ::close(test::create_ring_file(dir.file("set/m1"), params));
    auto source = open();
    const auto got = drain_all(*source);
    EXPECT_EQ(got.events().size(), 1u);
    const std::string notice = got.notices().empty() ? "" : got.notices().back();
    EXPECT_NE(notice.find("not of the set's content"), std::string::npos) << notice;
}

std::vector<std::byte> manifest_bytes(std::uint32_t max_members) {
    std::vector<std::byte> bytes(set_schema_offset(max_members));
    SetManifestHeader h{};
    h.magic = kSetMagic;
    h.header_size = kSetHeaderSize;
    h.max_members = max_members;
    h.member_descriptor_shift = 8;
    h.member_payload_buf_shift = 16;
    std::memcpy(bytes.data(), &h, sizeof h);
    return bytes;
}

void put_entry(std::vector<std::byte>& bytes, std::uint32_t slot, std::uint32_t index, std::string_view name,
               std::uint32_t state = 1) {
    SetMemberEntry e{};
    e.state = state;
    e.index = index;
    std::memcpy(e.name.data(), name.data(), std::min(name.size(), e.name.size()));
    std::memcpy(bytes.data() + kSetHeaderSize + slot * kSetMemberEntrySize, &e, sizeof e);
}

TEST(RingSetManifest, AbsurdMemberCountsAndShortFilesAreRefusedWithoutAllocating) {
    auto bytes = manifest_bytes(2);
    reinterpret_cast<SetManifestHeader*>(bytes.data())->max_members = 4'000'000'000u;
    auto r = parse_set_manifest(bytes, "/d");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message().find("max_members 4000000000"), std::string::npos) << r.error().message();
    auto many = manifest_bytes(2);
    reinterpret_cast<SetManifestHeader*>(many.data())->max_members = 1000;  // valid count, too few bytes
    r = parse_set_manifest(many, "/d");
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message().find("need"), std::string::npos) << r.error().message();
    auto schema = manifest_bytes(2);
    reinterpret_cast<SetManifestHeader*>(schema.data())->schema_size = 0xffffffffu;
    EXPECT_FALSE(parse_set_manifest(schema, "/d").ok());
    EXPECT_FALSE(parse_set_manifest(std::span<const std::byte>(bytes.data(), 100), "/d").ok());
    auto magic = manifest_bytes(2);
    magic[0] = std::byte{'X'};
    EXPECT_FALSE(parse_set_manifest(magic, "/d").ok());
}

TEST(RingSetManifest, EntriesThatLieAreSkippedWithAWarningAndTheIntactOnesListed) {
    auto bytes = manifest_bytes(8);
    put_entry(bytes, 0, 0, "m0");
    put_entry(bytes, 1, 1, "../etc");
    put_entry(bytes, 2, 2, "a/b");
    put_entry(bytes, 3, 7, "m3");  // says it is entry 7
    put_entry(bytes, 4, 4, "m4", 9);  // unknown state
    put_entry(bytes, 5, 5, std::string(32, 'x'));  // no NUL
    put_entry(bytes, 6, 6, "..");
    put_entry(bytes, 7, 7, "m7");
    auto r = parse_set_manifest(bytes, "/d");
    ASSERT_TRUE(r.ok()) << r.error().message();
    ASSERT_EQ(r->members.size(), 2u);
    EXPECT_EQ(r->members[0].path, "/d/m0");
    EXPECT_EQ(r->members[1].path, "/d/m7");
    EXPECT_EQ(r->warnings.size(), 6u);
}

TEST_F(SetFixture, AGenerationRunningBackwardsGivesANotice) {
    auto a = writer();
    publish_at(publisher_of(a), 1);
    auto source = open_with({});
    const std::uint64_t lower = 0;  // the writer's member entry made it at least 1
    const int fd = ::open(dir.file("set/manifest").c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, &lower, 8, offsetof(SetManifestHeader, generation)), 8);
    ::close(fd);
    std::string notice;
    SourceItem item;
    for (int i = 0; i < 200 && notice.empty(); ++i) {  // the generation is re-read every 10 ms
        if (source->next(item) == SourceStep::Notice) notice = item.notice;
        else source->wait(std::chrono::milliseconds(1));  // also looks at the manifest
    }
    EXPECT_NE(notice.find("ran backwards"), std::string::npos) << notice;
}

}  // namespace
}  // namespace evring
