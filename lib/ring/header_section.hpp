// A read-write mapping of our own of a ring file's header section, for a
// process that must write one of the extension block's shared words without
// holding a writable mapping of the ring: a sleeping read-only reader's
// doorbell word (doorbell.cpp, D1) and a reader's update of the interest word
// (registry/registry_interest.cpp, I3).
//
// The path is opened again, so it may name another file by now (a replaced
// ring, a snapshot's compressed file). It is mapped only if it is a regular
// file at least `min_size` bytes long (so touching the section cannot fault
// past the file's end) and, when `identity` is given, the same inode on the
// same device. The caller still checks the mapped header against what it
// expects: a file of the right size may be another ring.
//
// Concurrency: the mapping is MAP_SHARED, so a word written through it is the
// very word every writer's mapping sees. This file only gives the address;
// each access to the word goes through shared_word.hpp with the ordering its
// protocol step names (D1..D5 in doorbell.hpp, I1..I7 in
// registry_interest.hpp). The whole section is mapped: on hugetlbfs a mapping
// must start on a huge page; elsewhere only the touched page is faulted in.
//
// Thread safety: a value; unmapped by its destructor (or handed over by
// release()).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "evring/error.hpp"
#include "evring/ring/ring_extension.hpp"

namespace evring::detail {

// Which file the path must still name: st_dev and st_ino.
struct RingFileId {
    std::uint64_t device;
    std::uint64_t inode;
};

class WritableHeaderSection {
public:
    struct Expect {
        std::uint64_t min_size = kHeaderSectionSize;
        std::optional<RingFileId> identity;  // unchecked when empty
        // For the message when the file no longer fits: "'P' is not the
        // <file_role> any more".
        std::string_view file_role = "ring file";
    };

    // Errors name the path and `purpose` ("announce sleeps"): opening fails
    // with its errno, a file that is not the expected one with ESTALE,
    // mapping with its errno.
    static Result<WritableHeaderSection> map(const std::string& path, const Expect& expect,
                                             std::string_view purpose);

    WritableHeaderSection(WritableHeaderSection&& other) noexcept;
    WritableHeaderSection& operator=(WritableHeaderSection&&) = delete;
    ~WritableHeaderSection();

    // The section's first byte, the RingHeader's address.
    void* data() const noexcept { return mapping_; }
    RingExtension* extension() const noexcept { return extension_in(mapping_); }

    // Hands the mapping over; the new owner unmaps it with unmap().
    void* release() noexcept;
    static void unmap(void* mapping) noexcept;

private:
    explicit WritableHeaderSection(void* mapping) noexcept : mapping_(mapping) {}
    void* mapping_;
};

}  // namespace evring::detail
