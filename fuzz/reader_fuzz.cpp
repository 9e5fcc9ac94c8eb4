// Fuzz target: reading a ring whose control words, extension block,
// descriptor array and payload bytes are all fuzz bytes (a hostile writer).
// The ring is the smallest one (64 descriptors, 4 KiB payload buffer), made
// once in a memfd; each input overwrites its mutable parts:
//   bytes [0, 24)        control words: last_seqno, next_payload_byte, buffer_window_start
//   bytes [24, 88)       the first line of the extension block (magic, features) and the doorbell word
//   bytes [88, 4184)     the descriptor array
//   bytes [4184, 8280)   the payload buffer
//   the rest             a script of reader operations (exercise.hpp)
// Missing bytes are zeros.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>

#include "evring/ring/ring.hpp"
#include "evring/ring/ring_extension.hpp"
#include "exercise.hpp"

namespace {

struct Rings {
    evring::MappedRing writable;
    evring::MappedRing readable;
};

Rings& rings() {
    static std::optional<Rings> made = [] {
        const int fd = ::memfd_create("evring-fuzz-reader", MFD_CLOEXEC);
        evring::RingParams params;
        params.content.content_type = 1;
        params.descriptor_shift = evring::kMinDescriptorShift;
        params.payload_buf_shift = evring::kMinPayloadBufShift;
        if (fd < 0 || !evring::initialize_ring_file(fd, params, "fuzz-reader").ok()) __builtin_trap();
        auto w = evring::MappedRing::map(fd, evring::Access::ReadWrite, "fuzz-reader");
        auto r = evring::MappedRing::map(fd, evring::Access::ReadOnly, "fuzz-reader");
        ::close(fd);
        if (!w || !r) __builtin_trap();
        return std::optional<Rings>(Rings{std::move(w).value(), std::move(r).value()});
    }();
    return *made;
}

// Copies the next `n` input bytes to `dst`, zero-filling past the input.
void take(const std::uint8_t*& data, std::size_t& size, void* dst, std::size_t n) {
    const std::size_t k = std::min(n, size);
    std::memcpy(dst, data, k);
    std::memset(static_cast<std::byte*>(dst) + k, 0, n - k);
    data += k;
    size -= k;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Rings& r = rings();
    evring::RingHeader& header = r.writable.header();
    take(data, size, &header.control.last_seqno, 8);
    take(data, size, &header.control.next_payload_byte, 8);
    take(data, size, &header.control.buffer_window_start, 8);
    evring::RingExtension* extension = evring::extension_in(&header);
    take(data, size, extension, 16);
    take(data, size, &extension->doorbell, 4);
    take(data, size, &extension->reserved1, 44);
    take(data, size, r.writable.descriptors(), r.writable.layout().size.descriptor_capacity * 64);
    take(data, size, r.writable.payload_buffer(), r.writable.layout().size.payload_buf_size);
    evring::fuzz::Script script(data, size);
    // One input in 16 (by its script length, so a crash reproduces) also round-trips a snapshot.
    evring::fuzz::exercise_reader(r.readable, script, 512, size % 16 == 0);
    return 0;
}
