// Encoding and checking named position files (named_position_format.hpp).
// Every field of a file read is untrusted: lengths are checked against the
// file's size before they are used.
#include "cursor/named_position_format.hpp"

#include <fmt/format.h>

#include <cstring>

#include "evring/format.hpp"
#include "util/crc32c.hpp"
#include "util/text_escape.hpp"

namespace evring::detail {
namespace {

template <class T>
void put(std::vector<std::byte>& out, T value) {
    const auto at = out.size();
    out.resize(at + sizeof value);
    std::memcpy(out.data() + at, &value, sizeof value);
}

template <class T>
T get(const std::vector<std::byte>& in, std::size_t at) {
    T value;
    std::memcpy(&value, in.data() + at, sizeof value);
    return value;
}

void put_text(std::vector<std::byte>& out, std::string_view text) {
    const auto at = out.size();
    out.resize(at + text.size());
    std::memcpy(out.data() + at, text.data(), text.size());
}

Error refused(std::string_view file, std::string_view why) {
    return Error(EBADMSG, fmt::format("named reader position '{}' {}", file, why));
}

}  // namespace

std::vector<std::byte> encode_named_position(const NamedPosition& p) {
    std::vector<std::byte> out;
    put_text(out, std::string_view(kNamedMagic, sizeof kNamedMagic));
    put<std::uint16_t>(out, kNamedVersion);
    put<std::uint16_t>(out, static_cast<std::uint16_t>(p.name.size()));
    put<std::uint16_t>(out, static_cast<std::uint16_t>(p.ring.size()));
    put<std::uint8_t>(out, static_cast<std::uint8_t>(p.kind));
    put<std::uint8_t>(out, p.instance_ended ? 1 : 0);
    put<std::uint32_t>(out, static_cast<std::uint32_t>(p.last_seqno.size()));
    put<std::uint32_t>(out, 0);
    put<std::uint64_t>(out, p.instance);
    put<std::uint64_t>(out, p.commit_nanos);
    put_text(out, p.name);
    put_text(out, p.ring);
    for (std::uint64_t seqno : p.last_seqno) put<std::uint64_t>(out, seqno);
    if (p.kind == SourceKind::RingSet)
        for (std::size_t i = 0; i < p.last_seqno.size(); ++i)
            put<std::uint64_t>(out, i < p.member_instance.size() ? p.member_instance[i] : 0);
    put<std::uint32_t>(out, crc32c(out.data(), out.size()));
    return out;
}

Result<NamedPosition> decode_named_position(std::string_view file, std::string_view expected_name,
                                            const std::vector<std::byte>& in) {
    if (in.size() < sizeof kNamedMagic || std::memcmp(in.data(), kNamedMagic, sizeof kNamedMagic) != 0)
        return refused(file, "is not a named reader position (no EVRNAMED magic): a foreign file");
    if (in.size() < kNamedFixed + 4)
        return refused(file, fmt::format("is truncated ({} bytes; the header alone is {})", in.size(), kNamedFixed + 4));
    const auto version = get<std::uint16_t>(in, 8);
    if (version != kNamedVersion)
        return refused(file, fmt::format("has format version {}; this evring reads version {}", version, kNamedVersion));
    const std::size_t name_len = get<std::uint16_t>(in, 10), ring_len = get<std::uint16_t>(in, 12);
    const std::size_t members = get<std::uint32_t>(in, 16);
    if (name_len == 0 || name_len > kMaxNameBytes || ring_len == 0 || ring_len > kMaxRingBytes || members == 0 ||
        members > kMaxMembers)
        return refused(file, fmt::format("is damaged: impossible lengths (name {}, ring {}, members {})", name_len,
                                         ring_len, members));
    const auto kind = get<std::uint8_t>(in, 14);
    const bool set = kind == static_cast<std::uint8_t>(SourceKind::RingSet);
    const std::size_t size = kNamedFixed + name_len + ring_len + (set ? 16 : 8) * members + 4;
    if (in.size() != size)
        return refused(file, fmt::format("is damaged: {} bytes where its header says {}", in.size(), size));
    if (crc32c(in.data(), size - 4) != get<std::uint32_t>(in, size - 4))
        return refused(file, "is damaged: its checksum does not match its contents");
    NamedPosition p;
    if (kind > static_cast<std::uint8_t>(SourceKind::RingSet))
        return refused(file, fmt::format("is damaged: unknown source kind {}", kind));
    p.kind = static_cast<SourceKind>(kind);
    p.instance_ended = (get<std::uint8_t>(in, 15) & 1) != 0;
    p.instance = get<std::uint64_t>(in, 24);
    p.commit_nanos = get<std::uint64_t>(in, 32);
    p.name.assign(reinterpret_cast<const char*>(in.data()) + kNamedFixed, name_len);
    p.ring.assign(reinterpret_cast<const char*>(in.data()) + kNamedFixed + name_len, ring_len);
    // A file renamed (or copied) under another reader's name would make that
    // reader resume at someone else's position.
    if (p.name != expected_name)
        return refused(file, fmt::format("holds the position of reader '{}', not '{}': renamed or forged",
                                         printable(p.name), printable(expected_name)));
    p.last_seqno.clear();
    for (std::size_t i = 0; i < members; ++i) {
        const auto seqno = get<std::uint64_t>(in, kNamedFixed + name_len + ring_len + 8 * i);
        if (seqno > kMaxSeqno)
            return refused(file, fmt::format("is damaged: sequence number {} is past any ring's (2^62)", seqno));
        p.last_seqno.push_back(seqno);
    }
    if (set)
        for (std::size_t i = 0; i < members; ++i)
            p.member_instance.push_back(get<std::uint64_t>(in, kNamedFixed + name_len + ring_len + 8 * (members + i)));
    return p;
}

}  // namespace evring::detail
