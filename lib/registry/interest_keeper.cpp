// The interest keeper: one thread per writer process that stops a dead
// reader's interest from counting. The protocol (K0..K4) and why the writer's
// hot path stays one load: interest_keeper.hpp.
#include "registry/interest_keeper.hpp"

#include <fcntl.h>
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
#include <condition_variable>
#include <memory>
#include <optional>
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
    // K4: only ever towards "everything" (see the header). A word whose file
    // was truncated under us faults: nothing is left to widen.
    std::uint64_t expected = seen;
    (void)guard_sigbus([&] { (void)shared::compare_exchange_strong_relaxed(word, expected, kInterestEverything); });
    return KeeperOutcome::Widened;
}

// The word, or nullopt when its page is gone (the ring file was truncated:
// guard_sigbus, with the handler the keeper installs).
std::optional<std::uint64_t> load_word(const std::uint64_t& word) {
    std::uint64_t value = 0;
    if (!guard_sigbus([&] { value = shared::load_relaxed(word); })) return std::nullopt;
    return value;
}

// One watched ring: its own mapping of the header section, and its registry
// while that is valid (reopened when another file appears at its name).
struct Kept {
    int ring_fd = -1;  // the writer's descriptor: the key (open until unwatched)
    std::string registry_path;
    RingIdentity identity{};
    void* section = nullptr;
    std::uint64_t* word = nullptr;
    bool faulted = false;  // its file was truncated under us: no longer looked at
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

    void keep() { (void)keep_interest(current_registry(), *word); }

    // K1, the keeper's look: whether the word narrows (a faulting word
    // never does again).
    bool narrows() {
        if (faulted) return false;
        const std::optional<std::uint64_t> value = load_word(*word);
        faulted = !value;
        return value && interest_narrows(*value);
    }
};

