// Private to lib/: the version 1 recording layout, still read (never written).
//
// A v1 file is the 128-byte file header (recording_format.hpp, with zero
// where v2 has schema_size, series_id and header_crc) and a body: one zstd
// stream when flags has kRecordingZstd, raw bytes otherwise. The body is
// records, each a RecordHeaderV1 and its body; a Gap body is the first 24
// bytes of GapRecord (no reason), an End body the first 40 of EndRecord (no
// gap count). There are no checksums beyond zstd's frame checksum and no
// resynchronisation points: a damaged v1 body ends its replay.
//
// Thread safety: constants and plain structs.
#pragma once

#include <cstdint>

#include "recording/recording_format.hpp"

namespace evring::detail {

struct RecordHeaderV1 {
    std::uint32_t kind;  // a RecordKind (1..4); unknown kinds are skipped by size
    std::uint32_t reserved;
    std::uint64_t body_size;
};
static_assert(sizeof(RecordHeaderV1) == 16);

inline constexpr std::uint64_t kGapBodyV1 = 24;
inline constexpr std::uint64_t kEndBodyV1 = 40;

// The largest record body this reader decompresses from a v1 zstd stream: the
// stream gives no other bound, and a 130 KB file can expand to gigabytes.
inline constexpr std::uint64_t kMaxCompressedBodyV1 = std::uint64_t{64} << 20;

}  // namespace evring::detail
