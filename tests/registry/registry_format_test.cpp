// The reader registry's pieces, one thread, deterministic: the layout, the
// slot seqlock step by step, text fields, header judgement field by field,
// ring identities, and the slot locks between two open file descriptions.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "registry/registry_file.hpp"
#include "registry/registry_identity.hpp"
#include "registry/registry_locks.hpp"
#include "registry/registry_slot.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

RingIdentity sample_identity() {
    RingIdentity id{};
    id.device = 0x2b;
    id.inode = 1234;
    id.birth_sec = 1700000000;
    id.birth_nsec = 5;
    id.content_type = 1;
    id.size = {256, 65536, 0};
    for (unsigned i = 0; i < 32; ++i) id.schema_hash[i] = static_cast<std::uint8_t>(i);
    return id;
}

TEST(RegistryLayout, SlotsSitOnWholeCacheLinesAfterTheHeader) {
    EXPECT_EQ(registry_slot_offset(0), 256u);
    EXPECT_EQ(registry_slot_offset(3), 256u + 3 * 256u);
    EXPECT_EQ(registry_slot_offset(0) % 64, 0u);
    EXPECT_EQ(alignof(RegistrySlot), 64u);
}

TEST(RegistryLayout, FileSizeIsAWholeNumberOfPages) {
    EXPECT_EQ(registry_file_size(1, 4096), 4096u);
    EXPECT_EQ(registry_file_size(15, 4096), 4096u);
    EXPECT_EQ(registry_file_size(16, 4096), 8192u);
    EXPECT_EQ(registry_file_size(128, 4096), 36864u);
    EXPECT_EQ(registry_file_size(128, 2u << 20), 2u << 20);
    EXPECT_EQ(registry_file_size(kRegistryMaxCapacity, 2u << 20), 2u << 20);
}

TEST(RegistrySeqlock, AStableSlotCopiesConsistently) {
    RegistrySlot slot{};
    const std::uint64_t odd = detail::begin_slot_write(slot);
    detail::store_progress(slot, 10, 1, 2, 99);
    detail::end_slot_write(slot, odd);
    RegistrySlot copy{};
    ASSERT_TRUE(detail::copy_slot(slot, copy));
    EXPECT_EQ(copy.version, 2u);
    EXPECT_EQ(copy.next_seqno, 10u);
    EXPECT_EQ(copy.lost, 1u);
    EXPECT_EQ(copy.abandoned, 2u);
    EXPECT_EQ(copy.heartbeat_ns, 99u);
    EXPECT_EQ(copy.updates, 1u);
}

TEST(RegistrySeqlock, ACopyStartedDuringARewriteIsRefused) {
    RegistrySlot slot{};
    const std::uint64_t odd = detail::begin_slot_write(slot);
    std::uint64_t version = 0;
    EXPECT_FALSE(detail::begin_slot_copy(slot, version));
    RegistrySlot copy{};
    EXPECT_FALSE(detail::copy_slot(slot, copy, 3));
    detail::end_slot_write(slot, odd);
    EXPECT_TRUE(detail::begin_slot_copy(slot, version));
}

TEST(RegistrySeqlock, ARewriteBetweenTheTwoVersionChecksIsDetected) {
    RegistrySlot slot{};
    std::uint64_t version = 0;
    ASSERT_TRUE(detail::begin_slot_copy(slot, version));       // e1
    const std::uint64_t odd = detail::begin_slot_write(slot);  // E1..E4 while the copy runs
    detail::store_progress(slot, 5, 0, 0, 1);
    detail::end_slot_write(slot, odd);
    RegistrySlot copy{};
    EXPECT_FALSE(detail::finish_slot_copy(slot, version, copy));  // e2..e4
    ASSERT_TRUE(detail::begin_slot_copy(slot, version));
    ASSERT_TRUE(detail::finish_slot_copy(slot, version, copy));
    EXPECT_EQ(copy.next_seqno, 5u);
}

