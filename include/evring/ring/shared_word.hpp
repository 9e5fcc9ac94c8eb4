// evring/ring/shared_word.hpp — the one vocabulary for words in shared memory.
//
// Every access the library makes to a word that another thread or process
// may access at the same time (the ring's control words, every descriptor
// word, the doorbell word, the clock anchor) goes through the functions
// below, so each call site says its ordering in its name and carries the
// label of its step in the protocol: W1..W11 the writer (W9..W11 its
// doorbell), R1..R4 the reader's descriptor copy, P1..P3 its payload check,
// D1..D5 a reader going to sleep on the doorbell, X1..X7 the writer claim
// (writer_claim.hpp), C1..C4 and c1..c4 the clock anchor, I1..I7 the
// interest word (lib/registry/registry_interest.hpp), H a hint that a later step
// validates, M1..M2 a named reader's mark (lib/cursor/named_reader.cpp). The
// ring protocol, writer and reader side by side with the fence pairs, is
// drawn once in docs/format.md ("The protocol"); the doorbell's in
// doorbell.hpp; the clock's in lib/util/clock.cpp.
//
// They wrap std::atomic_ref, which is lock-free for the word types (asserted
// below), so an access is one plain instruction on x86-64 (a locked one for
// the read-modify-writes) and works across processes that map the same file.
// The loads take a const word: C++20 has no atomic_ref<const T>, so they cast
// the const away and only ever load through it (the memory may be mapped
// read-only).
//
// Thread and process safety: that is what these are for; no state.
#pragma once

#include <atomic>
#include <concepts>
#include <cstdint>
#include <type_traits>

namespace evring::shared {

static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free,
              "evring: 64-bit words in shared memory need lock-free atomics");
static_assert(std::atomic_ref<std::uint32_t>::is_always_lock_free,
              "evring: 32-bit words in shared memory need lock-free atomics");

// The word types that live in shared memory.
template <class T>
concept Word = std::same_as<T, std::uint64_t> || std::same_as<T, std::uint32_t>;

template <Word T>
[[nodiscard]] inline T load_acquire(const T& word) noexcept {
    return std::atomic_ref<T>(const_cast<T&>(word)).load(std::memory_order_acquire);
}

template <Word T>
[[nodiscard]] inline T load_relaxed(const T& word) noexcept {
    return std::atomic_ref<T>(const_cast<T&>(word)).load(std::memory_order_relaxed);
}

template <Word T>
inline void store_release(T& word, std::type_identity_t<T> value) noexcept {
    std::atomic_ref<T>(word).store(value, std::memory_order_release);
}

template <Word T>
inline void store_relaxed(T& word, std::type_identity_t<T> value) noexcept {
    std::atomic_ref<T>(word).store(value, std::memory_order_relaxed);
}

// Returns the value before the addition.
template <Word T>
inline T fetch_add_relaxed(T& word, std::type_identity_t<T> delta) noexcept {
    return std::atomic_ref<T>(word).fetch_add(delta, std::memory_order_relaxed);
}

// Returns the value before the or.
template <Word T>
inline T fetch_or_seq_cst(T& word, std::type_identity_t<T> bits) noexcept {
    return std::atomic_ref<T>(word).fetch_or(bits, std::memory_order_seq_cst);
}

// On failure `expected` receives the current value (relaxed). May fail
// spuriously: call in a loop.
template <Word T>
inline bool compare_exchange_weak_relaxed(T& word, T& expected, std::type_identity_t<T> desired) noexcept {
    return std::atomic_ref<T>(word).compare_exchange_weak(expected, desired, std::memory_order_relaxed);
}

// On failure `expected` receives the current value (relaxed). Never fails
// spuriously.
template <Word T>
inline bool compare_exchange_strong_relaxed(T& word, T& expected, std::type_identity_t<T> desired) noexcept {
    return std::atomic_ref<T>(word).compare_exchange_strong(expected, desired, std::memory_order_relaxed);
}

template <Word T>
inline bool compare_exchange_weak_seq_cst(T& word, T& expected, std::type_identity_t<T> desired) noexcept {
    return std::atomic_ref<T>(word).compare_exchange_weak(expected, desired, std::memory_order_seq_cst,
                                                          std::memory_order_relaxed);
}

// Two adjacent words, the first 16-byte aligned, advanced together by one
// atomic read-modify-write: first += d1 and second += d2 as a single step,
// relaxed; returns the old values. On x86-64 with CMPXCHG16B that is one
// `lock cmpxchg16b` (retried only when another writer moved either word in
// between), where two fetch_add_relaxed are two locked instructions, each
// of which waits for the store buffer to drain (docs/performance.md).
// Mixing with other writers that fetch_add either word alone is safe: every
// update of either word is still one atomic read-modify-write of it.
// has_pair_rmw() says whether the CPU has the instruction; without it, and
// under ThreadSanitizer (which cannot see inline assembly, so the tests
// check the protocol through the two-fetch_add form), callers use two
// fetch_add_relaxed, which give each word the same guarantee.
struct WordPair {
    std::uint64_t first, second;
};
__extension__ typedef unsigned __int128 PairBits;

#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
inline bool has_pair_rmw() noexcept {
    // Once per process: cpuid traps to the hypervisor in a VM (microseconds).
    static const bool has = [] {
        unsigned eax = 1, ebx = 0, ecx = 0, edx = 0;
        asm("cpuid" : "+a"(eax), "=b"(ebx), "+c"(ecx), "=d"(edx));
        return (ecx & (1u << 13)) != 0;  // CPUID.1:ECX.CX16
    }();
    return has;
}

inline WordPair fetch_add_pair_relaxed(std::uint64_t& first, std::uint64_t d1, std::uint64_t d2) noexcept {
    // `first` and the word after it: a relaxed snapshot to start from; the
    // CAS validates it (and hands back the current pair when it fails).
    std::uint64_t* words = &first;
    std::uint64_t lo = std::atomic_ref<std::uint64_t>(words[0]).load(std::memory_order_relaxed);
    std::uint64_t hi = std::atomic_ref<std::uint64_t>(words[1]).load(std::memory_order_relaxed);
    bool swapped;
    do {
        asm volatile("lock cmpxchg16b %1"
                     : "=@ccz"(swapped), "+m"(*reinterpret_cast<PairBits*>(words)), "+a"(lo), "+d"(hi)
                     : "b"(lo + d1), "c"(hi + d2)
                     : "memory");
    } while (!swapped);
    return {lo, hi};
}
#else
inline bool has_pair_rmw() noexcept { return false; }

inline WordPair fetch_add_pair_relaxed(std::uint64_t& first, std::uint64_t d1, std::uint64_t d2) noexcept {
    std::uint64_t* words = &first;
    const std::uint64_t lo = std::atomic_ref<std::uint64_t>(words[0]).fetch_add(d1, std::memory_order_relaxed);
    const std::uint64_t hi = std::atomic_ref<std::uint64_t>(words[1]).fetch_add(d2, std::memory_order_relaxed);
    return {lo, hi};
}
#endif

inline void fence_acquire() noexcept { std::atomic_thread_fence(std::memory_order_acquire); }
inline void fence_release() noexcept { std::atomic_thread_fence(std::memory_order_release); }
inline void fence_seq_cst() noexcept { std::atomic_thread_fence(std::memory_order_seq_cst); }
// Orders only the compiler (no instruction): for the writer's light doorbell
// barrier, whose other half is the sleeper's membarrier (doorbell.hpp).
inline void compiler_fence() noexcept { std::atomic_signal_fence(std::memory_order_seq_cst); }

}  // namespace evring::shared
