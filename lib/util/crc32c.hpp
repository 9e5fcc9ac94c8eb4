// Private to lib/: CRC32C (Castagnoli), the checksum of recording blocks.
//
// Why CRC32C (docs/recording-format.md): it detects every burst error up to
// 32 bits and every error of up to 3 bits in the block sizes recordings use,
// x86-64 computes it with one instruction per 8 bytes (SSE4.2), and it needs
// no library. The table version gives the same values where SSE4.2 is absent.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

namespace evring::detail {

// The CRC32C of `size` bytes, continuing from `crc` (0 to start).
// crc32c("123456789") == 0xE3069283.
std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t crc = 0) noexcept;

// The portable version (tests compare the two).
std::uint32_t crc32c_portable(const void* data, std::size_t size, std::uint32_t crc = 0) noexcept;

}  // namespace evring::detail