struct KeeperState {
    std::mutex mutex;
    pid_t owner = 0;  // the process this state belongs to (a forked child makes its own)
    std::vector<std::shared_ptr<Kept>> kept;
    bool running = false;
    bool paused = false;
    std::uint32_t changes = 0;  // a private futex word, bumped at every change of the above
    // The `changes` the keeper last went to sleep with, its looks done and
    // its sleep prepared: a watcher waits for this (settle()), so that no
    // look of the keeper's (and no allocation) runs in the writer's time
    // after RingWriter::create or close returns.
    std::uint32_t settled = ~std::uint32_t{0};
    std::condition_variable settled_changed;
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

// Waits (at most a second) until the keeper has taken in the latest change
// and gone to sleep, or exited. Called holding `lock` on s.mutex.
void settle(KeeperState& s, std::unique_lock<std::mutex>& lock) {
    s.settled_changed.wait_for(lock, std::chrono::seconds(1), [&] {
        return !s.running || s.settled == shared::load_relaxed(s.changes);
    });
}

// How the keeper sleeps next, prepared before it says it settled (so the
// sleep itself allocates nothing): until the next tick (`narrowing`), or
// until the watched set changes or a watched word is woken (futex_waitv).
struct SleepPlan {
    std::vector<WaitvEntry> entries;  // empty: a timed wait on `changes`
    std::chrono::nanoseconds timeout{0};
    bool skip = false;  // a word narrowed while the plan was made: look again
};

bool g_waitv_missing = false;  // ENOSYS seen once (before Linux 5.16): timed waits from then on

SleepPlan plan_sleep(KeeperState& s, std::uint32_t changes, const std::vector<std::shared_ptr<Kept>>& rings,
                     bool narrowing) {
    SleepPlan plan;
    if (narrowing || g_waitv_missing || rings.size() + 1 > kWaitvMax) {
        plan.timeout = narrowing ? std::chrono::nanoseconds(kKeeperTick) : std::chrono::nanoseconds(kIdleLook);
        return plan;
    }
    plan.entries.push_back({changes, reinterpret_cast<std::uint64_t>(&s.changes), kFutex32 | kFutexPrivate, 0});
    for (const auto& r : rings) {
        if (r->faulted) continue;
        std::uint32_t* half = tag_half(*r->word);
        std::uint32_t value = 0;
        if (!guard_sigbus([&] { value = shared::load_relaxed(*half); })) {
            r->faulted = true;
            continue;
        }
        plan.entries.push_back({value, reinterpret_cast<std::uint64_t>(half), kFutex32, 0});
    }
    // A word that narrowed after the keeper looked differs from its value
    // here or at the kernel's compare: either way it is not slept through.
    for (const auto& r : rings)
        if (r->narrows()) plan.skip = true;
    return plan;
}

void sleep_as_planned(KeeperState& s, std::uint32_t changes, const SleepPlan& plan) {
    if (plan.skip) return;
    if (plan.entries.empty()) {
        const timespec after = timespec_after(plan.timeout, CLOCK_MONOTONIC);
        ::syscall(SYS_futex, &s.changes, FUTEX_WAIT_BITSET_PRIVATE, changes, &after, nullptr, FUTEX_BITSET_MATCH_ANY);
        return;
    }
    if (::syscall(SYS_futex_waitv, plan.entries.data(), plan.entries.size(), 0, nullptr, CLOCK_MONOTONIC) < 0 &&
        errno == ENOSYS)
        g_waitv_missing = true;
}

void keeper_main(KeeperState* s) {
    ::pthread_setname_np(::pthread_self(), "evring-interest");
    std::vector<std::shared_ptr<Kept>> rings;
    for (;;) {
        std::uint32_t changes = 0;
        bool paused = false;
        {
            std::lock_guard<std::mutex> lock(s->mutex);
            if (s->kept.empty()) {
                rings.clear();  // unmapped before a waiting close() goes on
                s->running = false;  // the next watch starts a new thread
                s->settled_changed.notify_all();
                return;
            }
            rings = s->kept;
            changes = shared::load_relaxed(s->changes);
            paused = s->paused;
        }
        bool narrowing = false;
        for (const auto& r : rings) {
            if (paused || !r->narrows()) continue;  // K1
            narrowing = true;
            try {
                r->keep();
            } catch (...) {  // out of memory: the next tick tries again
            }
        }
        SleepPlan plan = plan_sleep(*s, changes, rings, narrowing && !paused);
        {
            std::lock_guard<std::mutex> lock(s->mutex);
            if (shared::load_relaxed(s->changes) != changes) continue;  // changed meanwhile: look again
            s->settled = changes;
            s->settled_changed.notify_all();
        }
        sleep_as_planned(*s, changes, plan);
    }
}

// Starts the thread with every asynchronous signal blocked (faults stay
// deliverable: guard_sigbus needs SIGBUS).
bool start_keeper(KeeperState& s) {
    // Every access of the keeper's to a watched word is guarded: a ring file
    // truncated under the process must not kill it from this thread.
    if (!install_sigbus_handler().ok()) return false;
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
    // A mapping keeps its open file description alive, and the writer's
    // locks (flock, writer marker) belong to the writer's description: the
    // keeper maps through a description of its own, so that the writer's
    // locks go the moment it closes, whatever the keeper still maps.
    const std::string own = "/proc/self/fd/" + std::to_string(ring_fd);
    const int fd = ::open(own.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return nullptr;
    void* section = ::mmap(nullptr, kHeaderSectionSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
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
    const std::optional<std::uint64_t> loaded = load_word(word);  // K1
    if (!loaded || !interest_narrows(*loaded)) return KeeperOutcome::Unchanged;
    const std::uint64_t seen = *loaded;
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
    if (!guard_sigbus([&] { shared::store_relaxed(word, wanted); })) return KeeperOutcome::Unchanged;
    return KeeperOutcome::Recomputed;
}  // I4: the lock's destructor

void watch_interest(const std::string& ring_path, int ring_fd, const MappedRing& ring) noexcept {
    try {
        std::shared_ptr<Kept> kept = make_kept(ring_path, ring_fd, ring);
        if (!kept) return;
        kept->ring_fd = ring_fd;
        KeeperState& s = state();
        std::unique_lock<std::mutex> lock(s.mutex);
        s.kept.push_back(kept);
        note_change(s);
        if (!s.running) {
            s.running = start_keeper(s);
            if (!s.running) s.kept.pop_back();
        }
        settle(s, lock);
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
    try {
        std::unique_lock<std::mutex> lock(s.mutex);
        for (auto it = s.kept.begin(); it != s.kept.end(); ++it) {
            if ((*it)->ring_fd != ring_fd) continue;
            s.kept.erase(it);  // the keeper drops its copy after its current look
            note_change(s);
            settle(s, lock);
            return;
        }
    } catch (...) {  // std::system_error from the mutex: the keeper keeps a ring that is gone, harmlessly
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
