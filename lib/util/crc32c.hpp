// Private to lib/: CRC32C (Castagnoli), the checksum of recording blocks.
//
// Why CRC32C (docs/recording-format.md): it detects every burst error up to
// 32 bits and every error of up to 3 bits in the block sizes recordings use,
// and x86-64 computes it in hardware. Built with ISA-L (libisal, found by
// meson), crc32c() is ISA-L's crc32_iscsi, which folds with carry-less
// multiplies: about 56 GB/s here against 8-9 for the chain of one SSE4.2
// crc32 instruction per 8 bytes that it falls back to without ISA-L, where a
// recorder's worker spent a tenth of its time. The table version gives the
// same values where SSE4.2 is absent, and is what tests compare both with.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

namespace evring::detail {

// The CRC32C of `size` bytes, continuing from `crc` (0 to start).
// crc32c("123456789") == 0xE3069283.
std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t crc = 0) noexcept;

// The portable version (tests compare the others with it).
std::uint32_t crc32c_portable(const void* data, std::size_t size, std::uint32_t crc = 0) noexcept;
// What crc32c() is without ISA-L: one chain of SSE4.2 crc32 instructions
// where the CPU has them, else the portable version. Compiled either way, so
// tests hold it to the others and bench/micro/crc_bench.cpp times it.
std::uint32_t crc32c_fallback(const void* data, std::size_t size, std::uint32_t crc = 0) noexcept;

}  // namespace evring::detail
