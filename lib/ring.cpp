#include "evring/ring.hpp"
#include "evring/ring_extension.hpp"
#include "regular_file.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <utility>

namespace evring {
namespace {

std::string format(const char* fmt, auto... args) {
    char buf[512];
    std::snprintf(buf, sizeof buf, fmt, args...);
    return buf;
}

std::string in_file(std::string_view path) {
    std::string out = "ring file '";
    out += path;
    out += "'";
    return out;
}

// Reads the header with pread so that a file is validated before anything is
// mapped: a short or hostile file can then never be dereferenced.
Result<RingHeader> read_header(int fd, std::string_view path) {
    RingHeader header{};
    ssize_t n = ::pread(fd, &header, sizeof header, 0);
    if (n < 0) return Error::from_errno(errno, "reading the header of " + in_file(path));
    if (static_cast<std::size_t>(n) < sizeof header)
        return Error(EINVAL, in_file(path) + format(" is truncated: %zd bytes, shorter than the "
                                                    "%zu-byte RING01 header",
                                                    n, sizeof header));
    return header;
}

void* map_fixed(void* at, std::size_t length, int prot, int fd, std::uint64_t offset,
                bool prefault) {
    // MAP_POPULATE pre-faults the pages so the hot paths never take a fault.
    return ::mmap(at, length, prot, MAP_SHARED | MAP_FIXED | (prefault ? MAP_POPULATE : 0), fd,
                  static_cast<off_t>(offset));
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
    if (std::memcmp(header.magic.data(), kRingMagic.data(), kRingMagic.size()) != 0) {
        char shown[7] = {};
        for (int i = 0; i < 6; ++i) {
            char c = header.magic[static_cast<std::size_t>(i)];
            shown[i] = (c >= 0x20 && c < 0x7f) ? c : '?';
        }
        return Error(EINVAL, format("not a RING01 event ring: magic is '%s' (hex %s), expected "
                                    "'RING01'",
                                    shown,
                                    hex_string({reinterpret_cast<const std::uint8_t*>(
                                                    header.magic.data()),
                                                6})
                                        .c_str()));
    }
    if (header.content_type == static_cast<std::uint16_t>(ContentType::None))
        return Error(EINVAL, "content type is 0, which marks an invalid ring");
    // Validation of the sizes uses the smallest page we support: the page size
    // of the backing file system is checked again when mapping.
    if (auto s = validate_ring_size(header.size, 4096); !s)
        return std::move(s).context("the header's sizes are invalid");
    return {};
}

Status validate_header(const RingHeader& header, std::uint64_t file_size) {
    if (auto s = validate_header(header); !s) return s;
    const RingLayout layout = RingLayout::of(header.size);
    if (file_size < layout.file_size)
        return Error(EINVAL, format("file is truncated: %" PRIu64 " bytes, but its header "
                                    "describes %" PRIu64 " bytes (%" PRIu64 " descriptors, %" PRIu64
                                    "-byte payload buffer, %" PRIu64 "-byte context area)",
                                    file_size, layout.file_size, header.size.descriptor_capacity,
                                    header.size.payload_buf_size, header.size.context_area_size));
    if (file_size > layout.file_size)
        return Error(EINVAL, format("file is %" PRIu64 " bytes, larger than the %" PRIu64
                                    " bytes its header describes",
                                    file_size, layout.file_size));
    return {};
}

Status initialize_ring_file(int fd, const RingParams& params, std::string_view path) {
    auto backing = backing_pages_of(fd, path);
    if (!backing) return std::move(backing).error();
    if (params.content.content_type == static_cast<std::uint16_t>(ContentType::None))
        return Error(EINVAL, "creating " + in_file(path) + ": content type 0 is reserved as invalid");
    if (auto s = validate_descriptor_shift(params.descriptor_shift); !s)
        return std::move(s).context("creating " + in_file(path));
    if (auto s = validate_payload_buf_shift(params.payload_buf_shift); !s)
        return std::move(s).context("creating " + in_file(path));
    const RingSize size = params.size();
    if (auto s = validate_ring_size(size, backing->page_size); !s)
        return std::move(s).context("creating " + in_file(path));
    const RingLayout layout = RingLayout::of(size);

    if (int err = ::posix_fallocate(fd, 0, static_cast<off_t>(layout.file_size)); err != 0) {
        return Error::from_errno(
            err, format("allocating %" PRIu64 " bytes for ", layout.file_size) + in_file(path));
    }

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
    // The magic goes last: a file with a valid magic has a complete header.
    std::memcpy(header->magic.data(), kRingMagic.data(), kRingMagic.size());
    ::munmap(p, prefix);
    return {};
}

Result<MappedRing> MappedRing::map(int fd, Access access, std::string path, MapOptions options) {
    if (auto s = detail::check_regular_file(fd, in_file(path)); !s) return std::move(s).error();
    struct stat st {};
    if (::fstat(fd, &st) != 0) return Error::from_errno(errno, "examining " + in_file(path));
    auto header = read_header(fd, path);
    if (!header) return std::move(header).error();
    if (auto s = validate_header(*header, static_cast<std::uint64_t>(st.st_size)); !s)
        return std::move(s).context(in_file(path)).error();
    auto backing = backing_pages_of(fd, path);
    if (!backing) return std::move(backing).error();
    if (auto s = validate_ring_size(header->size, backing->page_size); !s)
        return std::move(s).context(in_file(path) + " cannot be mapped").error();

    MappedRing ring;
    ring.layout_ = RingLayout::of(header->size);
    ring.access_ = access;
    ring.backing_ = *backing;
    ring.path_ = std::move(path);
    const RingLayout& layout = ring.layout_;
    const std::uint64_t payload_size = layout.size.payload_buf_size;
    const std::uint64_t context_size = layout.size.context_area_size;

    // One reservation covers header+descriptors, the payload twice, and the
    // context area, aligned to 2 MiB so hugetlbfs can map into it.
    const std::size_t wanted = layout.payload_offset + 2 * payload_size + context_size;
    const std::size_t reserve = wanted + kSectionAlignment;
    void* r = ::mmap(nullptr, reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
    if (r == MAP_FAILED)
        return Error::from_errno(errno, format("reserving %zu bytes of address space for ", reserve) +
                                            in_file(ring.path_));
    auto* raw = static_cast<std::byte*>(r);
    auto* base = reinterpret_cast<std::byte*>(
        RingLayout::align_up(reinterpret_cast<std::uintptr_t>(raw), kSectionAlignment));
    // Give back the unaligned head and the unused tail of the reservation.
    if (base > raw) ::munmap(raw, static_cast<std::size_t>(base - raw));
    std::byte* tail = base + wanted;
    std::size_t tail_size = static_cast<std::size_t>((raw + reserve) - tail);
    if (tail_size > 0) ::munmap(tail, tail_size);
    ring.region_ = base;
    ring.region_size_ = wanted;

    const int prot = access == Access::ReadWrite ? PROT_READ | PROT_WRITE : PROT_READ;
    struct Piece {
        std::byte* at;
        std::size_t length;
        std::uint64_t file_offset;
        const char* what;
    };
    const Piece pieces[] = {
        {base, layout.payload_offset, 0, "header and descriptors"},
        {base + layout.payload_offset, payload_size, layout.payload_offset, "payload buffer"},
        {base + layout.payload_offset + payload_size, payload_size, layout.payload_offset,
         "payload buffer (second view)"},
        {base + layout.payload_offset + 2 * payload_size, context_size, layout.context_offset,
         "context area"},
    };
    for (const Piece& piece : pieces) {
        if (piece.length == 0) continue;
        if (map_fixed(piece.at, piece.length, prot, fd, piece.file_offset, options.prefault) ==
            MAP_FAILED) {
            int err = errno;
            return Error::from_errno(err, std::string("mapping the ") + piece.what + " of " +
                                              in_file(ring.path_));
            // `ring`'s destructor unmaps the whole region.
        }
    }
    ring.header_ = reinterpret_cast<RingHeader*>(base);
    ring.descriptors_ = reinterpret_cast<DescriptorSlot*>(base + layout.descriptors_offset);
    ring.payload_ = base + layout.payload_offset;
    ring.context_ = base + layout.payload_offset + 2 * payload_size;
    return ring;
}

MappedRing::MappedRing(MappedRing&& other) noexcept { *this = std::move(other); }

MappedRing& MappedRing::operator=(MappedRing&& other) noexcept {
    if (this != &other) {
        release();
        region_ = std::exchange(other.region_, nullptr);
        region_size_ = std::exchange(other.region_size_, 0);
        header_ = std::exchange(other.header_, nullptr);
        descriptors_ = std::exchange(other.descriptors_, nullptr);
        payload_ = std::exchange(other.payload_, nullptr);
        context_ = std::exchange(other.context_, nullptr);
        layout_ = other.layout_;
        access_ = other.access_;
        backing_ = other.backing_;
        path_ = std::move(other.path_);
    }
    return *this;
}

MappedRing::~MappedRing() { release(); }

void MappedRing::release() noexcept {
    if (region_ != nullptr) ::munmap(region_, region_size_);
    region_ = nullptr;
}

Status MappedRing::check_content_type(std::uint16_t content_type,
                                      std::span<const std::uint8_t, 32> schema_hash) const {
    const bool type_ok = header_->content_type == content_type;
    const bool hash_ok =
        std::memcmp(header_->schema_hash.data(), schema_hash.data(), schema_hash.size()) == 0;
    if (type_ok && hash_ok) return {};
    return Error(EPROTO,
                 in_file(path_) +
                     format(" does not carry the expected events: content type %u (expected %u), "
                            "schema hash %s (expected %s)",
                            unsigned{header_->content_type}, unsigned{content_type},
                            hex_string(header_->schema_hash).c_str(),
                            hex_string(schema_hash).c_str()));
}

}  // namespace evring
