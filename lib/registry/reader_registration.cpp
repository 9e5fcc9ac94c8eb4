// A reader's registration: claiming a slot, publishing progress, freeing the
// slot. See reader_registration.hpp for the contract, registry_locks.hpp for
// the slot locks and registry_slot.hpp for the seqlock.
//
// Invariants:
// - From attaching the registry until its slot is claimed, a registrant
//   holds LOCK_SH on it; after, the slot's lock: a remover never unlinks a
//   registry in use (the argument is in registry_remove.cpp).
// - slot_ is non-null only while this process holds the slot's lock through
//   file_'s descriptor, so this object is the slot's one writer.
// - Every store to the slot runs under guard_sigbus: a registry truncated
//   under us faults into lose_registry(), which only clears slot_ and sets a
//   flag (no allocation, no system call), and nothing touches the slot again.
#include "registry/reader_registration.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "util/device_id.hpp"
#include "evring/clock.hpp"
#include "evring/ring/ring_reader.hpp"
#include "ring/sigbus_guard.hpp"
#include "registry/registry_file.hpp"
#include "registry/registry_identity.hpp"
#include "registry/registry_interest.hpp"
#include "registry/registry_locks.hpp"
#include "registry/registry_open.hpp"
#include "registry/registry_slot.hpp"
#include "ring/ring_open.hpp"

