// evring/ring/doorbell.hpp — readers that sleep instead of spinning.
//
// How to read without burning a core:
//
//     evring::Doorbell bell = evring::Doorbell::attach(ring);   // once per reader
//     evring::Iterator it(ring);
//     for (;;) {
//         evring::EventDescriptor event;
//         switch (it.try_next(event)) {            // drain everything available
//         case evring::NextResult::Success: handle(event); break;
//         case evring::NextResult::NotReady:
//             bell.wait(it.next_seqno(), 100ms);   // sleep until a commit (or timeout)
//             break;
//         case evring::NextResult::Gap:            // see iterator.hpp
//         case evring::NextResult::Abandoned: break;
//         }
//     }
//
// Contract:
// - wait(next_seqno, timeout) returns true when the event `next_seqno` is
//   committed (or overwritten: try_next then reports a Gap), or when a writer
//   committed anything while we slept; false when the timeout passed with
//   nothing to read. It may return true spuriously (a signal, another
//   reader's wake): callers always re-poll with try_next. It returns at once
//   when the event is already there, so a reader only sleeps once it has
//   drained everything available.
// - The writer half (ring_doorbell, called by Publisher::commit) costs one
//   load of a cache line that only changes when a reader goes to sleep, and
//   no fence where the kernel offers membarrier (see below; otherwise one
//   seq_cst fence); it makes a system call only when a reader announced
//   it is asleep, and then only the first writer to see the announcement does
//   (one FUTEX_WAKE per sleep, whatever the number of writers or sleepers).
// - Bounded wake rate: a Doorbell sleeps on the futex at most once per
//   min_sleep_interval (default 100 us). Asked to wait again sooner, it
//   sleeps out the rest of the interval with nanosleep, without announcing
//   itself, and returns true so the caller re-polls. So each reader costs the
//   writers at most 1 / min_sleep_interval FUTEX_WAKEs per second (10,000 by
//   default) however fast events come, and a reader that is kept busy never
//   sleeps at all.
// - The sleep is a FUTEX_WAIT on the doorbell word of the ring's extension
//   block (ring_extension.hpp), with the shared (non-private) futex ops, so
//   readers and writers may be different processes. A reader needs write
//   access to that word to announce itself: attach() maps the ring file's
//   header section read-write on its own. When it cannot (no write permission
//   on the file, a file that is not a path any more, or a ring whose writers do
//   not ring the bell: no kRingFeatureDoorbell flag, e.g. a real snapshot or a
//   ring made by another implementation), the Doorbell falls back to timed
//   polling (sleep poll_interval, look again); mode() and fallback_reason() say so.
//
// The lost-wakeup argument (a Dekker / store-buffering pattern), with the
// step labels used at each access (shared_word.hpp):
//   reader: D1 RMW doorbell |= 1 (announce); D2 seq_cst fence (D3 membarrier);
//           D4 load slot seqno, acquire (re-check); D5 FUTEX_WAIT
//   writer: W8 store slot seqno (commit); W9 seq_cst fence (or compiler
//           fence); W10 load doorbell; W11 CAS clearing bit 0, FUTEX_WAKE
// Two seq_cst fences forbid both loads from missing the other side's store,
// so either the reader's re-check sees the commit (it does not sleep) or the
// writer sees bit 0 and wakes. The fence is the writer's whole cost (a locked
// instruction, ~10 ns here), so where the kernel has it the writer's fence is
// made asymmetric: writer processes register once for
// MEMBARRIER_CMD_GLOBAL_EXPEDITED (register_doorbell_writer, called when a
// Publisher is made) and then only need a compiler barrier; the sleeper, which
// is rare and about to make a system call anyway, issues
// membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) between its announce and its
// re-check, which runs a full barrier on every CPU running a thread of a
// registered process. For each writer thread either that barrier came after
// its commit store in program order (the barrier drains the store, so the
// re-check sees the commit), or its doorbell load came after the barrier
// (so it sees the announce, which was made before the system call); a writer
// not running at that moment passed through the scheduler's full barriers.
// A reader whose membarrier call fails falls back to polling, since it
// cannot know that every writer used the full fence. The writer's wake is a CAS that clears bit 0
// and advances the epoch (bits 1..31) before FUTEX_WAKE, and the reader sleeps
// with FUTEX_WAIT(expected = the value it announced): if the CAS happens
// before the kernel compares, the value differs and FUTEX_WAIT returns at
// once; if after, the reader is already queued and the FUTEX_WAKE that
// follows the CAS finds it. (The epoch wraps after 2^31 wakes; a wrap landing
// exactly between a reader's announce and its FUTEX_WAIT only delays that
// reader until its timeout.) docs/reliability.md has the diagram.
//
// Thread safety: a Doorbell belongs to one reader thread (it counts its
// sleeps); any number of Doorbells, in any number of processes, may wait on
// one ring. ring_doorbell may be called from any number of writer threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "evring/ring/ring.hpp"
#include "evring/ring/ring_extension.hpp"
#include "evring/ring/shared_word.hpp"

