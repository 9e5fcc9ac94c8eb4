#include "util/crc32c.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif
#if EVRING_HAVE_ISAL
#include <isa-l/crc.h>

#include <algorithm>
#endif

namespace evring::detail {
namespace {

constexpr std::uint32_t kPolynomial = 0x82F63B78;  // Castagnoli, bit-reflected

// Slicing-by-8: table[k][b] is the CRC of byte b followed by k zero bytes.
constexpr std::array<std::array<std::uint32_t, 256>, 8> make_tables() {
    std::array<std::array<std::uint32_t, 256>, 8> t{};
    for (std::uint32_t b = 0; b < 256; ++b) {
        std::uint32_t crc = b;
        for (int i = 0; i < 8; ++i) crc = (crc >> 1) ^ ((crc & 1) ? kPolynomial : 0);
        t[0][b] = crc;
    }
    for (std::size_t k = 1; k < 8; ++k)
        for (std::size_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
    return t;
}

constexpr auto kTables = make_tables();

std::uint32_t portable_raw(const unsigned char* p, std::size_t size, std::uint32_t crc) noexcept {
    for (; size >= 8; p += 8, size -= 8) {
        std::uint64_t word;
        std::memcpy(&word, p, 8);  // little-endian host (format.hpp asserts it)
        word ^= crc;
        crc = kTables[7][word & 0xff] ^ kTables[6][(word >> 8) & 0xff] ^
              kTables[5][(word >> 16) & 0xff] ^ kTables[4][(word >> 24) & 0xff] ^
              kTables[3][(word >> 32) & 0xff] ^ kTables[2][(word >> 40) & 0xff] ^
              kTables[1][(word >> 48) & 0xff] ^ kTables[0][word >> 56];
    }
    for (; size > 0; ++p, --size) crc = (crc >> 8) ^ kTables[0][(crc ^ *p) & 0xff];
    return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t sse42_raw(const unsigned char* p, std::size_t size,
                                                          std::uint32_t crc) noexcept {
    std::uint64_t c = crc;
    for (; size >= 8; p += 8, size -= 8) {
        std::uint64_t word;
        std::memcpy(&word, p, 8);
        c = _mm_crc32_u64(c, word);
    }
    auto c32 = static_cast<std::uint32_t>(c);
    for (; size > 0; ++p, --size) c32 = _mm_crc32_u8(c32, *p);
    return c32;
}

bool have_sse42() noexcept {
    // __builtin_cpu_init first: this may run before the constructors that set
    // up __builtin_cpu_supports (a static initializer elsewhere could call us).
    static const bool have = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("sse4.2") != 0;
    }();
    return have;
}
#endif

}  // namespace

std::uint32_t crc32c_portable(const void* data, std::size_t size, std::uint32_t crc) noexcept {
    return ~portable_raw(static_cast<const unsigned char*>(data), size, ~crc);
}

std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t crc) noexcept {
#if EVRING_HAVE_ISAL
    // ISA-L keeps the register uninverted and takes an int length: the
    // inversions are ours, and a longer buffer goes in pieces. It only reads
    // the buffer, whatever its pointer type says.
    auto* p = static_cast<unsigned char*>(const_cast<void*>(data));
    std::uint32_t state = ~crc;
    while (size > 0) {
        const std::size_t n = std::min<std::size_t>(size, std::size_t{1} << 30);
        state = crc32_iscsi(p, static_cast<int>(n), state);
        p += n;
        size -= n;
    }
    return ~state;
#else
    return crc32c_fallback(data, size, crc);
#endif
}

std::uint32_t crc32c_fallback(const void* data, std::size_t size, std::uint32_t crc) noexcept {
#if defined(__x86_64__)
    if (have_sse42()) return ~sse42_raw(static_cast<const unsigned char*>(data), size, ~crc);
#endif
    return crc32c_portable(data, size, crc);
}

}  // namespace evring::detail
