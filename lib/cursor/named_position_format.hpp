// Private to lib/cursor: the bytes of a named position file (the table is in
// docs/named-readers.md, "The position file").
//
//   offset size
//        0    8  magic "EVRNAMED"
//        8    2  version (1)
//       10    2  name length N (1..64)
//       12    2  ring path length R (1..4096)
//       14    1  source kind (SourceKind)
//       15    1  flags: bit 0, the instance was read to its end
//       16    4  members M (1..4096)
//       20    4  reserved, 0
//       24    8  ring instance (SourceIdentity::instance)
//       32    8  commit time, nanoseconds since the Unix epoch
//       40    N  name
//     40+N    R  ring path
//   40+N+R  8*M  last consumed sequence number of each member
//        …  8*M  ring sets only (kind 4): each member's ring instance
//        …    4  CRC32C of every byte before it
//
// All integers little-endian (the machines evring runs on). The largest file
// is under 72 KiB, so a reader checks the size before reading anything.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cursor/named_position.hpp"

namespace evring::detail {

inline constexpr char kNamedMagic[8] = {'E', 'V', 'R', 'N', 'A', 'M', 'E', 'D'};
inline constexpr std::uint16_t kNamedVersion = 1;
inline constexpr std::size_t kNamedFixed = 40;
inline constexpr std::size_t kMaxNameBytes = 64;
inline constexpr std::size_t kMaxRingBytes = 4096;
inline constexpr std::size_t kMaxMembers = 4096;
inline constexpr std::size_t kMaxNamedFile = kNamedFixed + kMaxNameBytes + kMaxRingBytes + 16 * kMaxMembers + 4;

std::vector<std::byte> encode_named_position(const NamedPosition& position);
// `file` names the file in errors; `expected_name` is the name the file's own
// name says it holds.
Result<NamedPosition> decode_named_position(std::string_view file, std::string_view expected_name,
                                            const std::vector<std::byte>& bytes);

}  // namespace evring::detail
