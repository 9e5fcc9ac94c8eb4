// Fuzz target: the header and layout parsers, and opening a ring file. The
// input is the start of a ring file. Its header goes through validate_header
// (alone) and check_missing_tail, which must answer without overflowing;
// then it is written to a memfd which is extended with zeros to the size its
// header describes (when that size is small enough to map quickly), so a
// tiny input stands for a whole ring. MappedRing::map must either reject it
// with a message or map it, and then every reader operation, and a snapshot
// of it loaded back, must stay inside the mappings (exercise.hpp).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "evring/config.hpp"
#include "evring/ring/ring.hpp"
#include "ring/snapshot.hpp"
#include "exercise.hpp"

namespace {

constexpr std::uint64_t kMaxPaddedSize = std::uint64_t{24} << 20;

std::uint64_t padded_size(const std::uint8_t* data, std::size_t size) {
    if (size < sizeof(evring::RingHeader)) return size;
    evring::RingHeader header;
    std::memcpy(&header, data, sizeof header);
    if (!evring::validate_ring_size(header.size, 4096).ok()) return size;
    const std::uint64_t wanted = evring::RingLayout::of(header.size).file_size;
    return wanted > size && wanted <= kMaxPaddedSize ? wanted : size;
}

}  // namespace

// The header parsers on their own: a message for every refusal, and a layout
// that adds up for every acceptance.
void check_header_parsers(const std::uint8_t* data, std::size_t size) {
    if (size < sizeof(evring::RingHeader)) return;
    evring::RingHeader header;
    std::memcpy(&header, data, sizeof header);
    auto valid = evring::validate_header(header);
    if (!valid) {
        EVRING_FUZZ_CHECK(!valid.error().message().empty());
    } else {
        const evring::RingLayout layout = evring::RingLayout::of(header.size);
        EVRING_FUZZ_CHECK(layout.payload_offset > layout.descriptors_offset);
        EVRING_FUZZ_CHECK(layout.file_size >= layout.context_offset);
        EVRING_FUZZ_CHECK(layout.context_offset > layout.payload_offset);
    }
    auto tail = evring::check_missing_tail(header, size);
    if (!tail) EVRING_FUZZ_CHECK(!tail.error().message().empty());
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    check_header_parsers(data, size);
    const int fd = ::memfd_create("evring-fuzz-ring", MFD_CLOEXEC);
    if (fd < 0) __builtin_trap();
    if (size > 0 && ::write(fd, data, size) != static_cast<ssize_t>(size)) __builtin_trap();
    const std::uint64_t file_size = padded_size(data, size);
    if (file_size > size && ::ftruncate(fd, static_cast<off_t>(file_size)) != 0) __builtin_trap();
    auto ring = evring::MappedRing::map(fd, evring::Access::ReadOnly, "fuzz-input");
    ::close(fd);
    if (!ring) {
        EVRING_FUZZ_CHECK(!ring.error().message().empty());
        evring::fuzz::tally("map_ring", &ring.error().message());
        return 0;
    }
    evring::fuzz::tally("map_ring", nullptr);
    // What follows the header (and is zero padding beyond the input) drives the reader.
    const std::size_t script_at = size > 256 ? 256 : size;
    evring::fuzz::Script script(data + script_at, size - script_at);
    evring::fuzz::exercise_reader(*ring, script, 256, true);
    return 0;
}
