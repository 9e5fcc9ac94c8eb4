// The classic RING01 peer: a writer and a reader that follow the protocol as
// the published description (../shared/seeds/002_*.txt) and docs/format.md
// lay it out for the reference implementation, written here from those facts
// so every evring figure has a same-run ratio against what users would
// otherwise pick. It shares no code with evring's Publisher or Iterator: it
// maps the file itself (one plain MAP_SHARED mapping, no double-mapped
// payload buffer, no doorbell, no membarrier) and finds the sections from
// the header fields.
//
// Writer, per event (steps K1..K7):
//   K1. now := clock_gettime(CLOCK_REALTIME)              (vDSO)
//   K2. s := last_seqno.fetch_add(1) + 1                  (lock xadd)
//   K3. o := next_payload_byte.fetch_add(aligned size)    (lock xadd)
//   K4. if o + n passes the buffer end: raise buffer_window_start by CAS, in
//       16 MiB steps, then a release fence before the payload stores
//   K5. slot.seqno := 0, relaxed, at reservation time
//   K6. the other descriptor fields with plain stores; the payload copied in
//   K7. slot.seqno := s, release
// Reader: seqno acquire; equal to the expected one: copy the descriptor,
// acquire fence, re-load the seqno (must be unchanged); copy the payload,
// acquire fence, check payload_buf_offset >= buffer_window_start.
//
// Bench code only, single-threaded per process; plain stores into shared
// memory are what the classic protocol does (the release store of K7 orders
// them), so this file is not built for ThreadSanitizer runs.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "evring/shared_word.hpp"
#include "ipc/peers.hpp"
#include "support/bench_ring.hpp"

