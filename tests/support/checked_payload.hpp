// Test support: payloads that carry their own checksum, so a reader can prove
// it saw exactly the bytes a writer wrote.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace evring::test {

struct CheckedHeader {
    std::uint32_t writer;
    std::uint32_t length;   // bytes of filler after this header
    std::uint64_t counter;  // per-writer event number, from 0
    std::uint64_t checksum; // FNV-1a over writer, counter and filler
};

inline std::uint64_t fnv1a(const void* data, std::size_t size, std::uint64_t hash = 1469598103934665603ull) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    for (std::size_t i = 0; i < size; ++i) hash = (hash ^ p[i]) * 1099511628211ull;
    return hash;
}

inline std::size_t checked_payload_size(std::uint64_t counter, std::size_t max_filler) {
    return sizeof(CheckedHeader) + static_cast<std::size_t>((counter * 2654435761u) % (max_filler + 1));
}

inline void fill_checked_payload(std::byte* out, std::size_t size, std::uint32_t writer,
                                 std::uint64_t counter) {
    CheckedHeader h{writer, static_cast<std::uint32_t>(size - sizeof(CheckedHeader)), counter, 0};
    std::byte* filler = out + sizeof h;
    for (std::size_t i = 0; i < h.length; ++i)
        filler[i] = static_cast<std::byte>((counter + i * 7 + writer) & 0xff);
    std::uint64_t hash = fnv1a(&h.writer, 4);
    hash = fnv1a(&h.counter, 8, hash);
    h.checksum = fnv1a(filler, h.length, hash);
    std::memcpy(out, &h, sizeof h);
}

// True when `payload` of `size` bytes is a valid checked payload.
inline bool verify_checked_payload(const std::byte* payload, std::size_t size, CheckedHeader& h) {
    if (size < sizeof h) return false;
    std::memcpy(&h, payload, sizeof h);
    if (h.length != size - sizeof h) return false;
    std::uint64_t hash = fnv1a(&h.writer, 4);
    hash = fnv1a(&h.counter, 8, hash);
    return fnv1a(payload + sizeof h, h.length, hash) == h.checksum;
}

}  // namespace evring::test
