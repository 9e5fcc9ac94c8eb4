// lib/registry/reader_registry.hpp — where a ring's reader registry lives, the
// states a registry file can be in (the ring writer's part: files/writer_registry.hpp).
//
// Readers that want to be seen (`evring readers`, `info`, `top`, `metrics`)
// announce themselves in a registry: reader_registration.hpp is the reader's
// side, reader_listing.hpp the lister's. This header holds what both share.
//
// Contract:
// - The registry of the ring at path P is the file P + ".readers", in the
//   ring's own directory: whoever can see the ring (a container with the ring
//   directory bind-mounted, say) sees its registry, under the same directory
//   permissions. On hugetlbfs it takes one huge page (a file there must be
//   mapped in whole huge pages and cannot be written with write(2); the
//   registry is only ever mapped). docs/operations.md gives the reasons.
// - A registry appears at its name only complete: it is built under
//   `<registry>.<pid>` and renamed into place (no replace), so the first
//   registrant creates it race-free; of two, one creates and the other uses
//   it. It is created with the ring file's permission bits (without execute)
//   unless told otherwise, applied exactly whatever the umask: with the
//   default ring mode 0664, the ring's owner and group may register, others
//   may list. A reader that cannot write the registry (or create it) still
//   reads the ring, unregistered (reader_registration.hpp).
// - A registry belongs to one ring instance (RingIdentity in
//   reader_registry_format.hpp). One that belongs to another instance (the
//   ring was re-created under the same name) or whose header is damaged is
//   reported as such, never trusted; a registrant (or the ring's writer)
//   replaces it with a fresh one under an flock on the old file, so of two
//   replacers one replaces and the other uses the result. A file at the name
//   that is not a registry (wrong magic) or is of a newer version is never
//   replaced or written.
// - A registry goes with its ring: the writer that removes its ring, or
//   the last reader of a removed ring, removes it (lib/registry/registry_remove.cpp);
//   what killed processes leave is debris (ring_debris.hpp).
// - The ring file is never written, locked or changed by any of this.
//
// Thread safety: free functions; creation is serialised within a process.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "evring/error.hpp"
#include "registry/reader_registry_format.hpp"

namespace evring {

// What a registry file at a ring's registry path is.
enum class RegistryState {
    Missing,             // no file: no reader has registered
    Valid,               // a registry of this ring instance
    NotARegistry,        // a file that is not a reader registry: never touched
    UnsupportedVersion,  // a registry of a newer format: never touched
    Damaged,             // a registry whose header fails validation
    OtherRing,           // a valid registry of another ring (an earlier instance)
    Unreadable,          // exists but cannot be opened or read (permissions)
};
// "missing", "valid", "not-a-registry", "unsupported-version", "damaged",
// "other-ring", "unreadable": stable, for --json.
const char* to_string(RegistryState state) noexcept;

// P + ".readers".
std::string reader_registry_path(std::string_view ring_path);

// How a registry is made when the caller is the one to create it (a reader,
// reader_registration.hpp, or the ring's writer, files/writer_registry.hpp).
struct RegistryFileOptions {
    std::string path;                                   // empty: reader_registry_path(ring path)
    std::uint32_t capacity = kRegistryDefaultCapacity;  // slots, 1..kRegistryMaxCapacity
    mode_t file_mode = 0;  // 0: the ring file's permission bits without execute
};

}  // namespace evring
