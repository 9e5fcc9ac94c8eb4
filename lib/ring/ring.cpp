// Laying out a ring file and checking ring headers. See ring.hpp; mapping is
// in mapped_ring.cpp.
#include "evring/ring/ring.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <fmt/format.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "evring/ring/ring_extension.hpp"
#include "ring/schema_blob.hpp"

namespace evring {
namespace {

std::string in_file(std::string_view path) { return fmt::format("ring file '{}'", path); }

// The magic as text, with anything unprintable shown as '?'.
std::string printable_magic(const RingHeader& header) {
    std::string shown;
    for (char c : header.magic) shown += (c >= 0x20 && c < 0x7f) ? c : '?';
    return shown;
}

// Control words a real ring can never hold: a damaged or hostile header.
Status check_control_words(const RingControl& control) {
    if (control.last_seqno > kMaxSeqno)
        return Error(EINVAL,
                     fmt::format("last_seqno {} is beyond {} (2^62), which no ring reaches: the "
                                 "header is damaged",
                                 control.last_seqno, kMaxSeqno));
    if (control.next_payload_byte > kMaxPayloadOffset)
        return Error(EINVAL, fmt::format("next_payload_byte {} is beyond {} (2^62), which no ring "
                                         "reaches: the header is damaged",
                                         control.next_payload_byte, kMaxPayloadOffset));
    if (control.buffer_window_start > kMaxPayloadOffset)
        return Error(EINVAL,
                     fmt::format("buffer_window_start {} is beyond {} (2^62), which no ring "
                                 "reaches: the header is damaged",
                                 control.buffer_window_start, kMaxPayloadOffset));
    return {};
}

}  // namespace

std::string hex_string(std::span<const std::uint8_t> bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (std::uint8_t b : bytes) {
        out += kDigits[b >> 4];
        out += kDigits[b & 15];
    }
    return out;
}

Result<BackingPages> backing_pages_of(int fd, std::string_view path) {
    struct statfs fs {};
    if (::fstatfs(fd, &fs) != 0)
        return Error::from_errno(errno, "finding the file system of '" + std::string(path) + "'");
    if (static_cast<std::uint64_t>(fs.f_type) == HUGETLBFS_MAGIC)
        return BackingPages{static_cast<std::uint64_t>(fs.f_bsize), true};
    return BackingPages{static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)), false};
}

Status validate_header(const RingHeader& header) {
    if (std::memcmp(header.magic.data(), kRingMagic.data(), kRingMagic.size()) != 0)
        return Error(
            EINVAL,
            fmt::format("not a RING01 event ring: magic is '{}' (hex {}), expected 'RING01'",
                        printable_magic(header),
                        hex_string({reinterpret_cast<const std::uint8_t*>(header.magic.data()),
                                    header.magic.size()})));
    if (header.content_type == static_cast<std::uint16_t>(ContentType::None))
        return Error(EINVAL, "content type is 0, which marks an invalid ring");
    // Validation of the sizes uses the smallest page we support: the page size
    // of the backing file system is checked again when mapping.
    if (auto s = validate_ring_size(header.size, 4096); !s)
        return std::move(s).context("the header's sizes are invalid");
    return check_control_words(header.control);
}

Status validate_header(const RingHeader& header, std::uint64_t file_size) {
    if (auto s = validate_header(header); !s) return s;
    const RingLayout layout = RingLayout::of(header.size);
    if (file_size < layout.file_size)
        return Error(EINVAL,
                     fmt::format("file is truncated: {} bytes, but its header describes {} bytes "
                                 "({} descriptors, {}-byte payload buffer, {}-byte context area)",
                                 file_size, layout.file_size, header.size.descriptor_capacity,
                                 header.size.payload_buf_size, header.size.context_area_size));
    if (file_size > layout.file_size)
        return Error(EINVAL,
                     fmt::format("file is {} bytes, larger than the {} bytes its header describes",
                                 file_size, layout.file_size));
    return {};
}

Status initialize_ring_file(int fd, const RingParams& params, std::string_view path) {
    auto backing = backing_pages_of(fd, path);
    if (!backing) return std::move(backing).error();
    if (params.content.content_type == static_cast<std::uint16_t>(ContentType::None))
        return Error(EINVAL,
                     "creating " + in_file(path) + ": content type 0 is reserved as invalid");
    if (auto s = validate_descriptor_shift(params.descriptor_shift); !s)
        return std::move(s).context("creating " + in_file(path));
    if (auto s = validate_payload_buf_shift(params.payload_buf_shift); !s)
        return std::move(s).context("creating " + in_file(path));
    const RingSize size = params.size();
    if (auto s = validate_ring_size(size, backing->page_size); !s)
        return std::move(s).context("creating " + in_file(path));
    const std::span<const std::byte> blob = params.content.schema_blob;
    if (!blob.empty())
        if (auto s = check_schema_blob_for_ring(blob, params.content.schema_hash); !s)
            return std::move(s).context("creating " + in_file(path));
    const RingLayout layout = RingLayout::of(size);

    if (int err = ::posix_fallocate(fd, 0, static_cast<off_t>(layout.file_size)); err != 0)
        return Error::from_errno(
            err, fmt::format("allocating {} bytes for {}", layout.file_size, in_file(path)));
    // A test hook: stop here, the file full size and its header not yet
    // written, so a test can SIGKILL a writer mid-creation (ring_debris.hpp).
    if (std::getenv("EVRING_TEST_STOP_AFTER_ALLOCATE") != nullptr) ::raise(SIGSTOP);

    // Map just the header and descriptor sections: the payload buffer's pages
    // are already allocated and old payload bytes are harmless.
    const std::size_t prefix = layout.payload_offset;
    void* p = ::mmap(nullptr, prefix, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return Error::from_errno(errno, "mapping the header of " + in_file(path));
    auto* bytes = static_cast<std::byte*>(p);
    std::memset(bytes, 0, prefix);
    auto* header = reinterpret_cast<RingHeader*>(bytes);
    header->content_type = params.content.content_type;
    header->schema_hash = params.content.schema_hash;
    header->size = size;
    // evring's extension block (ring_extension.hpp): our writers ring the doorbell.
    write_ring_extension(bytes, kRingFeatureDoorbell);
    // The embedded schema (schema_blob.hpp), after the extension block that
    // announces it and, like it, before the magic: immutable once readers can
    // see the ring.
    if (!blob.empty())
        if (auto s = write_schema_blob({bytes, kHeaderSectionSize}, blob); !s) {
            ::munmap(p, prefix);
            return std::move(s).context("creating " + in_file(path));
        }
    // The magic goes last: a file with a valid magic has a complete header.
    std::memcpy(header->magic.data(), kRingMagic.data(), kRingMagic.size());
    ::munmap(p, prefix);
    return {};
}

Status MappedRing::check_content_type(std::uint16_t content_type,
                                      std::span<const std::uint8_t, 32> schema_hash) const {
    const bool type_ok = header_->content_type == content_type;
    const bool hash_ok =
        std::memcmp(header_->schema_hash.data(), schema_hash.data(), schema_hash.size()) == 0;
    if (type_ok && hash_ok) return {};
    return Error(
        EPROTO, fmt::format("{} does not carry the expected events: content type {} (expected {}), "
                            "schema hash {} (expected {})",
                            in_file(path_), header_->content_type, content_type,
                            hex_string(header_->schema_hash), hex_string(schema_hash)));
}

}  // namespace evring
