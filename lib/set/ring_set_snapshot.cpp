// A ring set frozen in one file: writing and loading (ring_set_snapshot.hpp).
#include "set/ring_set_snapshot.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstring>

#include "util/regular_file.hpp"
#include "ring/snapshot_support.hpp"
#include "util/write_all.hpp"

namespace evring {
namespace {

using snapshot_detail::FileDescriptor;

// The skippable frames' contents (little-endian, as every evring format).
struct SetRecord {
    std::array<char, 8> magic;
    std::uint32_t member_count;
    std::uint32_t manifest_size;
};
static_assert(sizeof(SetRecord) == 16);

struct MemberRecord {
    std::array<char, 8> magic;
    std::uint32_t index;
    std::uint32_t reserved;
    std::uint64_t frame_size;
};
static_assert(sizeof(MemberRecord) == 24);

struct FrameHead {
    std::uint32_t magic;
    std::uint32_t size;
};
static_assert(sizeof(FrameHead) == 8);

Status write_frame(int fd, const void* body, std::size_t body_size, const void* tail, std::size_t tail_size,
                   const std::string& what) {
    const FrameHead head{kSkippableFrameMagic, static_cast<std::uint32_t>(body_size + tail_size)};
    if (auto s = detail::write_all(fd, &head, sizeof head, what); !s) return s;
    if (auto s = detail::write_all(fd, body, body_size, what); !s) return s;
    if (tail_size == 0) return {};
    return detail::write_all(fd, tail, tail_size, what);
}

// Copies `size` bytes of `from` (at its start) to `to`, in 1 MiB chunks,
// stopping between chunks when the stop flag is set.
Status copy_staged(int from, std::uint64_t size, int to, const std::string& what, const SnapshotWriteOptions& options) {
    std::vector<std::byte> chunk(snapshot_detail::kChunk);
    std::uint64_t at = 0;
    while (at < size) {
        if (options.stop != nullptr && options.stop->load(std::memory_order_relaxed))
            return Error(ECANCELED, "writing " + what + ": interrupted");
        const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), size - at));
        const ssize_t got = ::pread(from, chunk.data(), want, static_cast<off_t>(at));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return Error::from_errno(got < 0 ? errno : EIO, "reading back the staged " + what);
        if (auto s = detail::write_all(to, chunk.data(), static_cast<std::size_t>(got), what); !s) return s;
        at += static_cast<std::uint64_t>(got);
    }
    return {};
}

// Reads exactly `size` bytes at `offset`; the caller checked they exist.
Status read_exact(int fd, void* out, std::size_t size, std::uint64_t offset, const std::string& what) {
    auto* p = static_cast<char*>(out);
    std::size_t got = 0;
    while (got < size) {
        const ssize_t n = ::pread(fd, p + got, size - got, static_cast<off_t>(offset + got));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return Error::from_errno(errno, "reading " + what);
        if (n == 0) return Error(EINVAL, what + " is truncated (the file shrank while read)");
        got += static_cast<std::size_t>(n);
    }
    return {};
}

// The set record frame at the file's start: its manifest, checked.
Result<std::uint32_t> read_set_record(int fd, std::uint64_t file_size, const std::string& named,
                                      LoadedSetSnapshot& out, std::uint64_t& at) {
    FrameHead head{};
    SetRecord record{};
    if (file_size < sizeof head + sizeof record)
        return Error(EINVAL, fmt::format("{} is too short ({} bytes) for a set snapshot's header", named, file_size));
    if (auto s = read_exact(fd, &head, sizeof head, 0, named); !s) return std::move(s).error();
    if (auto s = read_exact(fd, &record, sizeof record, sizeof head, named); !s) return std::move(s).error();
    if (head.magic != kSkippableFrameMagic || record.magic != kSetSnapshotMagic)
        return Error(EINVAL, fmt::format("{} is not a set snapshot (no EVSETSN1 frame at its start)", named));
    if (record.manifest_size > max_set_manifest_size())
        return Error(EINVAL, fmt::format("{}: manifest_size {} exceeds the largest manifest ({} bytes)", named,
                                         record.manifest_size, max_set_manifest_size()));
    if (head.size != sizeof record + std::uint64_t{record.manifest_size})
        return Error(EINVAL, fmt::format("{}: its header frame is {} bytes, but manifest_size {} makes it {}", named,
                                         head.size, record.manifest_size, sizeof record + record.manifest_size));
    at = sizeof head + sizeof record;
    if (record.manifest_size > file_size - at)
        return Error(EINVAL, fmt::format("{}: manifest_size {} runs past the file's end ({} bytes)", named,
                                         record.manifest_size, file_size));
    out.manifest_bytes.resize(record.manifest_size);  // checked against the file's size above
    if (auto s = read_exact(fd, out.manifest_bytes.data(), record.manifest_size, at, named); !s)
        return std::move(s).error();
    at += record.manifest_size;
    auto manifest = parse_set_manifest(out.manifest_bytes, named);
    if (!manifest) return std::move(manifest).context(named + ": its manifest").error();
    out.manifest = std::move(manifest).value();
    if (record.member_count > out.manifest.max_members)
        return Error(EINVAL, fmt::format("{}: member_count {} exceeds the manifest's max_members {}", named,
                                         record.member_count, out.manifest.max_members));
    return record.member_count;
}

}  // namespace