namespace evring {

// The doorbell word a writer of `ring` must ring after each commit, or nullptr
// when the ring does not announce kRingFeatureDoorbell or is mapped read-only.
inline std::uint32_t* writer_doorbell_word(const MappedRing& ring) noexcept {
    RingExtension* extension = extension_in(&ring.header());
    if (ring.access() != Access::ReadWrite) return nullptr;
    if ((ring_features(*extension) & kRingFeatureDoorbell) == 0) return nullptr;
    return &extension->doorbell;
}

// The slow half of ring_doorbell: clears the "asleep" bit, advances the epoch
// and wakes every sleeper. `seen` is the value ring_doorbell loaded.
void wake_sleepers(std::uint32_t* word, std::uint32_t seen) noexcept;

// Registers this process for MEMBARRIER_CMD_GLOBAL_EXPEDITED, once; true when
// its writers may use the light (compiler-only) barrier in ring_doorbell.
bool register_doorbell_writer() noexcept;

// Writer side, after a commit's publishing store (see the argument above).
// `light`: this process is registered (register_doorbell_writer()); the
// default, a full fence, is correct in every process.
inline void ring_doorbell(std::uint32_t* word, bool light = false) noexcept {
    // W9, Dekker: orders the commit's store (W8) before the load below; pairs
    // with the sleeper's membarrier (D3, light) or seq_cst fence (D2).
    if (light)
        shared::compiler_fence();
    else
        shared::fence_seq_cst();
    // W10; relaxed: W9 orders it; the line changes only when a reader sleeps.
    const std::uint32_t state = shared::load_relaxed(*word);
    if ((state & 1u) != 0) [[unlikely]]
        wake_sleepers(word, state);
}

class Doorbell {
public:
    enum class Mode { Futex, Polling };

    // Never fails: without a usable doorbell it polls (see the contract).
    static Doorbell attach(const MappedRing& ring);

    Doorbell(Doorbell&& other) noexcept;
    Doorbell& operator=(Doorbell&& other) noexcept;
    Doorbell(const Doorbell&) = delete;
    Doorbell& operator=(const Doorbell&) = delete;
    ~Doorbell();

    // See the contract: true when something may be ready to read.
    bool wait(std::uint64_t next_seqno, std::chrono::nanoseconds timeout) noexcept;

    // True when the event `next_seqno` is committed or already overwritten.
    bool event_ready(std::uint64_t next_seqno) const noexcept;

    // For a reader sleeping on several rings at once (ring_set_source.hpp):
    // step D1 alone on this ring's word. Returns the word, with the value to
    // sleep on in `expected`; nullptr in Polling mode. The caller then runs
    // D2/D3 once for all its rings, re-checks each with event_ready (D4) and
    // sleeps on all the words (futex_waitv), as wait() does for one.
    std::uint32_t* announce_sleep(std::uint32_t& expected) noexcept;
    Mode mode() const noexcept { return mode_; }
    const std::string& fallback_reason() const noexcept { return fallback_reason_; }
    // How often wait() went to sleep on the futex (Futex mode) or slept a poll
    // interval (Polling mode).
    std::uint64_t sleeps() const noexcept { return sleeps_; }
    // Polling mode's sleep between looks (default 1 ms).
    void set_poll_interval(std::chrono::nanoseconds interval) noexcept { poll_interval_ = interval; }
    // Futex mode's minimum time between two futex sleeps (see the contract).
    void set_min_sleep_interval(std::chrono::nanoseconds interval) noexcept { min_sleep_interval_ = interval; }

private:
    explicit Doorbell(const MappedRing& ring) noexcept : ring_(&ring) {}
    bool sleep_on_futex(std::uint64_t next_seqno, std::chrono::nanoseconds timeout) noexcept;
    bool poll(std::uint64_t next_seqno, std::chrono::nanoseconds timeout) noexcept;
    void release() noexcept;

    const MappedRing* ring_;
    void* own_mapping_ = nullptr;  // our read-write view of the header section
    std::uint32_t* word_ = nullptr;
    Mode mode_ = Mode::Polling;
    std::string fallback_reason_;
    std::uint64_t sleeps_ = 0;
    std::chrono::nanoseconds poll_interval_ = std::chrono::milliseconds(1);
    std::chrono::nanoseconds min_sleep_interval_ = std::chrono::microseconds(100);
    std::chrono::nanoseconds last_futex_sleep_{-std::chrono::hours(1)};  // monotonic
};

// One-shot form for callers without a long-lived reader: attaches, waits and
// detaches (an open and two mmap calls per call, and no wake-rate bound across
// calls, since the bound is per Doorbell: keep a Doorbell to avoid both).
bool wait_for_events(const MappedRing& ring, std::uint64_t next_seqno,
                     std::chrono::nanoseconds timeout);

}  // namespace evring
