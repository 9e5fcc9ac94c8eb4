// The interest keeper: one thread per writer process that stops a dead
// reader's interest from counting. The protocol (K0..K4) and why the writer's
// hot path stays one load: interest_keeper.hpp.
#include "registry/interest_keeper.hpp"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>
#include <cerrno>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "evring/ring/interest.hpp"
#include "evring/ring/ring_extension.hpp"
#include "evring/ring/shared_word.hpp"
#include "registry/reader_registry.hpp"
#include "registry/registry_file.hpp"
#include "registry/registry_identity.hpp"
#include "registry/registry_interest.hpp"
#include "ring/sigbus_guard.hpp"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

namespace evring::detail {
namespace {

constexpr std::size_t kWaitvMax = 128;  // FUTEX_WAITV_MAX
// Without futex_waitv (before Linux 5.16), or with more rings than it takes,
// an idle keeper looks this often instead of sleeping until woken.
constexpr std::chrono::seconds kIdleLook{1};

struct WaitvEntry {  // struct futex_waitv
    std::uint64_t val;
    std::uint64_t uaddr;
    std::uint32_t flags;
    std::uint32_t reserved;
};
constexpr std::uint32_t kFutex32 = 2;           // FUTEX2_SIZE_U32
constexpr std::uint32_t kFutexPrivate = 128;    // FUTEX2_PRIVATE

// The 32 bits of the interest word that hold its tag (little-endian: the
// high half), on which idle keepers sleep.
std::uint32_t* tag_half(std::uint64_t& word) noexcept {
    return reinterpret_cast<std::uint32_t*>(&word) + 1;
}

timespec timespec_after(std::chrono::nanoseconds d, clockid_t clock) {
    timespec t{};
    ::clock_gettime(clock, &t);
    const auto total = t.tv_nsec + d.count();
    t.tv_sec += static_cast<time_t>(total / 1'000'000'000);
    t.tv_nsec = static_cast<long>(total % 1'000'000'000);
    return t;
}

KeeperOutcome widen(std::uint64_t& word, std::uint64_t seen) {
    // K4: only ever towards "everything" (see the header).
    std::uint64_t expected = seen;
    (void)shared::compare_exchange_strong_relaxed(word, expected, kInterestEverything);
    return KeeperOutcome::Widened;
}

// One watched ring: its own mapping of the header section, and its registry
// while that is valid (reopened when another file appears at its name).
struct Kept {
    int ring_fd = -1;  // the writer's descriptor: the key (open until unwatched)
    std::string registry_path;
    RingIdentity identity{};
    void* section = nullptr;
    std::uint64_t* word = nullptr;
    RegistryFile registry;
    struct stat registry_stat {};

    ~Kept() {
        if (section != nullptr) ::munmap(section, kHeaderSectionSize);
    }

    const RegistryFile* current_registry() {
        struct stat now {};
        if (::lstat(registry_path.c_str(), &now) != 0) {
            registry = RegistryFile();
            return nullptr;
        }
        if (registry.is_open() && now.st_dev == registry_stat.st_dev && now.st_ino == registry_stat.st_ino)
            return &registry;
        auto opened = open_registry(registry_path, identity, true);
        if (!opened || opened->verdict.state != RegistryState::Valid ||
            ::fstat(opened->file.fd(), &registry_stat) != 0) {
            registry = RegistryFile();
            return nullptr;
        }
        registry = std::move(opened->file);
        return &registry;
    }

    void keep() {
        static const bool guarded = install_sigbus_handler().ok();  // union_of_live_slots guards its copies
        if (!guarded) return;
        (void)keep_interest(current_registry(), *word);
    }
};

struct KeeperState {
    std::mutex mutex;
    pid_t owner = 0;  // the process this state belongs to (a forked child makes its own)
    std::vector<std::shared_ptr<Kept>> kept;
    bool running = false;
    bool paused = false;
    std::uint32_t changes = 0;  // a private futex word, bumped at every change of the above
};

std::mutex g_state_mutex;
KeeperState* g_state = nullptr;  // leaked: the keeper thread may outlive static destructors

// This process's state. A child forked without exec finds its parent's
// (whose thread it does not have, and whose mutex a parent thread may have
// held at the fork) and leaves it alone.
KeeperState& state() {
    std::lock_guard<std::mutex> lock(g_state_mutex);  // may throw (new): callers catch
    const pid_t me = ::getpid();
    if (g_state == nullptr || g_state->owner != me) {
        g_state = new KeeperState;
        g_state->owner = me;
    }
    return *g_state;
}

void note_change(KeeperState& s) {
    shared::store_relaxed(s.changes, shared::load_relaxed(s.changes) + 1);  // under s.mutex
    ::syscall(SYS_futex, &s.changes, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

// Sleeps until the next tick (`narrowing`), or until a watched word
// narrows or the watched set changes.
void keeper_sleep(KeeperState& s, std::uint32_t changes, const std::vector<std::shared_ptr<Kept>>& rings,
                  bool narrowing) {
    static bool waitv_missing = false;
    if (narrowing || waitv_missing || rings.size() + 1 > kWaitvMax) {
        const timespec after = timespec_after(narrowing ? std::chrono::nanoseconds(kKeeperTick) : kIdleLook,
                                              CLOCK_MONOTONIC);
        ::syscall(SYS_futex, &s.changes, FUTEX_WAIT_BITSET_PRIVATE, changes, &after, nullptr, FUTEX_BITSET_MATCH_ANY);
        return;
    }
    std::vector<WaitvEntry> entries;
    entries.push_back({changes, reinterpret_cast<std::uint64_t>(&s.changes), kFutex32 | kFutexPrivate, 0});
    for (const auto& r : rings) {
        std::uint32_t* half = tag_half(*r->word);
        entries.push_back({shared::load_relaxed(*half), reinterpret_cast<std::uint64_t>(half), kFutex32, 0});
    }
    // A word that narrowed after the caller looked differs from its value
    // here or at the kernel's compare: either way the wait returns at once.
    for (const auto& r : rings)
        if (interest_narrows(shared::load_relaxed(*r->word))) return;
    if (::syscall(SYS_futex_waitv, entries.data(), entries.size(), 0, nullptr, CLOCK_MONOTONIC) < 0 &&
        errno == ENOSYS)
        waitv_missing = true;
}

void keeper_main(KeeperState* s) {
    ::pthread_setname_np(::pthread_self(), "evring-interest");
    for (;;) {
        std::vector<std::shared_ptr<Kept>> rings;
        std::uint32_t changes = 0;
        bool paused = false;
        {
            std::lock_guard<std::mutex> lock(s->mutex);
            if (s->kept.empty()) {
                s->running = false;  // the next watch starts a new thread
                return;
            }
            rings = s->kept;
            changes = shared::load_relaxed(s->changes);
            paused = s->paused;
        }
        bool narrowing = false;
        for (const auto& r : rings) {
            if (paused || !interest_narrows(shared::load_relaxed(*r->word))) continue;  // K1
            narrowing = true;
            try {
                r->keep();
            } catch (...) {  // out of memory: the next tick tries again
            }
        }
        if (paused) narrowing = false;  // sleep until resumed
        keeper_sleep(*s, changes, rings, narrowing);
    }
}

// Starts the thread with every asynchronous signal blocked (faults stay
// deliverable: guard_sigbus needs SIGBUS).
bool start_keeper(KeeperState& s) {
    sigset_t all, old;
    ::sigfillset(&all);
    for (int sig : {SIGBUS, SIGSEGV, SIGILL, SIGFPE, SIGTRAP, SIGSYS}) ::sigdelset(&all, sig);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
    bool started = true;
    try {
        std::thread(keeper_main, &s).detach();
    } catch (...) {
        started = false;
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return started;
}

std::shared_ptr<Kept> make_kept(const std::string& ring_path, int ring_fd, const MappedRing& ring) {
    if (ring.access() != Access::ReadWrite) return nullptr;
    if ((ring_features(*extension_in(const_cast<RingHeader*>(&ring.header()))) & kRingFeatureDoorbell) == 0)
        return nullptr;  // its writers publish everything whatever the word says
    auto identity = ring_identity_of(ring_fd, ring.header());
    if (!identity) return nullptr;
    void* section = ::mmap(nullptr, kHeaderSectionSize, PROT_READ | PROT_WRITE, MAP_SHARED, ring_fd, 0);
    if (section == MAP_FAILED) return nullptr;
    auto kept = std::make_shared<Kept>();
    kept->section = section;
    kept->word = &extension_in(section)->interest;
    kept->identity = *identity;
    kept->registry_path = reader_registry_path(ring_path);
    return kept;
}

}  // namespace

KeeperOutcome keep_interest(const RegistryFile* registry, std::uint64_t& word) {
    const std::uint64_t seen = shared::load_relaxed(word);  // K1
    if (!interest_narrows(seen)) return KeeperOutcome::Unchanged;
    if (registry == nullptr) return widen(word, seen);  // K4
    bool truncated = false;
    const std::uint64_t live = union_of_live_slots(*registry, kNoOwnSlot, truncated);  // K2
    if (truncated) return widen(word, seen);
    if (live == seen) return KeeperOutcome::Unchanged;
    if (!registry->writable()) return widen(word, seen);
    auto lock = InterestLock::try_take(registry->fd());  // K3: I1, tried
    if (!lock) return widen(word, seen);
    if (!*lock) return KeeperOutcome::Busy;
    const std::uint64_t wanted = union_of_live_slots(*registry, kNoOwnSlot, truncated);  // I2
    if (truncated) return widen(word, seen);
    // I3, as a leaving reader's (no I5/I6: it registers nobody, and a late
    // narrowing only publishes more in the meantime).
    shared::store_relaxed(word, wanted);
    return KeeperOutcome::Recomputed;
}  // I4: the lock's destructor

void watch_interest(const std::string& ring_path, int ring_fd, const MappedRing& ring) noexcept {
    try {
        std::shared_ptr<Kept> kept = make_kept(ring_path, ring_fd, ring);
        if (!kept) return;
        kept->ring_fd = ring_fd;
        KeeperState& s = state();
        std::lock_guard<std::mutex> lock(s.mutex);
        s.kept.push_back(kept);
        note_change(s);
        if (!s.running) {
            s.running = start_keeper(s);
            if (!s.running) s.kept.pop_back();
        }
    } catch (...) {  // out of memory: not kept
    }
}

// This process's state when it has one (never allocates).
static KeeperState* existing_state() noexcept {
    std::lock_guard<std::mutex> lock(g_state_mutex);
    return g_state != nullptr && g_state->owner == ::getpid() ? g_state : nullptr;
}

void unwatch_interest(int ring_fd) noexcept {
    KeeperState* found = existing_state();
    if (found == nullptr) return;  // nothing kept here (in a forked child: the parent's rings)
    KeeperState& s = *found;
    std::lock_guard<std::mutex> lock(s.mutex);
    for (auto it = s.kept.begin(); it != s.kept.end(); ++it) {
        if ((*it)->ring_fd != ring_fd) continue;
        s.kept.erase(it);  // the keeper drops its copy after its current look
        note_change(s);
        return;
    }
}

void wake_interest_keepers(std::uint64_t& word) noexcept {
    // Shared (not private): keepers of other processes map the same file page.
    ::syscall(SYS_futex, tag_half(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

void set_interest_keeping(bool on) noexcept {
    try {
        KeeperState& s = state();
        std::lock_guard<std::mutex> lock(s.mutex);
        s.paused = !on;
        note_change(s);
    } catch (...) {  // out of memory: nothing was started that could be paused
    }
}

}  // namespace evring::detail
