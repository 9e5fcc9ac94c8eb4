// The writer claim's rare paths: claiming, revoking (X5..X7), giving back,
// thread tokens. The protocol and its invariants are in writer_claim.hpp.
#include "evring/ring/writer_claim.hpp"

#include <fcntl.h>
#include <immintrin.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "evring/ring/doorbell.hpp"
#include "evring/ring/shared_word.hpp"
#include "util/membarrier.hpp"
#include "ring/ring_locks.hpp"

namespace evring {

constinit thread_local std::uint64_t t_writer_thread_token = 0;

namespace {

std::atomic<std::uint64_t> g_last_thread_token{0};

// A forked child's only thread must not pass for its parent's thread of the
// same address: it takes a new token when it next publishes (tokens only
// grow, so the new one differs from every token its parent handed out).
void forget_token_in_child() noexcept { t_writer_thread_token = 0; }

// Registered when the library loads, so that the hot path never allocates.
[[maybe_unused]] const bool g_fork_hook = [] {
    return ::pthread_atfork(nullptr, nullptr, forget_token_in_child) == 0;
}();

// X6: a full barrier on every CPU running a thread of a registered process.
void barrier_on_every_writer() noexcept {
    if (detail::membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0) return;
    // Allowed for the claimant's process (it registered) but refused to us,
    // e.g. by a seccomp filter: the slower command gives the same guarantee.
    if (detail::membarrier(MEMBARRIER_CMD_GLOBAL) == 0) return;
    std::fprintf(stderr, "evring: cannot revoke a writer claim: membarrier is refused to this process\n");
    std::abort();  // continuing would let two writers store W1/W2 at once
}

// Whether some process still holds the ring as a writer (then the claim's
// owner may be alive and only descheduled mid-reservation).
bool ring_has_live_writer(const MappedRing& ring) noexcept {
    const int fd = ::open(ring.path().c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return false;  // removed: its writer has gone
    const bool alive = detail::any_writer_alive(fd);
    ::close(fd);
    return alive;
}

// X7: until the owner thread is off the plain path. It is there for a few
// instructions unless descheduled, so spin, then sleep; a claim whose ring
// nobody writes any more belonged to a dead process.
void wait_until_not_busy(const MappedRing& ring, WriterClaim& claim) noexcept {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    auto next_liveness_check = start + std::chrono::milliseconds(100);
    for (int spins = 0; shared::load_acquire(claim.busy) != 0; ++spins) {  // X7, pairs with X4
        if (spins < 1000) {
            _mm_pause();
            continue;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        if (Clock::now() >= next_liveness_check) {
            if (!ring_has_live_writer(ring)) return;
            next_liveness_check = Clock::now() + std::chrono::milliseconds(100);
        }
    }
}

}  // namespace

std::uint64_t assign_writer_thread_token() noexcept {
    t_writer_thread_token = g_last_thread_token.fetch_add(1, std::memory_order_relaxed) + 1;
    return t_writer_thread_token;
}

WriterClaim* writer_claim_of(const MappedRing& ring) noexcept {
    if (ring.access() != Access::ReadWrite) return nullptr;
    RingExtension* extension = extension_in(&ring.header());
    return has_ring_extension(*extension) ? &extension->claim : nullptr;
}

void revoke_writer_claim(const MappedRing& ring) noexcept {
    WriterClaim* claim = writer_claim_of(ring);
    if (claim == nullptr || (shared::load_acquire(claim->revoked) & kClaimRevokedDrained) != 0) return;
    // X5. Sticky, even with no claim held: a publisher that claims after this
    // sees it (below, and claim_or_revoke) and stays off the plain path.
    shared::fetch_or_seq_cst(claim->revoked, kClaimRevoking);
    shared::fence_seq_cst();  // X5 before the load of `claimed`; pairs with the claimant's fence
    if (shared::load_relaxed(claim->claimed) != 0) {
        // A claim is held: its owner thread may be on the plain path. (Also
        // when another revoker is mid-handshake: we cannot know it finished,
        // so we make the handshake ourselves.)
        barrier_on_every_writer();          // X6
        wait_until_not_busy(ring, *claim);  // X7
    }
    shared::fetch_or_seq_cst(claim->revoked, kClaimRevokedDrained);
}

bool claim_or_revoke(const MappedRing& ring) noexcept {
    WriterClaim* claim = writer_claim_of(ring);
    if (claim == nullptr) return false;
    if (ring.held_exclusively() && register_doorbell_writer() && shared::load_acquire(claim->revoked) == 0 &&
        shared::fetch_or_seq_cst(claim->claimed, 1u) == 0) {
        // Claimed, unless a revoker came first: its X5 is before our fence or
        // it sees `claimed` = 1 after its own and makes the handshake.
        shared::fence_seq_cst();
        if (shared::load_relaxed(claim->revoked) == 0) return true;
    }
    revoke_writer_claim(ring);  // another publisher holds it, or we may not claim
    return false;
}

void release_writer_claim(const MappedRing& ring) noexcept {
    WriterClaim* claim = writer_claim_of(ring);
    // Release: the next claimant's plain loads of W1/W2 see our last stores.
    if (claim != nullptr) shared::store_release(claim->claimed, 0u);
}

void void_dead_writer_claim(const MappedRing& ring) noexcept {
    WriterClaim* claim = writer_claim_of(ring);
    if (claim == nullptr) return;
    shared::store_release(claim->busy, 0u);
    shared::fetch_or_seq_cst(claim->revoked, kClaimRevoking | kClaimRevokedDrained);
}

}  // namespace evring