TEST(RegistrySeqlock, ANewOwnerContinuesFromAVersionADeadOwnerLeftOdd) {
    RegistrySlot slot{};
    const std::uint64_t dead = detail::begin_slot_write(slot);  // died here: version stays odd
    ASSERT_EQ(dead, 1u);
    const std::uint64_t odd = detail::begin_slot_write(slot);
    EXPECT_EQ(odd, 3u);  // still odd, and larger than anything a copy may have seen
    detail::end_slot_write(slot, odd);
    std::uint64_t version = 0;
    ASSERT_TRUE(detail::begin_slot_copy(slot, version));
    EXPECT_EQ(version, 4u);
}

TEST(RegistryText, IsCutToItsFieldAndSanitised) {
    std::array<std::uint64_t, kReaderNameBytes / 8> words{};
    detail::pack_text(words, std::string("risk\x01"
                                         "engine\xff\n",
                                         13));
    bool terminated = false;
    EXPECT_EQ(detail::unpack_text(words, terminated), "risk?engine??");
    EXPECT_TRUE(terminated);

    const std::string long_name(100, 'x');
    detail::pack_text(words, long_name);
    EXPECT_EQ(detail::unpack_text(words, terminated), std::string(kReaderNameBytes - 1, 'x'));
    EXPECT_TRUE(terminated);
    EXPECT_EQ(detail::sanitise_reader_text(long_name, kReaderNameBytes),
              std::string(kReaderNameBytes - 1, 'x'));
}

TEST(RegistryText, AnEmbeddedNulDoesNotCutTheName) {
    std::array<std::uint64_t, kReaderNameBytes / 8> words{};
    detail::pack_text(words, std::string("a\0b", 3));
    bool terminated = false;
    EXPECT_EQ(detail::unpack_text(words, terminated), "a?b");
}

TEST(RegistryText, AFieldWithoutATerminatorIsReported) {
    std::array<std::uint64_t, kReaderNameBytes / 8> words{};
    words.fill(0x4141414141414141u);
    bool terminated = true;
    EXPECT_EQ(detail::unpack_text(words, terminated), std::string(kReaderNameBytes, 'A'));
    EXPECT_FALSE(terminated);
}

// judge_registry_header: a valid header, then each field broken in turn.
class JudgeHeader : public ::testing::Test {
protected:
    detail::RegistryVerdict judge(const RegistryHeader& h) {
        return detail::judge_registry_header(h, sizeof h, file_size, 4096, ring);
    }
    RingIdentity ring = sample_identity();
    RegistryHeader header = detail::fresh_registry_header(ring, 16, 4096);
    std::uint64_t file_size = registry_file_size(16, 4096);
};

TEST_F(JudgeHeader, AFreshHeaderIsValid) {
    EXPECT_EQ(judge(header).state, RegistryState::Valid) << judge(header).reason;
    EXPECT_EQ(header.file_size, 8192u);
}

TEST_F(JudgeHeader, WrongMagicIsNotARegistry) {
    header.magic[0] = 'R';
    const detail::RegistryVerdict v = judge(header);
    EXPECT_EQ(v.state, RegistryState::NotARegistry);
    EXPECT_NE(v.reason.find("RVRGREGS"), std::string::npos) << v.reason;
}

TEST_F(JudgeHeader, AFileShorterThanTheMagicIsNotARegistry) {
    const detail::RegistryVerdict v = detail::judge_registry_header(header, 3, 3, 4096, ring);
    EXPECT_EQ(v.state, RegistryState::NotARegistry);
    EXPECT_NE(v.reason.find("3 bytes"), std::string::npos) << v.reason;
}

TEST_F(JudgeHeader, ATruncatedHeaderIsDamaged) {
    const detail::RegistryVerdict v = detail::judge_registry_header(header, 100, 100, 4096, ring);
    EXPECT_EQ(v.state, RegistryState::Damaged);
    EXPECT_NE(v.reason.find("truncated"), std::string::npos) << v.reason;
}

