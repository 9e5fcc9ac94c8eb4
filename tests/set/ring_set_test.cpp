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
#include "registry/registering_sink.hpp"
#include "evring/ring/ring_reader.hpp"
#include "evring/set/ring_set.hpp"
#include "set/ring_set_manifest.hpp"
#include "set/ring_set_source.hpp"
#include "evring/source/source_open.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::TempDir;

struct SetFixture : ::testing::Test {
    TempDir dir;
    std::uint64_t fake_now = 1'000'000'000;

    SetCreateOptions options(bool keep = false) const {
        SetCreateOptions o;
        o.keep_on_close = keep;
        o.directory.read_environment = false;
        o.directory.ring_dir_override = dir.path();
        o.directory.print_warning = false;
        return o;
    }
    RingSetSpec spec(std::uint32_t max_members = 4, unsigned descriptor_shift = 8) const {
        RingConfig config;
        config.name_or_path = "set";
        config.descriptor_shift = descriptor_shift;
        config.payload_buf_shift = 16;
        return RingSetSpec(config, test::test_content(), max_members);
    }
    RingSetWriter writer(bool keep = false, std::uint32_t max_members = 4, unsigned descriptor_shift = 8) {
        auto w = RingSetWriter::create(spec(max_members, descriptor_shift), options(keep));
        EXPECT_TRUE(w.ok()) << w.error().message();
        return std::move(w).value();
    }
    std::unique_ptr<RingSetSource> open(std::chrono::nanoseconds stall = std::chrono::milliseconds(100)) {
        RingSetSourceOptions o;
        o.stall_bound = stall;
        o.monotonic_nanos = [this] { return fake_now; };
        auto source = RingSetSource::open(dir.file("set"), "set", o);
        EXPECT_TRUE(source.ok()) << source.error().message();
        return std::move(source).value();
    }
};

Publisher& publisher_of(RingSetWriter& w) {
    auto p = w.publisher();
    EXPECT_TRUE(p.ok()) << p.error().message();
    return **p;
}

// Publishes one event stamped `nanos` (tests choose the time).
void publish_at(Publisher& p, std::uint64_t nanos, std::uint16_t type = 7) {
    auto r = p.reserve(8);
    ASSERT_TRUE(r);
    r.descriptor().event_type = type;
    r.descriptor().record_epoch_nanos = nanos;
    std::memcpy(r.payload(), &nanos, 8);
    p.commit(r);
}

struct Seen {
    std::uint32_t member;
    std::uint64_t nanos;
    std::uint64_t seqno;
    bool operator==(const Seen&) const = default;
};

// Reads until NotReady or End; gaps and notices are skipped.
std::vector<Seen> drain(EventSource& source, SourceStep* last = nullptr) {
    std::vector<Seen> out;
    SourceItem item;
    for (;;) {
        const SourceStep step = source.next(item, PayloadRead::Copy);
        if (step == SourceStep::Event)
            out.push_back({item.event.member, item.event.descriptor.record_epoch_nanos, item.event.descriptor.seqno});
        else if (step == SourceStep::Gap || step == SourceStep::Notice)
            continue;
        else {
            if (last) *last = step;
            return out;
        }
    }
}

TEST_F(SetFixture, EachWriterObjectGivesTheThreadItsOwnMemberOnTheClaimedPath) {
    auto a = writer();
    auto b = writer();
    Publisher& pa = publisher_of(a);
    Publisher& pb = publisher_of(b);
    EXPECT_NE(&pa.ring(), &pb.ring());
    EXPECT_EQ(&pa, &publisher_of(a));  // the same publisher on later calls
    EXPECT_TRUE(pa.holds_claim());
    EXPECT_TRUE(pb.holds_claim());
    auto manifest = read_set_manifest(dir.file("set"));
    ASSERT_TRUE(manifest.ok()) << manifest.error().message();
    ASSERT_EQ(manifest->members.size(), 2u);
    EXPECT_EQ(manifest->members[0].name, "m0");
    EXPECT_EQ(manifest->members[1].name, "m1");
    EXPECT_TRUE(a.created());
    EXPECT_FALSE(b.created());
}

