// The classic RING01 peer's protocol (bench/ipc/classic_peer.cpp runs it in
// its own processes; bench/cost/event_cost.cpp counts its instructions under
// cachegrind): mapping the ring, one publication, one poll of the reader. The
// steps K1..K7 and the reader's checks are described in classic_peer.cpp.
//
// Bench code only, single-threaded per process (see classic_peer.cpp).
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "evring/ring/shared_word.hpp"
#include "ipc/common.hpp"
#include "support/bench_ring.hpp"

namespace evring::ipc {

constexpr std::uint64_t kDescriptorsAt = 2u << 20;  // descriptor array: 2 MiB into the file
constexpr std::uint64_t kWindowStep = 16u << 20;    // the reference's window increment

// The classic descriptor, filled by plain stores.
struct ClassicDescriptor {
    std::uint64_t seqno;
    std::uint16_t event_type;
    std::uint16_t unused;
    std::uint32_t payload_size;
    std::uint64_t record_epoch_nanos;
    std::uint64_t payload_buf_offset;
    std::uint64_t content_ext[4];
};
static_assert(sizeof(ClassicDescriptor) == 64);

struct ClassicRing {
    std::byte* base = nullptr;
    std::uint64_t file_size = 0;
    std::uint64_t capacity = 0;
    std::uint64_t payload_size = 0;
    std::uint64_t* last_seqno = nullptr;
    std::uint64_t* next_payload_byte = nullptr;
    std::uint64_t* window_start = nullptr;
    ClassicDescriptor* descriptors = nullptr;
    std::byte* payload = nullptr;

