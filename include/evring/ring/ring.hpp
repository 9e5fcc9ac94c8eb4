// evring/ring/ring.hpp — creating a ring file's contents and mapping a ring.
//
// Contract:
// - `initialize_ring_file` turns an open, writable file into an empty ring:
//   it validates the sizes against the file system's page size, allocates all
//   storage up front (posix_fallocate, so a full huge page pool fails here and
//   never as SIGBUS later), writes the header and zeroes the descriptors. It
//   does not decide where the file lives or who owns it (ring_writer.hpp
//   does).
// - `MappedRing::map` validates a file's header against its size before
//   mapping anything, then maps the header and descriptors, the payload buffer
//   twice back to back (so a payload that wraps the end is contiguous), and the
//   context area. Readers map read-only, writers read-write; pages are
//   pre-faulted (MAP_POPULATE), except the payload buffer's second view, and
//   come from huge pages when the file is on hugetlbfs. The second view is
//   only touched by payloads that wrap the end of the buffer, each page of it
//   faulting once (a minor fault, no I/O) on first use; populating it too
//   doubled the page-table entries a 4 KiB-page ring keeps mapped and, on the
//   virtual machine it was measured on, doubled the reader's stalls and its
//   p99 latency (docs/performance.md, "The latency tail").
//
// Thread safety: a MappedRing is immutable after `map` returns and may be used
// from many threads; the shared memory it points at is accessed only through
// the protocols in publisher.hpp and iterator.hpp. Across processes, any number
// of readers and writers may map the same file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "evring/config.hpp"
#include "evring/error.hpp"
#include "evring/format.hpp"

namespace evring {

enum class Access { ReadOnly, ReadWrite };

// The page size of the file system `fd` lives on (the huge page size on
// hugetlbfs, the base page size elsewhere), and whether it is hugetlbfs.
struct BackingPages {
    std::uint64_t page_size;
    bool hugetlbfs;
};
Result<BackingPages> backing_pages_of(int fd, std::string_view path);

// Lays out an empty ring in `fd` (see the contract above). `path` is only used
// in error messages.
Status initialize_ring_file(int fd, const RingParams& params, std::string_view path);

// Validates a header copy on its own: magic, content type, sizes (powers of
// two, ranges, sections that add up without overflow) and control words
// within bounds. The error names the field and its value.
Status validate_header(const RingHeader& header);
// The same, and the file must be exactly as large as the header describes.
Status validate_header(const RingHeader& header, std::uint64_t file_size);

struct MapOptions {
    // Fault every page in at map time (MAP_POPULATE), so the hot paths never
    // take a page fault (wrapping payloads excepted: see above). Off for rings
    // in memory that should only cost the pages they use (snapshots).
    bool prefault = true;
};

class MappedRing {
public:
    // Maps the ring held by `fd`. The mapping does not keep `fd` open.
    static Result<MappedRing> map(int fd, Access access, std::string path,
                                  MapOptions options = {});

    MappedRing(MappedRing&& other) noexcept;
    MappedRing& operator=(MappedRing&& other) noexcept;
    MappedRing(const MappedRing&) = delete;
    MappedRing& operator=(const MappedRing&) = delete;
    ~MappedRing();

    RingHeader& header() const noexcept { return *header_; }
    // The whole 2 MiB header section from the file's first byte: the RING01
    // header, evring's extension block (ring_extension.hpp) and the embedded
    // schema (schema_blob.hpp). Read-only: beyond the header, only the
    // doorbell word changes after creation.
    std::span<const std::byte> header_section() const noexcept {
        return {reinterpret_cast<const std::byte*>(header_), kHeaderSectionSize};
    }
    DescriptorSlot* descriptors() const noexcept { return descriptors_; }
    // Valid for [0, 2 * payload_buf_size): the second half aliases the first.
    std::byte* payload_buffer() const noexcept { return payload_; }
    std::span<std::byte> context_area() const noexcept { return {context_, layout_.size.context_area_size}; }

    const RingLayout& layout() const noexcept { return layout_; }
    std::uint64_t descriptor_mask() const noexcept { return layout_.size.descriptor_capacity - 1; }
    std::uint64_t payload_mask() const noexcept { return layout_.size.payload_buf_size - 1; }
    std::uint16_t content_type() const noexcept { return header_->content_type; }

    Access access() const noexcept { return access_; }
    const std::string& path() const noexcept { return path_; }
    const BackingPages& backing() const noexcept { return backing_; }

    // Fails (EPROTO) unless the ring carries `content_type` with `schema_hash`;
    // the message shows the expected and the actual values.
    Status check_content_type(std::uint16_t content_type,
                              std::span<const std::uint8_t, 32> schema_hash) const;

    // True when this is the mapping of a RingWriter that holds the ring
    // exclusively (WriterProcesses::One): no other evring writer process can
    // join it, so its publishers may claim the plain-store reservation
    // (writer_claim.hpp). False for every other mapping.
    bool held_exclusively() const noexcept { return held_exclusively_; }

private:
    friend class RingWriter;  // sets held_exclusively_
    MappedRing() = default;
    void release() noexcept;

    std::byte* region_ = nullptr;  // start of everything we mapped
    std::size_t region_size_ = 0;
    RingHeader* header_ = nullptr;
    DescriptorSlot* descriptors_ = nullptr;
    std::byte* payload_ = nullptr;
    std::byte* context_ = nullptr;
    RingLayout layout_{};
    Access access_ = Access::ReadOnly;
    BackingPages backing_{};
    std::string path_;
    bool held_exclusively_ = false;
};

// Renders 32 bytes as 64 lower-case hex digits.
std::string hex_string(std::span<const std::uint8_t> bytes);

}  // namespace evring
