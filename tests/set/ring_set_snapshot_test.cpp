// Set snapshots (ring_set_snapshot.hpp): a set frozen in one file reads as
// the same merged stream the live set gave, and a file that lies (cut short,
// absurd counts and sizes, members out of order or foreign) is refused with an
// error naming the file, never a crash or an allocation of what it claims.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "evring/set/ring_set.hpp"
#include "set/ring_set_snapshot.hpp"
#include "source/ring_set_source.hpp"
#include "evring/ring/ring_writer.hpp"
#include "evring/source/source_open.hpp"
#include "support/ring_sets.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::drain;
using test::publish_at;
using test::Seen;

std::vector<std::byte> read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::byte> bytes(chars.size());
    std::memcpy(bytes.data(), chars.data(), chars.size());
    return bytes;
}

void write_file(const std::string& path, std::span<const std::byte> bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

struct SetSnapshotFixture : test::SetFixture {
    DirectoryOptions directory() const { return test::directory_in(dir.path()); }
    // A kept set "set" of three members (three writer objects on this thread),
    // their events interleaved in time.
    void make_set() {
        auto set = members(3, true);
        for (std::uint64_t t = 1; t <= 30; ++t) publish_at(set[t % 3], t * 10);
    }
    std::unique_ptr<EventSource> open(const std::string& location) {
        SourceOptions options;
        options.directory = directory();
        auto source = open_source(location, options);
        EXPECT_TRUE(source.ok()) << source.error().message();
        return source.ok() ? std::move(source).value() : nullptr;
    }
    // Snapshots the set into `path`; the merged events the live set gave.
    std::vector<Seen> snapshot_to(const std::string& path) {
        auto live = open("set");
        auto* set = dynamic_cast<RingSetSource*>(live.get());
        EXPECT_NE(set, nullptr);
        if (set == nullptr) return {};
        std::vector<SetSnapshotMember> members;
        for (std::uint32_t index : set->members()) members.push_back({index, set->member_ring(index)});
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        EXPECT_GE(fd, 0);
        auto stats = write_set_snapshot(set->manifest_bytes(), members, fd, path);
        ::close(fd);
        EXPECT_TRUE(stats.ok()) << stats.error().message();
        EXPECT_TRUE(live->seek(Position::oldest()).ok());
        return drain(*live);
    }
    Status load(const std::string& path) {
        auto loaded = load_set_snapshot(path);
        if (!loaded) return std::move(loaded).error();
        return {};
    }
};

TEST_F(SetSnapshotFixture, ASnapshotReadsAsTheMergedStreamTheLiveSetGave) {
    make_set();
    const std::string file = dir.file("set.zst");
    const std::vector<Seen> live = snapshot_to(file);
    ASSERT_EQ(live.size(), 30u);
    auto frozen = open(file);
    ASSERT_NE(frozen, nullptr);
    EXPECT_EQ(frozen->kind(), SourceKind::RingSet);
    EXPECT_TRUE(frozen->identity().members);
    EXPECT_FALSE(frozen->live());
    ASSERT_TRUE(frozen->seek(Position::oldest()).ok());
    SourceStep last{};
    EXPECT_EQ(drain(*frozen, &last), live);
    EXPECT_EQ(last, SourceStep::End);
    // MEMBER:SEQNO works on it as on the live set.
    auto* set = dynamic_cast<RingSetSource*>(frozen.get());
    ASSERT_NE(set, nullptr);
    EXPECT_TRUE(set->frozen());
    ASSERT_TRUE(set->seek_member(2, 5).ok());
    const std::vector<Seen> from = drain(*frozen);
    ASSERT_FALSE(from.empty());
    EXPECT_EQ(from.front().member, 2u);
    EXPECT_EQ(from.front().seqno, 5u);
}

TEST_F(SetSnapshotFixture, ItIsNotTakenForARingSnapshotNorARingSnapshotForIt) {
    make_set();
    const std::string file = dir.file("set.zst");
    snapshot_to(file);
    const std::vector<std::byte> bytes = read_file(file);
    ASSERT_GE(bytes.size(), 16u);
    EXPECT_EQ(std::memcmp(bytes.data(), "\x5e\x2a\x4d\x18", 4), 0);
    EXPECT_EQ(std::memcmp(bytes.data() + 8, "EVSETSN1", 8), 0);
    EXPECT_FALSE(is_zstd_file(file).value());
    EXPECT_TRUE(is_set_snapshot_file(file).value());
    auto as_ring = load_snapshot(file);
    EXPECT_FALSE(as_ring.ok());
}

TEST_F(SetSnapshotFixture, EveryCutShortFileIsRefusedNamingTheFile) {
    make_set();
    const std::string file = dir.file("set.zst");
    snapshot_to(file);
    const std::vector<std::byte> bytes = read_file(file);
    const std::string cut = dir.file("cut.zst");
    // Every length through the header frame and the first member's record,
    // then a stride through the member frames.
    for (std::size_t n = 0; n < bytes.size(); n += n < 640 ? 1 : 211) {
        write_file(cut, std::span<const std::byte>(bytes.data(), n));
        const Status s = load(cut);
        ASSERT_FALSE(s.ok()) << "a file cut to " << n << " bytes was accepted";
        if (n >= 16) {
            EXPECT_NE(s.error().message().find(cut), std::string::npos) << s.error().message();
        }
    }
}

// Patches the file's bytes at `offset` with `value` and returns the load's error.
template <typename T>
std::string patched_error(const std::string& from, const std::string& to, std::size_t offset, T value) {
    std::vector<std::byte> bytes = read_file(from);
    if (offset + sizeof value > bytes.size()) return "offset beyond the file";
    std::memcpy(bytes.data() + offset, &value, sizeof value);
    write_file(to, bytes);
    auto loaded = load_set_snapshot(to);
    return loaded.ok() ? "accepted" : loaded.error().message();
}

TEST_F(SetSnapshotFixture, HeadersThatLieAreRefusedByFieldWithoutAllocatingWhatTheyClaim) {
    make_set();
    const std::string file = dir.file("set.zst");
    snapshot_to(file);
    const std::string bad = dir.file("bad.zst");
    // Set record: frame head (8), magic (8), member_count at 16, manifest_size at 20.
    EXPECT_NE(patched_error(file, bad, 16, std::uint32_t{1'000'000}).find("member_count 1000000"), std::string::npos);
    EXPECT_NE(patched_error(file, bad, 20, std::uint32_t{0xffffffff}).find("manifest_size"), std::string::npos);
    EXPECT_NE(patched_error(file, bad, 4, std::uint32_t{7}).find("header frame"), std::string::npos);
    EXPECT_NE(patched_error(file, bad, 8, 'X').find("not a set snapshot"), std::string::npos);

    // The first member record follows the manifest: index at +16, frame_size at +24.
    const std::vector<std::byte> bytes = read_file(file);
    std::uint32_t manifest_size = 0;
    std::memcpy(&manifest_size, bytes.data() + 20, 4);
    const std::size_t record = 24 + manifest_size;
    EXPECT_NE(patched_error(file, bad, record + 16, std::uint32_t{4000}).find("not below max_members"),
              std::string::npos);
    EXPECT_NE(patched_error(file, bad, record + 24, std::uint64_t{1} << 60).find("runs past the file's end"),
              std::string::npos);
    std::uint64_t frame_size = 0;
    std::memcpy(&frame_size, bytes.data() + record + 24, 8);
    // The second member claims the first's index: indexes must ascend.
    const std::size_t second = record + 32 + frame_size;
    EXPECT_NE(patched_error(file, bad, second + 16, std::uint32_t{0}).find("indexes ascend"), std::string::npos);
    // A member frame one byte shorter than its record says leaves a byte
    // that is not the next record.
    EXPECT_NE(patched_error(file, bad, record + 24, frame_size - 1), "accepted");

    std::vector<std::byte> longer = bytes;
    longer.push_back(std::byte{0});
    write_file(bad, longer);
    EXPECT_NE(load(bad).error().message().find("follow its last member"), std::string::npos);
}

TEST_F(SetSnapshotFixture, AMemberOfAnotherSchemaIsRefusedByIndex) {
    make_set();
    auto live = open("set");
    auto* set = dynamic_cast<RingSetSource*>(live.get());
    ASSERT_NE(set, nullptr);
    RingParams params = test::small_params();
    params.content.schema_hash[0] ^= 0xff;
    const std::string foreign = dir.file("foreign");
    ::close(test::create_ring_file(foreign, params));
    const MappedRing ring = test::map_path(foreign, Access::ReadOnly);
    const std::vector<SetSnapshotMember> members{{0, set->member_ring(0)}, {1, &ring}};
    const std::string file = dir.file("mixed.zst");
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(write_set_snapshot(set->manifest_bytes(), members, fd, file).ok());
    ::close(fd);
    const Status s = load(file);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message().find("member 1"), std::string::npos) << s.error().message();
}

}  // namespace
}  // namespace evring