TEST_F(JudgeHeader, ANewerVersionIsUnsupportedAndZeroIsDamaged) {
    header.version = 2;
    EXPECT_EQ(judge(header).state, RegistryState::UnsupportedVersion);
    EXPECT_NE(judge(header).reason.find("version 2"), std::string::npos);
    header.version = 0;
    EXPECT_EQ(judge(header).state, RegistryState::Damaged);
}

TEST_F(JudgeHeader, EachLayoutFieldIsChecked) {
    struct Case {
        const char* field;
        void (*breaks)(RegistryHeader&);
    };
    const Case cases[] = {
        {"header_size", [](RegistryHeader& h) { h.header_size = 128; }},
        {"slot_size", [](RegistryHeader& h) { h.slot_size = 64; }},
        {"capacity is 0", [](RegistryHeader& h) { h.capacity = 0; }},
        {"capacity is 4097", [](RegistryHeader& h) { h.capacity = kRegistryMaxCapacity + 1; }},
        {"file_size", [](RegistryHeader& h) { h.file_size = 4096; }},
        {"take", [](RegistryHeader& h) { h.capacity = 40; }},  // file too small for 40 slots
        {"reserved", [](RegistryHeader& h) { h.reserved0[1] = 7; }},
        {"reserved", [](RegistryHeader& h) { h.reserved1[11] = 7; }},
        {"reserved", [](RegistryHeader& h) { h.ring.reserved[0] = 7; }},
    };
    for (const Case& c : cases) {
        RegistryHeader broken = header;
        c.breaks(broken);
        const detail::RegistryVerdict v = judge(broken);
        EXPECT_EQ(v.state, RegistryState::Damaged) << c.field;
        EXPECT_NE(v.reason.find(c.field), std::string::npos) << c.field << ": " << v.reason;
    }
}

TEST_F(JudgeHeader, EachIdentityFieldTellsAnotherRing) {
    struct Case {
        const char* field;
        void (*changes)(RingIdentity&);
    };
    const Case cases[] = {
        {"device", [](RingIdentity& r) { r.device += 1; }},
        {"inode", [](RingIdentity& r) { r.inode += 1; }},
        {"birth time", [](RingIdentity& r) { r.birth_nsec += 1; }},
        {"birth time", [](RingIdentity& r) { r.birth_sec += 1; }},
        {"content type", [](RingIdentity& r) { r.content_type = 7; }},
        {"descriptor capacity", [](RingIdentity& r) { r.size.descriptor_capacity *= 2; }},
        {"payload buffer size", [](RingIdentity& r) { r.size.payload_buf_size *= 2; }},
        {"context area size", [](RingIdentity& r) { r.size.context_area_size = 2u << 20; }},
        {"schema hash", [](RingIdentity& r) { r.schema_hash[31] ^= 1; }},
    };
    for (const Case& c : cases) {
        RingIdentity other = ring;
        c.changes(other);
        const detail::RegistryVerdict v =
            detail::judge_registry_header(header, sizeof header, file_size, 4096, other);
        EXPECT_EQ(v.state, RegistryState::OtherRing) << c.field;
        EXPECT_NE(v.reason.find(c.field), std::string::npos) << c.field << ": " << v.reason;
    }
}

TEST(RingIdentityOf, DiffersBetweenTwoRingsWithTheSameContentAndSizes) {
    test::TempDir dir;
    const int a = test::create_ring_file(dir.file("a"), test::small_params());
    const int b = test::create_ring_file(dir.file("b"), test::small_params());
    RingHeader header{};
    ASSERT_EQ(::pread(a, &header, sizeof header, 0), static_cast<ssize_t>(sizeof header));
    auto id_a = detail::ring_identity_of(a, header);
    auto id_b = detail::ring_identity_of(b, header);
    ASSERT_TRUE(id_a && id_b);
    EXPECT_EQ(detail::identity_mismatch(*id_a, *id_a), "");
    EXPECT_NE(detail::identity_mismatch(*id_a, *id_b), "");
    EXPECT_EQ(id_a->content_type, header.content_type);
    EXPECT_EQ(id_a->size.descriptor_capacity, 256u);
    ::close(a);
    ::close(b);
}