TEST_F(SetFixture, MergesInterleavedMembersByTime) {
    auto a = writer();
    auto b = writer();
    Publisher& pa = publisher_of(a);
    Publisher& pb = publisher_of(b);
    for (std::uint64_t t : {10, 30, 50}) publish_at(pa, t);
    for (std::uint64_t t : {20, 40, 60}) publish_at(pb, t);
    auto source = open();
    ASSERT_TRUE(source->seek(Position::oldest()).ok());
    const std::vector<Seen> want{{0, 10, 1}, {1, 20, 1}, {0, 30, 2}, {1, 40, 2}, {0, 50, 3}, {1, 60, 3}};
    EXPECT_EQ(drain(*source), want);
    EXPECT_EQ(source->late_events(), 0u);
}

TEST_F(SetFixture, TiesGoToTheLowerMemberThenToSequenceOrder) {
    auto a = writer();
    auto b = writer();
    Publisher& pa = publisher_of(a);
    Publisher& pb = publisher_of(b);
    publish_at(pb, 100);
    publish_at(pb, 100);
    publish_at(pa, 100);
    auto source = open();
    ASSERT_TRUE(source->seek(Position::oldest()).ok());
    const std::vector<Seen> want{{0, 100, 1}, {1, 100, 1}, {1, 100, 2}};
    EXPECT_EQ(drain(*source), want);
}

TEST_F(SetFixture, AnIdleMemberNeverStallsTheMerge) {
    auto a = writer();
    auto b = writer();
    Publisher& pa = publisher_of(a);
    (void)publisher_of(b);  // member 1 exists, never writes
    publish_at(pa, 5);
    publish_at(pa, 6);
    auto source = open();
    ASSERT_TRUE(source->seek(Position::oldest()).ok());
    SourceStep last{};
    EXPECT_EQ(drain(*source, &last).size(), 2u);
    EXPECT_EQ(last, SourceStep::NotReady);
}

TEST_F(SetFixture, AStuckMemberStallsAtMostTheBoundAndItsLateEventIsDeliveredAndCounted) {
    auto a = writer();
    auto b = writer();
    Publisher& pa = publisher_of(a);
    Publisher& pb = publisher_of(b);
    auto stuck = pb.reserve(8);  // member 1: reserved, not committed
    ASSERT_TRUE(stuck);
    publish_at(pa, 200);
    auto source = open(std::chrono::milliseconds(100));
    ASSERT_TRUE(source->seek(Position::oldest()).ok());
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
    auto a = writer();
    Publisher& pa = publisher_of(a);
    publish_at(pa, 50);
    publish_at(pa, 40);
    publish_at(pa, 60);
    auto source = open();
    ASSERT_TRUE(source->seek(Position::oldest()).ok());
    const std::vector<Seen> want{{0, 50, 1}, {0, 40, 2}, {0, 60, 3}};
    EXPECT_EQ(drain(*source), want);
    EXPECT_EQ(source->late_events(), 1u);
}

TEST_F(SetFixture, GapsArePerMemberAndExact) {
    auto a = writer(false, 4, 6);  // 64 descriptors per member
    auto b = writer(false, 4, 6);
    Publisher& pa = publisher_of(a);
    Publisher& pb = publisher_of(b);
    publish_at(pa, 1);
    publish_at(pb, 2);
    auto source = open();
    ASSERT_TRUE(source->seek(Position::oldest()).ok());
    EXPECT_EQ(drain(*source).size(), 2u);
    for (std::uint64_t t = 10; t < 210; ++t) publish_at(pb, t);  // laps member 1's reader
    SourceItem item;
    std::uint64_t events = 0, lost = 0;
    for (;;) {
        const SourceStep step = source->next(item);
        if (step == SourceStep::Event) {
            EXPECT_EQ(item.event.member, 1u);
            ++events;
        } else if (step == SourceStep::Gap) {
            EXPECT_EQ(item.gap.member, 1u);
            EXPECT_EQ(item.gap.reason, GapReason::FellBehind);
            lost += item.gap.count;
        } else if (step != SourceStep::Notice) {
            break;
        }
    }
    EXPECT_EQ(events + lost, 200u);
    EXPECT_GT(lost, 0u);
    EXPECT_EQ(source->member_counters(1).lost, lost);
    EXPECT_EQ(source->member_counters(0).lost, 0u);
    EXPECT_EQ(source->counters().lost, lost);
}

