// The out-of-line half of doorbell.hpp: attaching, sleeping and waking.
#include "evring/ring/doorbell.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <climits>
#include <cstring>
#include <utility>

#include "ring/header_section.hpp"
#include "util/membarrier.hpp"

namespace evring {
namespace {

long futex(std::uint32_t* word, int op, std::uint32_t value, const timespec* timeout) noexcept {
    // Shared (non-private) ops: sleepers and wakers are different processes
    // mapping the same file page; the kernel keys the futex on (inode, offset).
    return ::syscall(SYS_futex, word, op, value, timeout, nullptr, 0);
}

timespec to_timespec(std::chrono::nanoseconds duration) noexcept {
    const auto count = duration.count();
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(count / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(count % 1'000'000'000);
    return ts;
}

std::chrono::nanoseconds monotonic_now() noexcept {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

}  // namespace

bool register_doorbell_writer() noexcept {
    // Once per process; a thread-safe static. Writers that cannot register use
    // the seq_cst fence; sleepers issue the membarrier either way.
    static const bool registered = [] {
        const long supported = detail::membarrier(MEMBARRIER_CMD_QUERY);
        if (supported < 0 || (supported & MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0) return false;
        return detail::membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
    }();
    return registered;
}

void wake_sleepers(std::uint32_t* word, std::uint32_t seen) noexcept {
    while ((seen & 1u) != 0) {
        // W11: clear "asleep" and advance the epoch at once: (2e + 1) + 1 =
        // 2(e + 1). seq_cst: the new value must be in place before FUTEX_WAKE,
        // and only the writer whose CAS succeeds makes the system call.
        if (shared::compare_exchange_weak_seq_cst(*word, seen, seen + 1)) {
            futex(word, FUTEX_WAKE, INT_MAX, nullptr);
            return;
        }
    }
}

Doorbell Doorbell::attach(const MappedRing& ring) {
    Doorbell bell(ring);
    const RingExtension* extension = extension_in(&ring.header());
    if ((ring_features(*extension) & kRingFeatureDoorbell) == 0) {
        bell.fallback_reason_ = "ring '" + ring.path() +
                                "' does not announce a doorbell (no evring extension block): "
                                "its writers may not wake readers";
        return bell;
    }
    if (ring.access() == Access::ReadWrite) {
        bell.word_ = &extension_in(&ring.header())->doorbell;
        bell.mode_ = Mode::Futex;
        return bell;
    }
    // A read-only reader needs its own writable view of the doorbell word,
    // of the file at least as large as the ring it mapped.
    auto section = detail::WritableHeaderSection::map(
        ring.path(), {.min_size = ring.layout().file_size, .identity = std::nullopt, .file_role = "mapped ring file"},
        "announce sleeps");
    if (!section) {
        bell.fallback_reason_ = section.error().message();
        return bell;
    }
    // The path may now name another file than the one mapped: only trust it
    // if it carries the same header.
    if (std::memcmp(section->data(), &ring.header(), offsetof(RingHeader, control)) != 0 ||
        (ring_features(*section->extension()) & kRingFeatureDoorbell) == 0) {
        bell.fallback_reason_ = "ring '" + ring.path() + "' was replaced since it was mapped";
        return bell;
    }
    bell.word_ = &section->extension()->doorbell;
    bell.own_mapping_ = section->release();
    bell.mode_ = Mode::Futex;
    return bell;
}

Doorbell::Doorbell(Doorbell&& other) noexcept : ring_(other.ring_) { *this = std::move(other); }

Doorbell& Doorbell::operator=(Doorbell&& other) noexcept {
    if (this != &other) {
        release();
        ring_ = other.ring_;
        own_mapping_ = std::exchange(other.own_mapping_, nullptr);
        word_ = std::exchange(other.word_, nullptr);
        mode_ = std::exchange(other.mode_, Mode::Polling);
        fallback_reason_ = std::move(other.fallback_reason_);
        sleeps_ = other.sleeps_;
        poll_interval_ = other.poll_interval_;
        min_sleep_interval_ = other.min_sleep_interval_;
        last_futex_sleep_ = other.last_futex_sleep_;
    }
    return *this;
}

Doorbell::~Doorbell() { release(); }

void Doorbell::release() noexcept {
    detail::WritableHeaderSection::unmap(own_mapping_);
    own_mapping_ = nullptr;
    word_ = nullptr;
}

bool Doorbell::event_ready(std::uint64_t next_seqno) const noexcept {
    if (next_seqno == 0) next_seqno = 1;
    const std::uint64_t* slot = ring_->descriptors()[(next_seqno - 1) & ring_->descriptor_mask()].words;
    // D4 (and the first look of every wait): acquire, pairs with W8 like the
    // iterator's R1; a slot's seqno below next_seqno means "not written yet".
    return shared::load_acquire(slot[0]) >= next_seqno;
}

bool Doorbell::wait(std::uint64_t next_seqno, std::chrono::nanoseconds timeout) noexcept {
    if (event_ready(next_seqno)) return true;
    if (timeout <= std::chrono::nanoseconds::zero()) return false;
    if (mode_ == Mode::Futex) return sleep_on_futex(next_seqno, timeout);
    return poll(next_seqno, timeout);
}

bool Doorbell::sleep_on_futex(std::uint64_t next_seqno, std::chrono::nanoseconds timeout) noexcept {
    // Rate bound: at most one futex sleep (hence one writer wake) per interval.
    const auto now = monotonic_now();
    if (now - last_futex_sleep_ < min_sleep_interval_) {
        const timespec pause = to_timespec(std::min(min_sleep_interval_ - (now - last_futex_sleep_), timeout));
        ::nanosleep(&pause, nullptr);
        return true;  // the caller re-polls; the next wait may sleep on the futex
    }
    last_futex_sleep_ = now;
    // D1, announce: seq_cst RMW, the reader's store of the Dekker pair.
    const std::uint32_t announced = shared::fetch_or_seq_cst(*word_, 1u) | 1u;
    // D2, Dekker: orders the announce before the re-check; pairs with W9.
    shared::fence_seq_cst();
    // D3, the heavy half of the asymmetric barrier: a full barrier on every
    // CPU running a registered writer, for writers whose W9 is only a
    // compiler barrier.
    if (detail::membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0) {
        mode_ = Mode::Polling;
        fallback_reason_ = std::string("membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) failed: ") +
                           std::strerror(errno) + "; polling instead";
        return true;  // the caller re-polls, then waits by polling
    }
    if (event_ready(next_seqno)) return true;  // D4: committed before the writer could see us
    ++sleeps_;
    const timespec ts = to_timespec(timeout);
    if (futex(word_, FUTEX_WAIT, announced, &ts) == 0) return true;  // D5: woken by a commit
    switch (errno) {
    case EAGAIN:  // the word changed before we slept: a writer woke us already
    case EINTR:   // a signal: the caller re-polls
        return true;
    default:  // ETIMEDOUT
        return event_ready(next_seqno);
    }
}

std::uint32_t* Doorbell::announce_sleep(std::uint32_t& expected) noexcept {
    if (mode_ != Mode::Futex) return nullptr;
    // D1, announce: seq_cst RMW, the reader's store of the Dekker pair.
    expected = shared::fetch_or_seq_cst(*word_, 1u) | 1u;
    ++sleeps_;
    return word_;
}

bool Doorbell::poll(std::uint64_t next_seqno, std::chrono::nanoseconds timeout) noexcept {
    const auto deadline = monotonic_now() + timeout;
    for (;;) {
        const auto now = monotonic_now();
        if (now >= deadline) return false;
        const timespec ts = to_timespec(std::min(poll_interval_, deadline - now));
        ++sleeps_;
        ::nanosleep(&ts, nullptr);
        if (event_ready(next_seqno)) return true;
    }
}

bool wait_for_events(const MappedRing& ring, std::uint64_t next_seqno,
                     std::chrono::nanoseconds timeout) {
    Doorbell bell = Doorbell::attach(ring);
    return bell.wait(next_seqno, timeout);
}

}  // namespace evring
