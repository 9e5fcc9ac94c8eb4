// Fuzz support: drive the reader API over a (possibly hostile) mapped ring
// with a script of fuzz bytes, and trap on any access outside the mapping.
//
// Every check here is an invariant of the public contract (iterator.hpp,
// payload.hpp, doorbell.hpp): a payload pointer handed out lies inside the
// double-mapped payload buffer, a copy never writes past its destination, and
// nothing reads outside the mapping (an out-of-mapping read faults and
// libFuzzer reports it as a crash).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "evring/ring/doorbell.hpp"
#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/ring.hpp"
#include "ring/snapshot.hpp"

namespace evring::fuzz {

#define EVRING_FUZZ_CHECK(cond) \
    do {                        \
        if (!(cond)) __builtin_trap(); \
    } while (0)

// With EVRING_FUZZ_TALLY set (scripts/fuzz sets it when replaying the corpus),
// each input prints whether it was accepted, or the error it was rejected with.
inline void tally(const char* target, const std::string* rejection) {
    static const bool enabled = std::getenv("EVRING_FUZZ_TALLY") != nullptr;
    if (!enabled) return;
    if (rejection == nullptr) std::fprintf(stderr, "evring-fuzz %s: accepted\n", target);
    else std::fprintf(stderr, "evring-fuzz %s: rejected: %s\n", target, rejection->c_str());
}

class Script {
public:
    Script(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
    bool done() const { return pos_ >= size_; }
    std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
    std::uint64_t u64() {
        std::uint64_t v = 0;
        for (int i = 0; i < 8; ++i) v |= std::uint64_t{byte()} << (8 * i);
        return v;
    }

private:
    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t pos_ = 0;
};

inline void check_payload(const MappedRing& ring, const EventDescriptor& event) {
    const std::byte* begin = ring.payload_buffer();
    const std::byte* end = begin + 2 * ring.layout().size.payload_buf_size;
    const std::byte* p = peek_payload(ring, event);
    if (p != nullptr) {
        EVRING_FUZZ_CHECK(p >= begin && p <= end && event.payload_size <= static_cast<std::size_t>(end - p));
        // Touch the first and last byte: must be inside the mapping.
        if (event.payload_size > 0) {
            volatile std::byte first = p[0];
            volatile std::byte last = p[event.payload_size - 1];
            (void)first;
            (void)last;
        }
        (void)payload_valid(ring, event);
    }
    static std::vector<std::byte> buffer(1 << 16);
    const PayloadResult copied = copy_payload(ring, event, buffer.data(), buffer.size());
    if (copied == PayloadResult::Ok) EVRING_FUZZ_CHECK(event.payload_size <= buffer.size());
}

// Writes a snapshot of `ring` (a hostile ring: the copy's loops and offset
// arithmetic must hold), loads it back from memory, and walks the copy.
inline void snapshot_round_trip(const MappedRing& ring, Script& script) {
    const int fd = ::memfd_create("evring-fuzz-snapshot", MFD_CLOEXEC);
    if (fd < 0) __builtin_trap();
    auto stats = write_snapshot(ring, fd, "fuzz-snapshot", {1});
    if (!stats) {  // control words no ring reaches: reported as damage
        EVRING_FUZZ_CHECK(!stats.error().message().empty());
        ::close(fd);
        return;
    }
    std::vector<std::byte> bytes(static_cast<std::size_t>(stats->compressed_bytes));
    EVRING_FUZZ_CHECK(::pread(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size()));
    ::close(fd);
    EVRING_FUZZ_CHECK(stats->kept_events <= ring.layout().size.descriptor_capacity);
    auto loaded = load_snapshot(bytes, "fuzz-snapshot");
    // What the snapshot writer writes is always a ring the loader accepts.
    EVRING_FUZZ_CHECK(loaded.ok());
    Iterator it(loaded->ring);
    it.seek(stats->oldest_seqno);
    EventDescriptor event{};
    for (int i = 0; i < 64 && !script.done(); ++i)
        if (it.try_next(event) == NextResult::Success) check_payload(loaded->ring, event);
}

// Runs at most `steps` iterator operations chosen by the script; with
// `allow_snapshot`, one of them may be a snapshot round trip (it copies and
// compresses the whole ring, so targets allow it for some inputs only).
inline void exercise_reader(const MappedRing& ring, Script& script, int steps, bool allow_snapshot) {
    Iterator it(ring);
    it.set_abandon_after(std::chrono::nanoseconds(0));
    Doorbell bell = Doorbell::attach(ring);
    EventDescriptor event{};
    bool snapshot_taken = !allow_snapshot;  // at most once per input
    for (int step = 0; step < steps; ++step) {
        const std::uint8_t op = script.done() ? 0 : script.byte();
        switch (op % 9) {
        case 0:
        case 1:
        case 2: {
            const NextResult r = it.try_next(event);
            if (r == NextResult::Success) check_payload(ring, event);
            break;
        }
        case 3: it.seek(script.u64()); break;
        case 4: it.reset(); break;
        case 5:
            if (it.read_descriptor(script.u64(), event)) check_payload(ring, event);
            break;
        case 6: (void)it.oldest_seqno(); break;
        case 7: (void)bell.wait(it.next_seqno(), std::chrono::nanoseconds(0)); break;
        case 8:
            if (!snapshot_taken) snapshot_round_trip(ring, script);
            snapshot_taken = true;
            break;
        }
    }
}

}  // namespace evring::fuzz
