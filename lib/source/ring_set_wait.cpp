// A merged reader's sleep: one futex_waitv over every member's doorbell
// (ring_set_source.hpp, "Waiting"; the protocol is doorbell.hpp's).
//
//   reader (here)                               each member's writers
//   D1 announce on every member's word          W8 commit store
//   D2 seq_cst fence, D3 membarrier once        W9 fence (light or full)
//   D4 event_ready on every member              W10 load doorbell
//   D5 futex_waitv on all the announced words   W11 wake when bit 0 is set
//
// The Dekker argument of doorbell.hpp holds per member: D1 of that member's
// word comes before D2/D3, which come before its D4; so either D4 sees the
// commit or that member's writer sees the announce and wakes the futex_waitv
// (which returns when any one word is woken or differs from its value).
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <thread>
#include <vector>

#include "source/ring_set_source.hpp"
#include "evring/ring/shared_word.hpp"
#include "ring/sigbus_guard.hpp"
#include "util/membarrier.hpp"
#include "source/ring_set_member.hpp"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

namespace evring {
namespace {

constexpr std::size_t kWaitvMax = 128;  // FUTEX_WAITV_MAX
constexpr auto kMaxSleep = std::chrono::milliseconds(100);  // to notice new members
constexpr auto kPollInterval = std::chrono::milliseconds(1);

struct WaitvEntry {  // struct futex_waitv
    std::uint64_t val;
    std::uint64_t uaddr;
    std::uint32_t flags;
    std::uint32_t reserved;
};
constexpr std::uint32_t kFutex32 = 2;  // FUTEX2_SIZE_U32; shared (no FUTEX2_PRIVATE)

bool g_waitv_missing = false;  // ENOSYS seen once: poll from then on

void sleep_for(std::chrono::nanoseconds d) {
    if (d.count() <= 0) return;
    std::this_thread::sleep_for(d);
}

// A member's doorbell lives in its mapping, which its file may have been cut
// short under: every look at it is guarded, and a fault counts as ready, so
// the caller reads next and the member's source reports the damage.
bool member_ready(const RingSetSource::Member& m) {
    bool ready = true;
    if (!guard_sigbus([&] { ready = m.bell->event_ready(m.source->next_seqno()); })) return true;
    return ready;
}

}  // namespace

void RingSetSource::wait(std::chrono::nanoseconds timeout) {
    if (frozen_) return;  // a set snapshot: nothing will come
    if (wait_for_recording(timeout)) return;
    refresh_members(false);
    timeout = std::min<std::chrono::nanoseconds>(timeout, kMaxSleep);
    // A merge held back by a stuck member only needs to wait out its bound.
    bool has_head = false;
    std::vector<Member*> waiting;
    for (auto& m : members_) {
        if (m->ended) continue;
        if (m->has_head()) has_head = true;
        else waiting.push_back(m.get());
    }
    if (has_head) timeout = std::min<std::chrono::nanoseconds>(timeout, kPollInterval);
    if (waiting.empty()) return sleep_for(timeout);
    for (Member* m : waiting)
        if (member_ready(*m)) return;
    if (g_waitv_missing || waiting.size() > kWaitvMax) return sleep_for(std::min<std::chrono::nanoseconds>(timeout, kPollInterval));

    std::vector<WaitvEntry> entries;
    for (Member* m : waiting) {
        std::uint32_t expected = 0;
        std::uint32_t* word = nullptr;
        if (!guard_sigbus([&] { word = m->bell->announce_sleep(expected); })) return;  // D1; cut short: read
        if (word == nullptr) return sleep_for(std::min<std::chrono::nanoseconds>(timeout, kPollInterval));
        entries.push_back({expected, reinterpret_cast<std::uint64_t>(word), kFutex32, 0});
    }
    shared::fence_seq_cst();  // D2
    if (detail::membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0)  // D3
        return sleep_for(std::min<std::chrono::nanoseconds>(timeout, kPollInterval));
    for (Member* m : waiting)  // D4
        if (member_ready(*m)) return;
    timespec deadline{};
    ::clock_gettime(CLOCK_MONOTONIC, &deadline);
    const auto total = deadline.tv_nsec + timeout.count();
    deadline.tv_sec += static_cast<time_t>(total / 1'000'000'000);
    deadline.tv_nsec = static_cast<long>(total % 1'000'000'000);
    // D5: returns when any word is woken, differs from its value, or at the deadline.
    if (::syscall(SYS_futex_waitv, entries.data(), entries.size(), 0, &deadline, CLOCK_MONOTONIC) < 0 &&
        errno == ENOSYS) {
        g_waitv_missing = true;
        sleep_for(std::min<std::chrono::nanoseconds>(timeout, kPollInterval));
    }
}

}  // namespace evring
