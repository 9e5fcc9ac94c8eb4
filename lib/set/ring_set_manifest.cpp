// Reading and checking a ring set's manifest (ring_set_manifest.hpp).
#include "set/ring_set_manifest.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstring>

#include "evring/config.hpp"
#include "ring/schema_blob.hpp"
#include "util/regular_file.hpp"

namespace evring {
namespace {

bool name_char_ok(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
}

// The entry's name up to its NUL; an error when there is none.
Result<std::string_view> entry_name(const SetMemberEntry& entry) {
    const void* nul = std::memchr(entry.name.data(), '\0', entry.name.size());
    if (nul == nullptr) return Error(EPROTO, "its name is not NUL-terminated");
    const auto length = static_cast<std::size_t>(static_cast<const char*>(nul) - entry.name.data());
    return std::string_view(entry.name.data(), length);
}

Status check_entry(const SetMemberEntry& entry, std::uint32_t index) {
    if (entry.index != index) return Error(EPROTO, fmt::format("it says it is entry {}", entry.index));
    auto name = entry_name(entry);
    if (!name) return std::move(name).error();
    return check_member_name(*name);
}

Status check_header(const SetManifestHeader& h, std::uint64_t size, std::string_view file) {
    auto bad = [&](std::string what) { return Error(EPROTO, fmt::format("ring set manifest {}: {}", file, what)); };
    if (h.magic != kSetMagic) return bad("not a ring set manifest (bad magic)");
    if (h.header_size != kSetHeaderSize)
        return bad(fmt::format("header_size {} (expected {})", h.header_size, kSetHeaderSize));
    if (h.max_members == 0 || h.max_members > kMaxSetMembers)
        return bad(fmt::format("max_members {} is outside 1..{}", h.max_members, kMaxSetMembers));
    if (auto s = validate_descriptor_shift(h.member_descriptor_shift); !s)
        return bad("member_descriptor_shift: " + s.error().message());
    if (auto s = validate_payload_buf_shift(h.member_payload_buf_shift); !s)
        return bad("member_payload_buf_shift: " + s.error().message());
    if (h.schema_size > kEmbeddedSchemaMaxSize)
        return bad(fmt::format("schema_size {} exceeds {}", h.schema_size, kEmbeddedSchemaMaxSize));
    const std::uint64_t needed = set_schema_offset(h.max_members) + h.schema_size;
    if (size < needed)
        return bad(fmt::format("{} bytes, but its {} members and {}-byte schema need {}", size, h.max_members,
                               h.schema_size, needed));
    return {};
}

}  // namespace

Status check_member_name(std::string_view name) {
    if (name.empty()) return Error(EPROTO, "its name is empty");
    if (name == "." || name.find("..") != std::string_view::npos)
        return Error(EPROTO, fmt::format("its name '{}' holds '..' or is '.'", name));
    for (char c : name)
        if (!name_char_ok(c))
            return Error(EPROTO, fmt::format("its name holds the character 0x{:02x}, outside [A-Za-z0-9._-]",
                                             static_cast<unsigned char>(c)));
    return {};
}

std::uint64_t max_set_manifest_size() noexcept {
    return set_schema_offset(kMaxSetMembers) + kEmbeddedSchemaMaxSize;
}

Result<RingSetManifest> parse_set_manifest(std::span<const std::byte> bytes, std::string_view directory) {
    const std::string file = std::string(directory) + "/" + kSetManifestName;
    if (bytes.size() < kSetHeaderSize)
        return Error(EPROTO, fmt::format("ring set manifest {}: {} bytes, shorter than its {}-byte header", file,
                                         bytes.size(), kSetHeaderSize));
    SetManifestHeader h;
    std::memcpy(&h, bytes.data(), sizeof h);
    if (auto s = check_header(h, bytes.size(), file); !s) return std::move(s).error();

    RingSetManifest m;
    m.directory = std::string(directory);
    m.set_id = h.set_id;
    m.created_nanos = h.created_nanos;
    m.content_type = h.content_type;
    m.schema_hash = h.schema_hash;
    m.max_members = h.max_members;
    m.member_descriptor_shift = h.member_descriptor_shift;
    m.member_payload_buf_shift = h.member_payload_buf_shift;
    m.generation = h.generation;
    const std::byte* schema = bytes.data() + set_schema_offset(h.max_members);
    m.schema_blob.assign(schema, schema + h.schema_size);
    for (std::uint32_t i = 0; i < h.max_members; ++i) {
        SetMemberEntry entry;
        std::memcpy(&entry, bytes.data() + kSetHeaderSize + std::uint64_t{i} * kSetMemberEntrySize, sizeof entry);
        if (entry.state == static_cast<std::uint32_t>(SetMemberState::Empty)) continue;
        Status ok = entry.state == static_cast<std::uint32_t>(SetMemberState::Present)
                        ? check_entry(entry, i)
                        : Status(Error(EPROTO, fmt::format("its state is {}", entry.state)));
        if (!ok) {
            m.warnings.push_back(
                fmt::format("ring set manifest {}: member entry {} skipped: {}", file, i, ok.error().message()));
            continue;
        }
        RingSetMemberInfo info;
        info.index = i;
        // A member's file is named by its index (m<index>, as the writer names
        // it): an entry naming another file would have readers read that
        // member twice and this one never. The name is checked, not followed.
        info.name = fmt::format("m{}", i);
        if (auto name = entry_name(entry); *name != info.name)
            m.warnings.push_back(fmt::format("ring set manifest {}: member entry {} names '{}', not its own file "
                                             "'{}'; reading '{}'",
                                             file, i, *name, info.name, info.name));
        info.path = m.directory + "/" + info.name;
        info.ring_created_nanos = entry.ring_created_nanos;
        info.pid = entry.pid;
        m.members.push_back(std::move(info));
    }
    return m;
}

Result<int> open_set_manifest(std::string_view directory) {
    const std::string file = std::string(directory) + "/" + kSetManifestName;
    // Looked at before it is opened: a FIFO, device, socket, directory or
    // link is named as what it is, and nothing waits on it or follows it.
    struct stat st {};
    if (::lstat(file.c_str(), &st) != 0) return Error::from_errno(errno, "opening ring set manifest " + file);
    if (!S_ISREG(st.st_mode))
        return Error(S_ISDIR(st.st_mode) ? EISDIR : EINVAL,
                     fmt::format("ring set manifest {} is {}, not a regular file", file,
                                 detail::file_type_name(st.st_mode)));
    const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return Error::from_errno(errno, "opening ring set manifest " + file);
    return fd;
}

Result<std::vector<std::byte>> read_set_manifest_bytes(std::string_view directory) {
    auto fd = open_set_manifest(directory);
    if (!fd) return std::move(fd).error();
    auto bytes = read_set_manifest_bytes(*fd, directory);
    ::close(*fd);
    return bytes;
}

Result<std::vector<std::byte>> read_set_manifest_bytes(int fd, std::string_view directory) {
    const std::string file = std::string(directory) + "/" + kSetManifestName;
    // Checked again on the open file: it may have been replaced since the lstat.
    if (auto s = detail::check_regular_file(fd, "ring set manifest " + file); !s) return std::move(s).error();
    struct stat st {};
    if (::fstat(fd, &st) != 0) return Error::from_errno(errno, "examining ring set manifest " + file);
    const std::uint64_t want = std::min<std::uint64_t>(static_cast<std::uint64_t>(st.st_size), max_set_manifest_size());
    std::vector<std::byte> bytes(want);
    std::uint64_t got = 0;
    while (got < want) {
        const ssize_t n = ::pread(fd, bytes.data() + got, want - got, static_cast<off_t>(got));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += static_cast<std::uint64_t>(n);
    }
    bytes.resize(got);
    return bytes;
}

Result<RingSetManifest> read_set_manifest(std::string_view directory) {
    auto bytes = read_set_manifest_bytes(directory);
    if (!bytes) return std::move(bytes).error();
    return parse_set_manifest(*bytes, directory);
}

std::uint64_t set_manifest_used_size(const RingSetManifest& manifest) noexcept {
    return set_schema_offset(manifest.max_members) + manifest.schema_blob.size();
}

Result<std::uint64_t> read_set_generation(int manifest_fd) {
    std::uint64_t generation = 0;
    const ssize_t n = ::pread(manifest_fd, &generation, sizeof generation, offsetof(SetManifestHeader, generation));
    if (n != static_cast<ssize_t>(sizeof generation))
        return Error(n < 0 ? errno : EPROTO, "reading the ring set manifest's generation");
    return generation;
}

bool is_ring_set_directory(std::string_view path) {
    struct stat st {};
    const std::string dir(path);
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
    // Any entry named `manifest`: one that is not a regular file is refused
    // when it is read, with a message naming it and what it is.
    const std::string file = dir + "/" + kSetManifestName;
    return ::lstat(file.c_str(), &st) == 0;
}

}  // namespace evring
