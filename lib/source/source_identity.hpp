// Private to lib/: what event sources share to fill in SourceIdentity.
//
// Thread safety: pure functions, except file_identity which stats a file.
#pragma once

#include <cstdint>
#include <string>

#include "evring/source/event_source.hpp"
#include "evring/format.hpp"

namespace evring::detail {

// Mixes `value` into the digest `seed` (splitmix64's finaliser: every input
// bit affects every output bit).
inline std::uint64_t mix64(std::uint64_t seed, std::uint64_t value) noexcept {
    std::uint64_t z = seed + 0x9e3779b97f4a7c15ull + value;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Fills device, inode and a digest of them and the file's birth time (where
// the file system keeps one) into `identity`; leaves them 0 when `path`
// cannot be stated.
void file_identity(const std::string& path, SourceIdentity& identity);
// The same for the file open at `fd`: what a source reads, even when another
// file has taken its name since it was opened (a writer restarting there).
void file_identity(int fd, SourceIdentity& identity);

// Content type, schema hash and sizes from a ring header.
void ring_identity(const RingHeader& header, SourceIdentity& identity);

}  // namespace evring::detail