namespace evring::ipc {

namespace {

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
void map_classic(const std::string& path, bool writable, ClassicRing& ring, bool double_map = false) {
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

std::uint64_t realtime_now() noexcept {
    timespec ts;
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Copies into or out of the payload buffer at virtual offset `offset`,
// splitting the copy where it wraps (one plain mapping, no double map).
void copy_in(const ClassicRing& ring, std::uint64_t offset, const void* src, std::size_t n) noexcept {
    const std::uint64_t at = offset & (ring.payload_size - 1);
    const std::size_t first = static_cast<std::size_t>(std::min<std::uint64_t>(n, ring.payload_size - at));
    std::memcpy(ring.payload + at, src, first);
    if (first < n) std::memcpy(ring.payload, static_cast<const std::byte*>(src) + first, n - first);
}

void copy_out(const ClassicRing& ring, std::uint64_t offset, void* dst, std::size_t n) noexcept {
    const std::uint64_t at = offset & (ring.payload_size - 1);
    const std::size_t first = static_cast<std::size_t>(std::min<std::uint64_t>(n, ring.payload_size - at));
    std::memcpy(dst, ring.payload + at, first);
    if (first < n) std::memcpy(static_cast<std::byte*>(dst) + first, ring.payload, n - first);
}

void publish_classic(const ClassicRing& ring, const std::byte* source, std::size_t size, std::uint16_t type,
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

}  // namespace

int run_classic_writer(const PeerOptions& options) {
    const std::uint64_t entered = monotonic_nanos();
    ClassicRing ring;
    map_classic(options.text("path"), true, ring);
    const std::size_t size = std::max<std::size_t>(options.count("size", 64), sizeof(MessageHead));
    const std::uint64_t events = options.count("events", 1'000'000);
    const std::uint64_t batches = std::max<std::uint64_t>(options.count("batches", 1), 1);
    const double rate = options.number("rate", 0);
    const bool stamp = options.text("latency", "0") == "1";
    PageBuffer source(size, std::byte{0x5a});
    WriterLateLog late(stamp);

    std::vector<double> batch_ns;
    const double setup_ns = double(monotonic_nanos() - entered);  // map + construct
    wait_for_gate(options);
    const std::uint64_t per_batch = events / batches;
    const std::uint64_t start = monotonic_nanos();
    std::uint64_t sent = 0;
    for (std::uint64_t b = 0; b < batches; ++b) {
        const std::uint64_t batch_start = monotonic_nanos();
        const std::uint64_t batch_end = sent + per_batch;
        while (sent < batch_end) {
            const std::uint64_t allowed =
                rate > 0 ? paced_allowance(rate, monotonic_nanos() - start, std::min(batch_end, sent + 64))
                         : batch_end;
            for (; sent < allowed; ++sent) {
                stamp_message(source.data(), sent + 1, stamp);
                publish_classic(ring, source.data(), size, kDataEvent, sent + 1);
                late.check(source.data());
            }
        }
        batch_ns.push_back(double(monotonic_nanos() - batch_start) / double(per_batch));
    }
    const double elapsed = double(monotonic_nanos() - start);
    stamp_message(source.data(), sent + 1, false);
    publish_classic(ring, source.data(), size, kEndEvent, sent + 1);
    ResultLine line;
    line.add("writer_ns_per_event", percentile(batch_ns, 0.5))
        .add("writer_events_per_s", double(sent) / elapsed * 1e9)
        .add("events", double(sent))
        .add("setup_ns", setup_ns);
    late.report(line);
    line.print();
    return 0;
}

int run_classic_reader(const PeerOptions& options) {
    const std::uint64_t entered = monotonic_nanos();
    ClassicRing ring;
    map_classic(options.text("path"), false, ring, options.text("double_map", "0") == "1");
    const bool latency = options.text("latency", "0") == "1";
    const std::uint64_t timeout_ns = options.count("timeout_ms", 5000) * 1'000'000;
    PageBuffer buffer(1u << 20);
    LatencyLog log(latency, options.count("events", 1'000'000));

    std::uint64_t expected = 1, received = 0, lost = 0, expired = 0, first_ns = 0, idle = 0;
    std::uint64_t last_progress = 0;
    bool ended = false;
    const double setup_ns = double(monotonic_nanos() - entered);  // map + construct
    print_ready();
    last_progress = monotonic_nanos();
    for (;;) {
        log.poll();
        ClassicDescriptor* slot = &ring.descriptors[(expected - 1) & (ring.capacity - 1)];
        const std::uint64_t s1 = shared::load_acquire(slot->seqno);
        if (s1 != expected) {
            if (s1 > expected) {  // lapped: resume at what the slot holds now
                lost += s1 - expected;
                expected = s1;
                continue;
            }
            if ((++idle & 0xffff) == 0 && monotonic_nanos() - last_progress > timeout_ns) break;
            continue;
        }
        idle = 0;
        ClassicDescriptor copy;
        std::memcpy(&copy, slot, sizeof copy);  // plain copy of the descriptor
        shared::fence_acquire();
        if (shared::load_relaxed(slot->seqno) != s1) continue;  // rewritten meanwhile: look again
        ++expected;
        if (copy.event_type == kEndEvent) {
            ended = true;
            break;
        }
        if (copy.payload_size > buffer.size()) bench::die("classic: oversized payload");
        copy_out(ring, copy.payload_buf_offset, buffer.data(), copy.payload_size);
        shared::fence_acquire();
        if (copy.payload_buf_offset < shared::load_relaxed(*ring.window_start)) {
            ++expired;
            continue;
        }
        if (received++ == 0) first_ns = monotonic_nanos();
        log.record(buffer.data());
        if ((received & 0xfff) == 0) last_progress = monotonic_nanos();
    }
    const double elapsed = double(monotonic_nanos() - first_ns);
    ResultLine line;
    line.add("received", double(received))
        .add("lost", double(lost + expired))
        .add("expired", double(expired))
        .add("ended", ended ? 1 : 0)
        .add("reader_events_per_s", received > 1 ? double(received) / elapsed * 1e9 : 0);
    line.add("setup_ns", setup_ns);
    log.report(line);
    line.print();
    return 0;
}

}  // namespace evring::ipc
