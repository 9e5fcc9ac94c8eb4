// lib/registry/registry_identity.hpp — who a ring instance and a reader process are,
// as the reader registry records them (private to the library; tests
// include it).
//
// Thread safety: free functions; this_process() reads /proc once per call.
#pragma once

#include <cstdint>
#include <string>

#include "evring/error.hpp"
#include "evring/format.hpp"
#include "registry/reader_registry_format.hpp"

namespace evring::detail {

// The identity of the ring file `ring_fd` (device, inode, birth time when
// the file system records one) with the header's fixed fields.
Result<RingIdentity> ring_identity_of(int ring_fd, const RingHeader& header);

// Empty when the two are the same ring instance; otherwise says which field
// differs and both values ("ring inode is 12 in the registry, 34 for the ring").
std::string identity_mismatch(const RingIdentity& registry, const RingIdentity& ring);

// The calling process as a registry entry names it.
struct ProcessIdentity {
    std::uint64_t pid = 0;
    std::uint64_t pid_namespace = 0;  // inode of /proc/self/ns/pid; 0 when unknown
    std::uint64_t start_ticks = 0;    // field 22 of /proc/self/stat; 0 when unknown
    std::uint32_t uid = 0;
};
ProcessIdentity this_process();

// Field 22 (starttime) of a /proc/<pid>/stat text; 0 when it does not parse.
std::uint64_t start_ticks_from_stat(const std::string& stat_text);

}  // namespace evring::detail