TEST_F(SetFixture, BackNStartsAtTheNNewestEventsOfTheSet) {
    auto a = writer();
    auto b = writer();
    Publisher& pa = publisher_of(a);
    Publisher& pb = publisher_of(b);
    for (std::uint64_t t : {1, 3, 5, 7}) publish_at(pa, t);
    for (std::uint64_t t : {2, 4, 6, 8}) publish_at(pb, t);
    auto source = open();
    ASSERT_TRUE(source->seek(Position{Position::Kind::Back, 3}).ok());
    const std::vector<Seen> want{{1, 6, 3}, {0, 7, 4}, {1, 8, 4}};
    EXPECT_EQ(drain(*source), want);
}

TEST_F(SetFixture, MemberSeqnoStartsThereAndTheOthersAtItsTime) {
    auto a = writer();
    auto b = writer();
    Publisher& pa = publisher_of(a);
    Publisher& pb = publisher_of(b);
    for (std::uint64_t t : {1, 3, 5, 7}) publish_at(pa, t);
    for (std::uint64_t t : {2, 4, 6, 8}) publish_at(pb, t);
    auto source = open();
    ASSERT_TRUE(source->seek_member(1, 2).ok());  // member 1's seqno 2: time 4
    const std::vector<Seen> want{{1, 4, 2}, {0, 5, 3}, {1, 6, 3}, {0, 7, 4}, {1, 8, 4}};
    EXPECT_EQ(drain(*source), want);
    EXPECT_FALSE(source->seek(Position::seqno(2)).ok());  // a plain seqno names no member
}

TEST_F(SetFixture, AMemberJoiningWhileFollowingIsReadFromItsOldest) {
    auto a = writer();
    Publisher& pa = publisher_of(a);
    publish_at(pa, 1);
    auto source = open();
    ASSERT_TRUE(source->seek(Position::oldest()).ok());
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
    ASSERT_TRUE(source->seek(Position::oldest()).ok());
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
    auto a = writer();
    auto b = writer();
    publish_at(publisher_of(a), 1);
    publish_at(publisher_of(b), 2);
    auto source = open();
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
        auto a = writer(true);
        auto b = writer(true);
        auto c = writer(true);
        publish_at(publisher_of(a), 1);
        publish_at(publisher_of(b), 2);
        publish_at(publisher_of(c), 3);
    }
    ASSERT_EQ(::unlink(dir.file("set/m1").c_str()), 0);                 // missing
    std::ofstream(dir.file("set/m2"), std::ios::trunc) << "not a ring";  // foreign
    auto source = open();
    ASSERT_TRUE(source->seek(Position::oldest()).ok());
    SourceItem item;
    std::vector<std::string> notices;
    std::uint64_t events = 0;
    for (;;) {
        const SourceStep step = source->next(item);
        if (step == SourceStep::Notice) notices.emplace_back(item.notice);
        else if (step == SourceStep::Event) ++events;
        else if (step != SourceStep::Gap) break;
    }
    EXPECT_EQ(events, 1u);
    ASSERT_EQ(notices.size(), 2u);
    EXPECT_NE(notices[0].find("set/m1"), std::string::npos) << notices[0];
    EXPECT_NE(notices[1].find("set/m2"), std::string::npos) << notices[1];
}

TEST_F(SetFixture, AMemberOfAnotherSchemaIsSkipped) {
    {
        auto a = writer(true);
        auto b = writer(true);
        publish_at(publisher_of(a), 1);
        publish_at(publisher_of(b), 2);
    }
    // m1 replaced by a ring of another schema hash.
    ASSERT_EQ(::unlink(dir.file("set/m1").c_str()), 0);
    RingParams params = test::small_params();
    params.content.schema_hash[0] ^= 0xff;
    ::close(test::create_ring_file(dir.file("set/m1"), params));
    auto source = open();
    ASSERT_TRUE(source->seek(Position::oldest()).ok());
    SourceItem item;
    std::string notice;
    std::uint64_t events = 0;
    for (SourceStep step; (step = source->next(item)) != SourceStep::End && step != SourceStep::NotReady;) {
        if (step == SourceStep::Notice) notice = item.notice;
        if (step == SourceStep::Event) ++events;
    }
    EXPECT_EQ(events, 1u);
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
    auto source = open();
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