namespace evring {
namespace {

constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();

// Prints `warning` unless this process already printed one for `path`.
void warn_once(const std::string& path, const std::string& warning,
               const char* what = "reader not registered") {
    static std::mutex guard;
    static std::vector<std::string> warned;
    std::lock_guard<std::mutex> lock(guard);
    if (std::find(warned.begin(), warned.end(), path) != warned.end()) return;
    warned.push_back(path);
    std::fprintf(stderr, "evring: %s: %s\n", what, warning.c_str());
}

Result<mode_t> registry_mode(int ring_fd, const RegistryFileOptions& options) {
    if (options.file_mode != 0) return options.file_mode & 07777;
    struct stat st {};
    if (::fstat(ring_fd, &st) != 0) return Error::from_errno(errno, "examining the ring file");
    return static_cast<mode_t>(st.st_mode & 0666);
}

// A reader of an old instance (the ring was removed or re-created under its
// name since the reader opened it) is not registered: it would replace the
// registry that listers of the ring at that name now use with one bound to
// its own, gone, instance.
Status check_ring_at_its_path(std::string_view ring_path, const RingIdentity& ring) {
    const std::string path(ring_path);
    struct statx at_path {};
    const bool same =
        ::statx(AT_FDCWD, path.c_str(), 0, STATX_INO | STATX_BTIME, &at_path) == 0 &&
        detail::dev_t_of(at_path) == ring.device &&
        at_path.stx_ino == ring.inode &&
        ((at_path.stx_mask & STATX_BTIME) == 0 ? ring.birth_sec == 0 && ring.birth_nsec == 0
                                               : at_path.stx_btime.tv_sec == ring.birth_sec &&
                                                     at_path.stx_btime.tv_nsec == ring.birth_nsec);
    if (same) return {};
    return Error(
        ESTALE,
        fmt::format("ring '{}' was removed or re-created since this reader opened it; a reader "
                    "of the old instance is not registered",
                    ring_path));
}

// A registrant that found the registry at its name many times and lost it
// each time to a remover gives up (unregistered) rather than spin.
constexpr int kAttachAttempts = 100;
constexpr int kLockAttempts = 1000;  // of 1 ms: a LOCK_EX holder (remover, replacer) is brief

// Holds LOCK_SH on the attached registry, and says whether it is still the
// file at its name (registry_remove.cpp: a remover never unlinks it while we
// hold this, and we hold it until our slot's lock takes over).
Result<bool> hold_shared(const detail::RegistryFile& file) {
    for (int attempt = 0; ::flock(file.fd(), LOCK_SH | LOCK_NB) != 0; ++attempt) {
        if (errno != EWOULDBLOCK || attempt == kLockAttempts)
            return Error::from_errno(errno, fmt::format("locking reader registry '{}'", file.path()));
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    auto at = detail::open_registry_directory(file.path());
    if (!at) return std::move(at).error();
    return detail::still_at_path(at->dir.get(), at->name, file.fd());
}

// The registry of `ring`, attached and held (hold_shared); attached again
// when a remover took it away first, unless the ring went too.
Result<detail::RegistryFile> attach_and_hold(const std::string& path, const RingIdentity& ring,
                                             const detail::RegistryMaking& making,
                                             std::string_view ring_path, std::string& notice) {
    for (int attempt = 0; attempt < kAttachAttempts; ++attempt) {
        if (attempt > 0)
            if (auto s = check_ring_at_its_path(ring_path, ring); !s) return std::move(s).error();
        auto file = detail::attach_registry(path, ring, making, notice);
        if (!file) return std::move(file).error();
        auto held = hold_shared(*file);
        if (!held) return std::move(held).error();
        if (*held) return file;
    }
    return Error(EAGAIN, fmt::format("reader registry '{}' kept being removed while registering", path));
}

// Takes a slot: first one that looks free (a dead reader's entry stays
// listable until the slot is needed), then any whose owner is gone. The
// state is only a hint; the lock decides.
Result<std::uint32_t> claim_slot(const detail::RegistryFile& file) {
    for (const bool want_free : {true, false}) {
        for (std::uint32_t i = 0; i < file.capacity(); ++i) {
            std::uint64_t state = kSlotActive;
            const RegistrySlot& slot = file.slot(i);
            if (!guard_sigbus([&] { state = shared::load_relaxed(slot.state); }))  // H
                return Error(EIO, fmt::format("reader registry '{}' was truncated", file.path()));
            if ((state == kSlotFree) != want_free) continue;
            auto claimed = detail::try_claim_slot(file.fd(), i);
            if (!claimed) return std::move(claimed).error();
            if (*claimed) return i;
        }
    }
    return Error(ENOSPC,
                 fmt::format("reader registry '{}' is full: all {} slots belong to live readers",
                             file.path(), file.capacity()));
}

// Writes a claimed slot's whole entry (E1..E4).
bool write_entry(RegistrySlot& slot, const ReaderInfo& info, const detail::ProcessIdentity& self,
                 std::uint64_t now, std::uint64_t interest) noexcept {
    return guard_sigbus([&] {
        const std::uint64_t odd = detail::begin_slot_write(slot);
        shared::store_relaxed(slot.state, kSlotActive);
        shared::store_relaxed(slot.next_seqno, 0);  // no position until the first publication
        shared::store_relaxed(slot.lost, 0);
        shared::store_relaxed(slot.abandoned, 0);
        shared::store_relaxed(slot.heartbeat_ns, now);
        shared::store_relaxed(slot.updates, 0);
        shared::store_relaxed(slot.generation, shared::load_relaxed(slot.generation) + 1);
        shared::store_relaxed(slot.registered_ns, now);
        shared::store_relaxed(slot.pid, self.pid);
        shared::store_relaxed(slot.pid_namespace, self.pid_namespace);
        shared::store_relaxed(slot.start_ticks, self.start_ticks);
        shared::store_relaxed(slot.uid, self.uid);
        shared::store_relaxed(slot.kind, std::uint64_t{info.kind});
        shared::store_relaxed(slot.interest, interest);
        shared::store_relaxed(slot.flags, info.heals ? kReaderHeals : 0);
        detail::pack_text(slot.name, info.name);
        detail::pack_text(slot.detail, info.detail);
        detail::end_slot_write(slot, odd);
    });
}

}  // namespace

ReaderRegistration::ReaderRegistration() noexcept { reset_pacing(); }

ReaderRegistration::ReaderRegistration(ReaderRegistration&& other) noexcept {
    *this = std::move(other);
}

ReaderRegistration& ReaderRegistration::operator=(ReaderRegistration&& other) noexcept {
    if (this != &other) {
        unregister();
        slot_ = std::exchange(other.slot_, nullptr);
        countdown_ = other.countdown_;
        every_events_ = other.every_events_;
        due_event_ns_ = other.due_event_ns_;
        every_ns_ = other.every_ns_;
        published_next_ = other.published_next_;
        published_lost_ = other.published_lost_;
        published_abandoned_ = other.published_abandoned_;
        published_at_ns_ = other.published_at_ns_;
        truncated_ = other.truncated_;
        owner_pid_ = other.owner_pid_;
        index_ = other.index_;
        interest_ = other.interest_;
        ring_interest_ = other.ring_interest_;
        interest_from_ = other.interest_from_;
        interest_problem_ = std::move(other.interest_problem_);
        file_ = std::move(other.file_);
        registry_path_ = std::move(other.registry_path_);
        ring_path_ = std::move(other.ring_path_);
        warning_ = std::move(other.warning_);
        notice_ = std::move(other.notice_);
        other.reset_pacing();
    }
    return *this;
}

ReaderRegistration::~ReaderRegistration() { unregister(); }

ReaderRegistration ReaderRegistration::attach(const RingReader& ring, const ReaderInfo& info,
                                              const RegistrationOptions& options) {
    return attach(ring.path(), ring.fd(), ring.ring(), info, options);
}

ReaderRegistration ReaderRegistration::attach(std::string_view ring_path, int ring_fd,
                                              const MappedRing& ring, const ReaderInfo& info,
                                              const RegistrationOptions& options) {
    auto registered = register_reader(ring_path, ring_fd, ring, info, options);
    if (registered) return std::move(registered).value();
    ReaderRegistration inert;
    inert.registry_path_ =
        options.registry.path.empty() ? reader_registry_path(ring_path) : options.registry.path;
    inert.warning_ = registered.error().message();
    if (options.print_warning) warn_once(inert.registry_path_, inert.warning_);
    return inert;
}

Result<ReaderRegistration> ReaderRegistration::register_reader(std::string_view ring_path,
                                                               int ring_fd, const MappedRing& ring,
                                                               const ReaderInfo& info,
                                                               const RegistrationOptions& options) {
    const std::string path =
        options.registry.path.empty() ? reader_registry_path(ring_path) : options.registry.path;
    if (options.registry.capacity == 0 || options.registry.capacity > kRegistryMaxCapacity)
        return Error(EINVAL, fmt::format("reader registry capacity {} is outside 1 to {}",
                                         options.registry.capacity, kRegistryMaxCapacity));
    auto identity = detail::ring_identity_of(ring_fd, ring.header());
    if (!identity)
        return std::move(identity)
            .context(fmt::format("registering a reader of '{}'", ring_path))
            .error();
    if (auto s = check_ring_at_its_path(ring_path, *identity); !s) return std::move(s).error();
    auto mode = registry_mode(ring_fd, options.registry);
    if (!mode) return std::move(mode).error();
    if (auto s = install_sigbus_handler(); !s) return std::move(s).error();

    ReaderRegistration registration;
    auto file = attach_and_hold(path, *identity, {options.registry.capacity, *mode}, ring_path,
                                registration.notice_);
    if (!file) return std::move(file).error();
    auto index = claim_slot(*file);
    ::flock(file->fd(), LOCK_UN);  // the slot's lock (or nothing) keeps it now: registry_remove.cpp
    if (!index) return std::move(index).error();
    const std::uint64_t now = wall_clock_nanos();
    if (!write_entry(file->slot(*index), info, detail::this_process(), now, options.interest))
        return Error(EIO,
                     fmt::format("reader registry '{}' was truncated while registering", path));
    registration.file_ = std::make_unique<detail::RegistryFile>(std::move(file).value());
    registration.slot_ = &registration.file_->slot(*index);
    registration.index_ = *index;
    registration.owner_pid_ = ::getpid();
    registration.registry_path_ = path;
    registration.ring_path_ = std::string(ring_path);
    registration.every_events_ = std::max<std::uint32_t>(options.update_every_events, 1);
    registration.every_ns_ =
        static_cast<std::uint64_t>(std::max<std::int64_t>(options.update_every.count(), 0));
    registration.countdown_ = registration.every_events_;
    registration.due_event_ns_ = 0;  // the first event publishes
    registration.published_at_ns_ = now;
    // With our slot written, the ring's interest word becomes the union
    // including ours (lib/registry/registry_interest.hpp, I1..I6).
    registration.interest_ = options.interest;
    const detail::InterestUpdate interest =
        detail::recompute_interest(*registration.file_, ring_path, &ring.header(), *index);
    registration.ring_interest_ = interest.word;
    registration.interest_from_ = interest.from_seqno;
    registration.interest_problem_ = interest.problem;
    if (!interest.problem.empty() && options.print_warning)
        warn_once(path + " interest", interest.problem, "reader's interest");
    // The ring was removed after our first look: its writer may have found
    // no reader and removed the registry, and ours would be left behind.
    // Leaving removes it (unregister) unless another reader uses it.
    if (auto s = check_ring_at_its_path(ring_path, *identity); !s) {
        registration.unregister();
        return std::move(s).error();
    }
    return registration;
}

std::string ReaderRegistration::warning() const {
    if (truncated_)
        return fmt::format(
            "reader registry '{}' was truncated under this reader, which stopped publishing",
            registry_path_);
    return warning_;
}

void ReaderRegistration::reset_pacing() noexcept {
    countdown_ = 0;  // wraps: an inert registration reaches publish_for_event once per 2^32 events
    due_event_ns_ = kNever;
}

void ReaderRegistration::publish_for_event(std::uint64_t event_ns, std::uint64_t next_seqno,
                                           std::uint64_t lost, std::uint64_t abandoned) noexcept {
    if (slot_ == nullptr) {
        reset_pacing();
        return;
    }
    update(next_seqno, lost, abandoned);
    due_event_ns_ = event_ns > kNever - every_ns_ ? kNever : event_ns + every_ns_;
}

void ReaderRegistration::update(std::uint64_t next_seqno, std::uint64_t lost,
                                std::uint64_t abandoned) noexcept {
    if (slot_ == nullptr) return;
    const std::uint64_t now = wall_clock_nanos();
    RegistrySlot& slot = *slot_;
    const bool written = guard_sigbus([&] {
        const std::uint64_t odd = detail::begin_slot_write(slot);
        detail::store_progress(slot, next_seqno, lost, abandoned, now);
        detail::end_slot_write(slot, odd);
    });
    if (!written) return lose_registry();
    countdown_ = every_events_;
    published_next_ = next_seqno;
    published_lost_ = lost;
    published_abandoned_ = abandoned;
    published_at_ns_ = now;
}

void ReaderRegistration::heartbeat() noexcept {
    update(published_next_, published_lost_, published_abandoned_);
}

void ReaderRegistration::on_idle(std::uint64_t next_seqno, std::uint64_t lost,
                                 std::uint64_t abandoned) noexcept {
    if (slot_ == nullptr) return;
    if (next_seqno != published_next_ || lost != published_lost_ ||
        abandoned != published_abandoned_)
        return update(next_seqno, lost, abandoned);
    if (wall_clock_nanos() - published_at_ns_ >= every_ns_) heartbeat();
}

void ReaderRegistration::set_detail(std::string_view text) noexcept {
    if (slot_ == nullptr) return;
    RegistrySlot& slot = *slot_;
    const bool written = guard_sigbus([&] {
        const std::uint64_t odd = detail::begin_slot_write(slot);
        detail::pack_text(slot.detail, text);
        detail::end_slot_write(slot, odd);
    });
    if (!written) lose_registry();
}

// One seqlock write for both, so a lister never sees a recorder's kind with
// a reader's detail (see set_heals below for the rule).
void ReaderRegistration::describe(std::uint32_t kind, std::string_view text) noexcept {
    if (slot_ == nullptr) return;
    RegistrySlot& slot = *slot_;
    const bool written = guard_sigbus([&] {
        const std::uint64_t odd = detail::begin_slot_write(slot);
        shared::store_relaxed(slot.kind, std::uint64_t{kind});
        detail::pack_text(slot.detail, text);
        detail::end_slot_write(slot, odd);
    });
    if (!written) lose_registry();
}

// The slot's words are written as at registration: inside the slot's
// seqlock (begin_slot_write/end_slot_write), by the slot's owner only, so a
// lister sees the flag change with the rest of the slot or retries.
void ReaderRegistration::set_heals(bool heals) noexcept {
    if (slot_ == nullptr) return;
    RegistrySlot& slot = *slot_;
    const bool written = guard_sigbus([&] {
        const std::uint64_t odd = detail::begin_slot_write(slot);
        shared::store_relaxed(slot.flags, heals ? kReaderHeals : std::uint64_t{0});
        detail::end_slot_write(slot, odd);
    });
    if (!written) lose_registry();
}

void ReaderRegistration::lose_registry() noexcept {
    slot_ = nullptr;
    truncated_ = true;
    reset_pacing();
}

void ReaderRegistration::unregister() noexcept {
    const bool ours = slot_ != nullptr && owner_pid_ == ::getpid();
    if (ours) {
        RegistrySlot& slot = *slot_;
        const bool written = guard_sigbus([&] {
            const std::uint64_t odd = detail::begin_slot_write(slot);
            shared::store_relaxed(slot.state, kSlotFree);
            detail::end_slot_write(slot, odd);
        });
        // Without us the union may want less (a failure only publishes more).
        if (written && file_) {
            try {
                (void)detail::recompute_interest(*file_, ring_path_, nullptr);
            } catch (...) {  // out of memory formatting a message: the word keeps our interest
            }
        }
    }
    slot_ = nullptr;
    std::optional<RingIdentity> ring;
    if (ours && file_) ring = file_->header().ring;
    file_.reset();  // closing the description releases the slot's lock
    reset_pacing();
    // The last reader of a removed (or re-created) ring takes its registry
    // along; with readers left, the last of them will.
    if (ring && !check_ring_at_its_path(ring_path_, *ring).ok()) {
        try {
            (void)detail::remove_unused_registry(registry_path_, *ring, detail::RegistryOwner::ThisInstance);
        } catch (...) {  // out of memory formatting a message: the registry stays for `evring gc`
        }
    }
}

}  // namespace evring