Result<bool> is_set_snapshot_file(const std::string& path) {
    auto opened = detail::open_regular_file(path, fmt::format("'{}'", path));
    if (!opened) return std::move(opened).error();
    FileDescriptor file(*opened);
    FrameHead head{};
    SetRecord record{};
    if (::pread(file.fd, &head, sizeof head, 0) != static_cast<ssize_t>(sizeof head)) return false;
    if (::pread(file.fd, &record, sizeof record, sizeof head) != static_cast<ssize_t>(sizeof record)) return false;
    return head.magic == kSkippableFrameMagic && record.magic == kSetSnapshotMagic;
}

Result<SetSnapshotStats> write_set_snapshot(std::span<const std::byte> manifest,
                                            std::span<const SetSnapshotMember> members, int out_fd,
                                            std::string_view out_path, const SnapshotWriteOptions& options) {
    const std::string what(out_path);
    if (manifest.size() > max_set_manifest_size() || members.size() > kMaxSetMembers)
        return Error(EINVAL, fmt::format("writing {}: a manifest of {} bytes with {} members is not a set's", what,
                                         manifest.size(), members.size()));
    SetSnapshotStats stats;
    const SetRecord record{kSetSnapshotMagic, static_cast<std::uint32_t>(members.size()),
                           static_cast<std::uint32_t>(manifest.size())};
    if (auto s = write_frame(out_fd, &record, sizeof record, manifest.data(), manifest.size(), what); !s)
        return std::move(s).error();
    stats.compressed_bytes = sizeof(FrameHead) + sizeof record + manifest.size();
    for (const SetSnapshotMember& m : members) {
        FileDescriptor staged(::memfd_create("evring-set-snapshot", MFD_CLOEXEC));
        if (staged.fd < 0) return Error::from_errno(errno, "staging a member of " + what);
        auto member = write_snapshot(*m.ring, staged.fd, fmt::format("{} (member {})", what, m.index), options);
        if (!member) return std::move(member).error();
        const MemberRecord head{kSetSnapshotMemberMagic, m.index, 0, member->compressed_bytes};
        if (auto s = write_frame(out_fd, &head, sizeof head, nullptr, 0, what); !s) return std::move(s).error();
        if (auto s = copy_staged(staged.fd, member->compressed_bytes, out_fd, what, options); !s)
            return std::move(s).error();
        stats.compressed_bytes += sizeof(FrameHead) + sizeof head + member->compressed_bytes;
        stats.members.emplace_back(m.index, *member);
    }
    return stats;
}

Result<LoadedSetSnapshot> load_set_snapshot(const std::string& path, const SnapshotLoadOptions& options) {
    const std::string named = fmt::format("set snapshot '{}'", path);
    auto opened = detail::open_regular_file(path, named);
    if (!opened) return std::move(opened).error();
    FileDescriptor file(*opened);
    struct stat st {};
    if (::fstat(file.fd, &st) != 0) return Error::from_errno(errno, "examining " + named);
    const auto file_size = static_cast<std::uint64_t>(st.st_size);
    LoadedSetSnapshot out;
    out.compressed_size = file_size;
    std::uint64_t at = 0;
    auto count = read_set_record(file.fd, file_size, named, out, at);
    if (!count) return std::move(count).error();
    out.manifest.directory = path;
    std::uint64_t budget = options.max_decompressed_size;  // the members' rings together
    for (std::uint32_t i = 0; i < *count; ++i) {
        FrameHead head{};
        MemberRecord record{};
        const std::string which = fmt::format("{}: member record {} (at byte {})", named, i, at);
        if (file_size - at < sizeof head + sizeof record)
            return Error(EINVAL, fmt::format("{} runs past the file's end ({} bytes; {} members announced)", which,
                                             file_size, *count));
        if (auto s = read_exact(file.fd, &head, sizeof head, at, named); !s) return std::move(s).error();
        if (auto s = read_exact(file.fd, &record, sizeof record, at + sizeof head, named); !s)
            return std::move(s).error();
        if (head.magic != kSkippableFrameMagic || head.size != sizeof record || record.magic != kSetSnapshotMemberMagic)
            return Error(EINVAL, which + " is not an EVSETMB1 frame");
        if (record.index >= out.manifest.max_members)
            return Error(EINVAL, fmt::format("{}: index {} is not below max_members {}", which, record.index,
                                             out.manifest.max_members));
        if (!out.members.empty() && record.index <= out.members.back().first)
            return Error(EINVAL, fmt::format("{}: index {} does not follow member {} (indexes ascend)", which,
                                             record.index, out.members.back().first));
        at += sizeof head + sizeof record;
        if (record.frame_size > file_size - at)
            return Error(EINVAL, fmt::format("{}: frame_size {} runs past the file's end ({} bytes)", which,
                                             record.frame_size, file_size));
        auto member = snapshot_detail::load_snapshot_range(
            file.fd, at, record.frame_size, fmt::format("{} (member {})", path, record.index), {budget});
        if (!member) return std::move(member).error();
        if (auto s = member->ring.check_content_type(out.manifest.content_type, out.manifest.schema_hash); !s)
            return std::move(s).context(fmt::format("{}: member {}", named, record.index)).error();
        budget -= std::min(budget, member->ring.layout().file_size);
        at += record.frame_size;
        out.members.emplace_back(record.index, std::move(member).value());
    }
    if (at != file_size)
        return Error(EINVAL, fmt::format("{}: {} bytes follow its last member", named, file_size - at));
    return out;
}

}  // namespace evring
