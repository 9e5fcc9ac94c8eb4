// lib/util/device_id.hpp — a file's device number as evring stores it (private).
//
// Two spellings exist, each in a format that cannot change:
// - device_id(): (major << 32) | minor, the same from stat and statx and
//   independent of the C library's dev_t layout. SourceIdentity::device holds
//   it, and the ring instance digest (source_identity.cpp) mixes it in, so
//   instance ids published to NATS streams stay equal across versions.
// - dev_t_of(): the C library's dev_t (what st_dev holds), which the reader
//   registry stores (reader_registry_format.hpp, RingIdentity::device).
//
// Thread safety: pure functions.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdint>

namespace evring::detail {

inline std::uint64_t device_id(unsigned major_number, unsigned minor_number) noexcept {
    return (std::uint64_t{major_number} << 32) | minor_number;
}
inline std::uint64_t device_id(const struct stat& st) noexcept { return device_id(major(st.st_dev), minor(st.st_dev)); }
inline std::uint64_t device_id(const struct statx& st) noexcept {
    return device_id(st.stx_dev_major, st.stx_dev_minor);
}

inline std::uint64_t dev_t_of(const struct statx& st) noexcept {
    return static_cast<std::uint64_t>(makedev(st.stx_dev_major, st.stx_dev_minor));
}

}  // namespace evring::detail