TEST(ProcessIdentity, ParsesTheStartTimeAfterACommandWithSpacesAndParentheses) {
    const std::string stat =
        "42 (a (b) c) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 123456 1000 10";
    EXPECT_EQ(detail::start_ticks_from_stat(stat), 123456u);
    EXPECT_EQ(detail::start_ticks_from_stat("garbage"), 0u);
    EXPECT_EQ(detail::start_ticks_from_stat("1 (x) S 1 2"), 0u);
}

TEST(ProcessIdentity, DescribesThisProcess) {
    const detail::ProcessIdentity self = detail::this_process();
    EXPECT_EQ(self.pid, static_cast<std::uint64_t>(::getpid()));
    EXPECT_NE(self.pid_namespace, 0u);
    EXPECT_NE(self.start_ticks, 0u);
    EXPECT_EQ(self.uid, ::getuid());
}

// Two descriptions of one file stand for two processes.
class SlotLocks : public ::testing::Test {
protected:
    void SetUp() override {
        const std::string path = dir.file("registry");
        owner = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        other = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
        reader = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        ASSERT_GE(owner, 0);
        ASSERT_GE(other, 0);
        ASSERT_GE(reader, 0);
        ASSERT_EQ(::ftruncate(owner, 8192), 0);
    }
    void TearDown() override {
        ::close(owner);
        ::close(other);
        ::close(reader);
    }
    test::TempDir dir;
    int owner = -1;
    int other = -1;
    int reader = -1;
};

TEST_F(SlotLocks, OfTwoClaimsOfOneSlotOnlyTheFirstSucceeds) {
    EXPECT_TRUE(detail::try_claim_slot(owner, 2).value());
    EXPECT_FALSE(detail::try_claim_slot(other, 2).value());
    EXPECT_TRUE(detail::try_claim_slot(other, 3).value());  // neighbours are independent
    detail::unlock_slot(owner, 2);
    EXPECT_TRUE(detail::try_claim_slot(other, 2).value());
}

TEST_F(SlotLocks, TheProbeSeesAnOwnerFromAReadOnlyDescriptor) {
    EXPECT_FALSE(detail::slot_owner_alive(reader, 0).value());
    ASSERT_TRUE(detail::try_claim_slot(owner, 0).value());
    EXPECT_TRUE(detail::slot_owner_alive(reader, 0).value());
    EXPECT_FALSE(detail::slot_owner_alive(reader, 1).value());
    ::close(owner);  // what the kernel does when the owner dies
    owner = ::open(dir.file("registry").c_str(), O_RDWR | O_CLOEXEC);
    EXPECT_FALSE(detail::slot_owner_alive(reader, 0).value());
}

TEST_F(SlotLocks, AReclaimerExcludesRegistrantsButNeverLooksAlive) {
    ASSERT_TRUE(detail::try_lock_claim_byte(other, 1).value());
    EXPECT_FALSE(detail::slot_owner_alive(reader, 1).value());  // the reclaimer is not an owner
    EXPECT_FALSE(detail::try_claim_slot(owner, 1).value());     // but no one can claim meanwhile
    EXPECT_FALSE(detail::try_lock_claim_byte(owner, 1).value());
    detail::unlock_slot(other, 1);
    EXPECT_TRUE(detail::try_claim_slot(owner, 1).value());
    EXPECT_FALSE(detail::try_lock_claim_byte(other, 1).value());  // an owner excludes reclaimers
}

}  // namespace
}  // namespace evring