    ~ClassicRing() {
        if (base != nullptr) ::munmap(base, file_size);
    }
};

// `double_map` (an experiment, --compare-variant doublemap): the payload
// buffer is mapped a second time right after the file, as evring maps it, to
// see whether the second view alone changes the reader's stalls; with
// EVRING_BENCH_LAZY_SECOND_VIEW set in the environment the second view is
// mapped without MAP_POPULATE (docs/performance.md, experiment 5).
inline void map_classic(const std::string& path, bool writable, ClassicRing& ring, bool double_map = false) {
    const int fd = ::open(path.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    if (fd < 0) bench::die("classic: opening " + path + ": " + std::strerror(errno));
    const off_t size = ::lseek(fd, 0, SEEK_END);
    const int prot = PROT_READ | (writable ? PROT_WRITE : 0);
    void* p = nullptr;
    std::uint64_t extra = 0;
    if (double_map) {
        std::uint64_t payload_size = 0, capacity = 0;
        if (::pread(fd, &capacity, 8, 40) != 8 || ::pread(fd, &payload_size, 8, 48) != 8)
            bench::die("classic: reading the header of " + path);
        const std::uint64_t payload_at = kDescriptorsAt + capacity * 64;
        if (payload_at + payload_size != static_cast<std::uint64_t>(size))
            bench::die("classic: double_map needs a ring without a context area");
        extra = payload_size;
        // 2 MiB-aligned reservation so hugetlbfs can map into it.
        const std::size_t reserve = static_cast<std::size_t>(size) + extra + (2u << 20);
        void* r = ::mmap(nullptr, reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (r == MAP_FAILED) bench::die("classic: reserving address space");
        auto* base = reinterpret_cast<std::byte*>((reinterpret_cast<std::uintptr_t>(r) + (2u << 20) - 1) &
                                                  ~std::uintptr_t{(2u << 20) - 1});
        p = ::mmap(base, static_cast<std::size_t>(size), prot, MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, 0);
        if (p != MAP_FAILED &&
            ::mmap(base + size, payload_size, prot, MAP_SHARED | MAP_FIXED | (std::getenv("EVRING_BENCH_LAZY_SECOND_VIEW") != nullptr ? 0 : MAP_POPULATE), fd,
                   static_cast<off_t>(payload_at)) == MAP_FAILED)
            p = MAP_FAILED;
    } else {
        p = ::mmap(nullptr, static_cast<std::size_t>(size), prot, MAP_SHARED | MAP_POPULATE, fd, 0);
    }
    ::close(fd);
    if (p == MAP_FAILED) bench::die("classic: mapping " + path + ": " + std::strerror(errno));
    ring.base = static_cast<std::byte*>(p);
    ring.file_size = static_cast<std::uint64_t>(size) + extra;  // what the destructor unmaps
    std::memcpy(&ring.capacity, ring.base + 40, 8);
    std::memcpy(&ring.payload_size, ring.base + 48, 8);
    if (std::memcmp(ring.base, "RING01", 6) != 0 || ring.capacity == 0 || ring.payload_size == 0 ||
        kDescriptorsAt + ring.capacity * 64 + ring.payload_size > static_cast<std::uint64_t>(size))
        bench::die("classic: " + path + " is not a RING01 ring this peer can map");
    ring.last_seqno = reinterpret_cast<std::uint64_t*>(ring.base + 64);
    ring.next_payload_byte = reinterpret_cast<std::uint64_t*>(ring.base + 72);
    ring.window_start = reinterpret_cast<std::uint64_t*>(ring.base + 128);
    ring.descriptors = reinterpret_cast<ClassicDescriptor*>(ring.base + kDescriptorsAt);
    ring.payload = ring.base + kDescriptorsAt + ring.capacity * 64;
}

inline std::uint64_t realtime_now() noexcept {
    timespec ts;
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Copies into or out of the payload buffer at virtual offset `offset`,
// splitting the copy where it wraps (one plain mapping, no double map).
inline void copy_in(const ClassicRing& ring, std::uint64_t offset, const void* src, std::size_t n) noexcept {
    const std::uint64_t at = offset & (ring.payload_size - 1);
    const std::size_t first = static_cast<std::size_t>(std::min<std::uint64_t>(n, ring.payload_size - at));
    std::memcpy(ring.payload + at, src, first);
    if (first < n) std::memcpy(ring.payload, static_cast<const std::byte*>(src) + first, n - first);
}

inline void copy_out(const ClassicRing& ring, std::uint64_t offset, void* dst, std::size_t n) noexcept {
    const std::uint64_t at = offset & (ring.payload_size - 1);
    const std::size_t first = static_cast<std::size_t>(std::min<std::uint64_t>(n, ring.payload_size - at));
    std::memcpy(dst, ring.payload + at, first);
    if (first < n) std::memcpy(static_cast<std::byte*>(dst) + first, ring.payload, n - first);
}

inline void publish_classic(const ClassicRing& ring, const std::byte* source, std::size_t size, std::uint16_t type,
                     std::uint64_t sequence) noexcept {
    const std::uint64_t aligned = (size + 15) & ~std::uint64_t{15};
    const std::uint64_t now = realtime_now();                                  // K1
    const std::uint64_t s = shared::fetch_add_relaxed(*ring.last_seqno, 1) + 1;  // K2
    const std::uint64_t o = shared::fetch_add_relaxed(*ring.next_payload_byte, aligned);  // K3
    if (o + aligned > ring.payload_size) {                                     // K4
        const std::uint64_t needed = o + aligned - ring.payload_size;
        std::uint64_t window = shared::load_relaxed(*ring.window_start);
        while (window < needed) {
            const std::uint64_t raised = (needed + kWindowStep - 1) / kWindowStep * kWindowStep;
            if (shared::compare_exchange_weak_relaxed(*ring.window_start, window, raised)) break;
        }
        shared::fence_release();
    }
    ClassicDescriptor* d = &ring.descriptors[(s - 1) & (ring.capacity - 1)];
    shared::store_relaxed(d->seqno, 0);  // K5
    d->event_type = type;                // K6: plain stores
    d->unused = 0;
    d->payload_size = static_cast<std::uint32_t>(size);
    d->record_epoch_nanos = now;
    d->payload_buf_offset = o;
    d->content_ext[0] = sequence;
    d->content_ext[1] = d->content_ext[2] = d->content_ext[3] = 0;
    copy_in(ring, o, source, size);
    shared::store_release(d->seqno, s);  // K7
}

// One poll of the classic reader for event `expected`, as the reference's
// iterator and payload check do it: seqno (acquire); equal: copy the
// descriptor, acquire fence, re-load the seqno; then copy the payload into
// `buffer`, acquire fence, check the window. `expected` advances past every
// event whose descriptor was read consistently (and to the slot's seqno when
// lapped, adding the skipped events to `lost`).
enum class ClassicPoll { Ok, NotReady, Lapped, Torn, End, Expired };

inline ClassicPoll poll_classic(const ClassicRing& ring, std::uint64_t& expected, std::uint64_t& lost,
                                std::byte* buffer, std::size_t buffer_size) noexcept {
    ClassicDescriptor* slot = &ring.descriptors[(expected - 1) & (ring.capacity - 1)];
    const std::uint64_t s1 = shared::load_acquire(slot->seqno);
    if (s1 != expected) {
        if (s1 < expected) return ClassicPoll::NotReady;
        lost += s1 - expected;  // lapped: resume at what the slot holds now
        expected = s1;
        return ClassicPoll::Lapped;
    }
    ClassicDescriptor copy;
    std::memcpy(&copy, slot, sizeof copy);  // plain copy of the descriptor
    shared::fence_acquire();
    if (shared::load_relaxed(slot->seqno) != s1) return ClassicPoll::Torn;  // rewritten: look again
    ++expected;
    if (copy.event_type == kEndEvent) return ClassicPoll::End;
    if (copy.payload_size > buffer_size) bench::die("classic: oversized payload");
    copy_out(ring, copy.payload_buf_offset, buffer, copy.payload_size);
    shared::fence_acquire();
    if (copy.payload_buf_offset < shared::load_relaxed(*ring.window_start)) return ClassicPoll::Expired;
    return ClassicPoll::Ok;
}

}  // namespace evring::ipc
