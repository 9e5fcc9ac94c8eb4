// Mapping a ring file: check first, then map inside one reservation. See
// ring.hpp for the contract.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <utility>

#include "evring/config.hpp"
#include "evring/ring/ring.hpp"
#include "util/regular_file.hpp"

namespace evring {
namespace {

std::string in_file(std::string_view path) { return fmt::format("ring file '{}'", path); }

// Step 1: the header, read with pread and validated against the file and
// the page size of its file system before anything is mapped, so a short or
// hostile file is never dereferenced.
struct CheckedRing {
    RingHeader header;
    BackingPages backing;
};

Result<CheckedRing> read_checked_header(int fd, std::string_view path) {
    if (auto s = detail::check_regular_file(fd, in_file(path)); !s) return std::move(s).error();
    struct stat st {};
    if (::fstat(fd, &st) != 0) return Error::from_errno(errno, "examining " + in_file(path));
    CheckedRing checked{};
    const ssize_t n = ::pread(fd, &checked.header, sizeof checked.header, 0);
    if (n < 0) return Error::from_errno(errno, "reading the header of " + in_file(path));
    if (static_cast<std::size_t>(n) < sizeof checked.header)
        return Error(EINVAL,
                     fmt::format("{} is truncated: {} bytes, shorter than the {}-byte RING01 "
                                 "header",
                                 in_file(path), n, sizeof checked.header));
    if (auto s = validate_header(checked.header, static_cast<std::uint64_t>(st.st_size)); !s)
        return std::move(s).context(in_file(path)).error();
    auto backing = backing_pages_of(fd, path);
    if (!backing) return std::move(backing).error();
    if (auto s = validate_ring_size(checked.header.size, backing->page_size); !s)
        return std::move(s).context(in_file(path) + " cannot be mapped").error();
    checked.backing = *backing;
    return checked;
}

// Step 2: `size` bytes of address space, aligned to 2 MiB so hugetlbfs can
// map into it, reserved with PROT_NONE; nothing is ever mapped outside it.
Result<std::byte*> reserve_region(std::size_t size, std::string_view path) {
    const std::size_t reserve = size + kSectionAlignment;
    void* r =
        ::mmap(nullptr, reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED)
        return Error::from_errno(errno, fmt::format("reserving {} bytes of address space for {}",
                                                    reserve, in_file(path)));
    auto* raw = static_cast<std::byte*>(r);
    auto* base = reinterpret_cast<std::byte*>(
        RingLayout::align_up(reinterpret_cast<std::uintptr_t>(raw), kSectionAlignment));
    // Give back the unaligned head and the unused tail of the reservation.
    if (base > raw) ::munmap(raw, static_cast<std::size_t>(base - raw));
    std::byte* tail = base + size;
    const auto tail_size = static_cast<std::size_t>((raw + reserve) - tail);
    if (tail_size > 0) ::munmap(tail, tail_size);
    return base;
}

// One mapping of part of the file into the reservation.
struct Piece {
    std::size_t at;  // offset in the reservation
    std::size_t length;
    std::uint64_t file_offset;
    const char* what;
};

// The pieces tile the reservation [0, region_size(layout)) exactly, in
// order: header and descriptors, the payload buffer twice, the context area.
std::size_t region_size(const RingLayout& layout) {
    return layout.payload_offset + 2 * layout.size.payload_buf_size + layout.size.context_area_size;
}

void pieces_of(const RingLayout& layout, Piece (&pieces)[4]) {
    const std::uint64_t payload = layout.size.payload_buf_size;
    pieces[0] = {0, layout.payload_offset, 0, "header and descriptors"};
    pieces[1] = {layout.payload_offset, payload, layout.payload_offset, "payload buffer"};
    pieces[2] = {layout.payload_offset + payload, payload, layout.payload_offset,
                 "payload buffer (second view)"};
    pieces[3] = {layout.payload_offset + 2 * payload, layout.size.context_area_size,
                 layout.context_offset, "context area"};
}

// Step 3: the file's sections, MAP_FIXED over the reservation.
Status map_pieces(std::byte* base, const RingLayout& layout, int fd, Access access, bool prefault,
                  std::string_view path) {
    const int prot = access == Access::ReadWrite ? PROT_READ | PROT_WRITE : PROT_READ;
    // MAP_POPULATE pre-faults the pages so the hot paths never take a fault,
    // except in the payload's second view (pieces[2]), which only wrapping
    // payloads touch: populated, it doubled the page-table entries of a
    // 4 KiB-page ring and the reader's stalls with them (ring.hpp).
    const int flags = MAP_SHARED | MAP_FIXED;
    Piece pieces[4];
    pieces_of(layout, pieces);
    for (const Piece& piece : pieces) {
        if (piece.length == 0) continue;
        const bool populate = prefault && &piece != &pieces[2];
        if (::mmap(base + piece.at, piece.length, prot, flags | (populate ? MAP_POPULATE : 0), fd,
                   static_cast<off_t>(piece.file_offset)) == MAP_FAILED)
            return Error::from_errno(
                errno, fmt::format("mapping the {} of {}", piece.what, in_file(path)));
    }
    return {};
}

}  // namespace

Result<MappedRing> MappedRing::map(int fd, Access access, std::string path, MapOptions options) {
    auto checked = read_checked_header(fd, path);
    if (!checked) return std::move(checked).error();
    MappedRing ring;
    ring.layout_ = RingLayout::of(checked->header.size);
    ring.access_ = access;
    ring.backing_ = checked->backing;
    ring.path_ = std::move(path);
    const RingLayout& layout = ring.layout_;
    auto base = reserve_region(region_size(layout), ring.path_);
    if (!base) return std::move(base).error();
    ring.region_ = *base;
    ring.region_size_ = region_size(layout);
    // On failure `ring`'s destructor unmaps the whole region.
    if (auto s = map_pieces(*base, layout, fd, access, options.prefault, ring.path_); !s)
        return std::move(s).error();
    ring.header_ = reinterpret_cast<RingHeader*>(*base);
    ring.descriptors_ = reinterpret_cast<DescriptorSlot*>(*base + layout.descriptors_offset);
    ring.payload_ = *base + layout.payload_offset;
    ring.context_ = *base + layout.payload_offset + 2 * layout.size.payload_buf_size;
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
        held_exclusively_ = std::exchange(other.held_exclusively_, false);
    }
    return *this;
}

MappedRing::~MappedRing() { release(); }

void MappedRing::release() noexcept {
    if (region_ != nullptr) ::munmap(region_, region_size_);
    region_ = nullptr;
}

}  // namespace evring
