// Creating, joining and reclaiming ring files. See ring_writer.hpp for the
// contract.
//
// Invariants:
// - A file appears at a ring's name only by rename of a fully initialised
//   temporary file whose writer already holds its flock and marker, so any
//   file at the name is either a complete ring or not ours (refused).
// - A zombie is replaced only by a writer holding LOCK_EX on it, and only
//   while it is still the file at the name: two reclaimers cannot both hold
//   that lock, and the loser then finds the winner's locked ring.
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>

#include "evring/ring/ring_writer.hpp"
#include "ring/schema_blob.hpp"
#include "evring/ring/writer_claim.hpp"
#include "registry/interest_keeper.hpp"
#include "registry/reader_registry.hpp"
#include "files/ring_debris.hpp"
#include "registry/registry_file.hpp"
#include "registry/registry_identity.hpp"
#include "ring/ring_locks.hpp"
#include "ring/ring_open.hpp"
#include "files/ring_temp.hpp"
#include "ring/writers_open.hpp"
#include "evring/ring/ring_extension.hpp"
#include "evring/ring/shared_word.hpp"

namespace evring {
namespace {

using detail::FdGuard;
using detail::TempRing;

// Lock contention without any writer marker is transient (a reader's probe,
// or another writer in the middle of reclaiming): retry for up to ~1 s.
constexpr int kTransientRetries = 1000;
constexpr auto kRetryPause = std::chrono::milliseconds(1);

struct Owned {
    int fd = -1;
    std::optional<MappedRing> ring;
    bool created = false;
    bool reclaimed = false;
};

Owned take_temp(TempRing& temp, bool reclaimed) {
    Owned owned;
    owned.ring = std::move(temp.ring);
    owned.fd = temp.release();
    owned.created = true;
    owned.reclaimed = reclaimed;
    return owned;
}

// Takes `operation` (LOCK_EX or LOCK_SH) on an existing ring file without
// blocking. True: locked. False: the lock is busy for a moment (a reader's
// probe, a writer mid-reclaim); pause was taken, try again. An error when a
// live writer holds the ring (its marker is present, or the lock stayed busy
// for ~1 s), naming it.
Result<bool> lock_unless_live_writer(int fd, int operation, int& transient, std::string_view path) {
    if (::flock(fd, operation | LOCK_NB) == 0) return true;
    if (errno != EWOULDBLOCK) return Error::from_errno(errno, "locking '" + std::string(path) + "'");
    auto marker = detail::writer_marker_present(fd);
    if ((marker && *marker) || ++transient > kTransientRetries) return detail::held_by_live_writer(fd, path);
    std::this_thread::sleep_for(kRetryPause);
    return false;
}

Result<Owned> create_exclusive(int dirfd, const std::string& name, const RingParams& params,
                               const CreateOptions& options, std::string_view path) {
    // A name a live writer holds fails before a temporary ring, with all its
    // pages, is made for it: a ring set's writer tries every member in turn.
    if (auto existing = detail::open_ring_file_at(dirfd, name, O_RDONLY, path)) {
        FdGuard held{*existing};
        if (::flock(held.fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
            auto marker = detail::writer_marker_present(held.fd);
            if (marker && *marker) return detail::held_by_live_writer(held.fd, path);
        }
    }  // any other case (absent, free, unreadable) is decided below, as before
    TempRing temp;
    if (auto s = detail::make_temp_ring(temp, dirfd, name, params, options, path); !s) return std::move(s).error();
    for (int transient = 0;;) {
        auto placed = detail::rename_no_replace(temp, dirfd, name, path);
        if (!placed) return std::move(placed).error();
        if (*placed) return take_temp(temp, false);

        auto existing = detail::open_ring_file_at(dirfd, name, O_RDONLY, path);
        if (!existing) {
            if (existing.error().errno_value() == ENOENT) continue;  // its owner just removed it
            return std::move(existing).error();
        }
        FdGuard held{*existing};
        auto locked = lock_unless_live_writer(held.fd, LOCK_EX, transient, path);
        if (!locked) return std::move(locked).error();
        if (!*locked) continue;
        // Nobody writes it. Replace it only while it is still the file at
        // the name and a ring (never clobber someone's other file).
        if (!detail::still_at_path(dirfd, name, held.fd)) continue;
        if (auto s = detail::check_is_ring(held.fd, path); !s)
            return std::move(s).context("refusing to replace it").error();
        if (::renameat(dirfd, temp.name.c_str(), dirfd, name.c_str()) != 0)
            return Error::from_errno(errno, "replacing zombie ring '" + std::string(path) + "'");
        return take_temp(temp, true);  // `held` closes after the rename: the zombie's lock goes last
    }
}

// A writer joining with a schema needs the ring to carry that schema: the
// blob is written once at creation (schema_blob.hpp) and cannot be added to a
// ring others already read. The headers' hashes already agree, and the
// creator's blob records the header's hash, so an intact blob with that hash
// is the same schema (its source text may differ in comments). A joiner
// without a schema joins either kind.
Status check_same_schema(const MappedRing& ring, const RingContent& content, std::string_view path) {
    if (content.schema_blob.empty()) return {};
    // The joiner's blob is checked as a creator's would be (and is then long
    // enough to compare).
    if (auto s = check_schema_blob_for_ring(content.schema_blob, content.schema_hash); !s)
        return std::move(s).context(fmt::format("joining shared ring '{}'", path));
    const std::span<const std::byte> have = embedded_schema_blob(ring.header_section());
    if (have.empty())
        return Error(EPROTO, fmt::format("shared ring '{}' carries no embedded schema, but this writer has "
                                         "one: the ring was created by a writer without a schema",
                                         path));
    if (std::memcmp(have.data() + kSchemaBlobHashOffset, content.schema_blob.data() + kSchemaBlobHashOffset,
                    content.schema_hash.size()) != 0)
        return Error(EPROTO, fmt::format("shared ring '{}' embeds a schema other than this writer's", path));
    return {};
}

Status check_same_params(const MappedRing& ring, const RingParams& params, std::string_view path) {
    if (auto s = ring.check_content_type(params.content.content_type, params.content.schema_hash); !s)
        return s;
    const RingSize want = params.size();
    const RingSize& have = ring.header().size;
    if (have.descriptor_capacity != want.descriptor_capacity ||
        have.payload_buf_size != want.payload_buf_size ||
        have.context_area_size != want.context_area_size) {
        return Error(EPROTO, fmt::format("shared ring '{}' has {} descriptors, a {}-byte payload buffer "
                                         "and a {}-byte context area; this writer asked for {}, {} and {}",
                                         path, have.descriptor_capacity, have.payload_buf_size,
                                         have.context_area_size, want.descriptor_capacity,
                                         want.payload_buf_size, want.context_area_size));
    }
    return check_same_schema(ring, params.content, path);
}

Result<Owned> join_shared(int dirfd, const std::string& name, const RingParams& params,
                          const CreateOptions& options, std::string_view path) {
    for (int transient = 0;;) {
        auto existing = detail::open_ring_file_at(dirfd, name, O_RDWR, path);
        if (!existing && existing.error().errno_value() != ENOENT) return std::move(existing).error();
        if (!existing) {
            TempRing temp;
            if (auto s = detail::make_temp_ring(temp, dirfd, name, params, options, path); !s)
                return std::move(s).error();
            auto placed = detail::rename_no_replace(temp, dirfd, name, path);
            if (!placed) return std::move(placed).error();
            if (*placed) return take_temp(temp, false);
            continue;  // another shared writer created it first: join theirs
        }
        FdGuard held{*existing};
        auto locked = lock_unless_live_writer(held.fd, LOCK_SH, transient, path);
        if (!locked) return std::move(locked).error();
        if (!*locked) continue;
        if (!detail::still_at_path(dirfd, name, held.fd)) continue;
        if (auto s = detail::check_is_ring(held.fd, path); !s)
            return std::move(s).context("refusing to join it").error();
        // Before our own marker: does any other writer hold one?
        auto others = detail::writer_marker_present(held.fd);
        if (auto s = detail::hold_writer_marker(held.fd, false, path); !s) return std::move(s).error();
        auto ring = MappedRing::map(held.fd, Access::ReadWrite, std::string(path));
        if (!ring) return std::move(ring).error();
        if (auto s = check_same_params(*ring, params, path); !s) return std::move(s).error();
        Owned owned;
        owned.ring.emplace(std::move(ring).value());
        owned.fd = held.release();
        owned.reclaimed = others && !*others;
        return owned;
    }
}

// Whether the file still holds its header section: a ring truncated under
// its writer (by hand, or a test) must not fault its close.
bool still_holds_header_section(int fd) {
    struct stat st {};
    return ::fstat(fd, &st) == 0 && static_cast<std::uint64_t>(st.st_size) >= kHeaderSectionSize;
}

}  // namespace

Result<RingWriter> RingWriter::create(const RingSpec& spec, const CreateOptions& options) {
    const RingConfig& config = spec.config;
    const RingParams params = spec.params();
    auto path = resolve_ring_path(config.name_or_path, options.directory);
    if (!path) return std::move(path).error();
    auto split = detail::split_ring_path(*path);
    if (!split) return std::move(split).error();
    auto dirfd = detail::open_ring_directory(*split, *path);
    if (!dirfd) return std::move(dirfd).context("creating ring").error();
    FdGuard dir{*dirfd};

    // Threads of one process share the temporary name <name>.<pid>: one
    // creation at a time per process keeps them from taking each other's
    // temporary file for a stale one.
    static std::mutex creating;
    std::lock_guard<std::mutex> one_at_a_time(creating);
    auto owned = options.mode == WriterProcesses::One
                     ? create_exclusive(dir.fd, split->name, params, options, *path)
                     : join_shared(dir.fd, split->name, params, options, *path);
    if (!owned) return std::move(owned).context("creating ring '" + config.name_or_path + "'").error();
    // What killed writers and readers of this name left (ring_debris.hpp).
    reclaim_debris_of(split->directory, split->name);

    RingWriter writer;
    struct stat st {};
    if (::fstat(owned->fd, &st) == 0) {
        writer.device_ = st.st_dev;
        writer.inode_ = st.st_ino;
    }
    writer.ring_ = std::move(owned->ring);
    writer.ring_->held_exclusively_ = options.mode == WriterProcesses::One;
    // Open until the last writer closes it (writers_open.hpp): left so, with
    // no writer holding it, its writers were killed. This writer holds its
    // locks already.
    if (has_ring_extension(*extension_in(&writer.ring_->header())))
        shared::store_relaxed(detail::writers_open_word(*extension_in(&writer.ring_->header())), 1);
    if (owned->reclaimed && options.mode == WriterProcesses::Many) void_dead_writer_claim(*writer.ring_);
    writer.fd_ = owned->fd;
    writer.path_ = std::move(path).value();
    writer.options_ = options;
    writer.created_ = owned->created;
    writer.reclaimed_zombie_ = owned->reclaimed;
    // Keyed by the descriptor, which the writer holds open until close().
    detail::watch_interest(writer.path_, writer.fd_, *writer.ring_);
    return writer;
}

RingWriter::RingWriter(RingWriter&& other) noexcept { *this = std::move(other); }

RingWriter& RingWriter::operator=(RingWriter&& other) noexcept {
    if (this != &other) {
        close();
        ring_ = std::move(other.ring_);
        other.ring_.reset();
        path_ = std::move(other.path_);
        fd_ = std::exchange(other.fd_, -1);
        options_ = other.options_;
        device_ = other.device_;
        inode_ = other.inode_;
        created_ = other.created_;
        reclaimed_zombie_ = other.reclaimed_zombie_;
    }
    return *this;
}

RingWriter::~RingWriter() { close(); }

void RingWriter::remove_unused_registry_of_ring() noexcept {
    // The ring's reader registry goes with it unless a reader still uses it
    // (that reader removes it when it leaves: registry_remove.cpp).
    try {
        auto identity = detail::ring_identity_of(fd_, ring_->header());
        if (identity)
            (void)detail::remove_unused_registry(reader_registry_path(path_), *identity,
                                                 detail::RegistryOwner::ThisInstance);
    } catch (...) {  // out of memory formatting a message: the registry stays for `evring gc`
    }
}

void RingWriter::close() noexcept {
    if (fd_ < 0) return;
    detail::unwatch_interest(fd_);  // before the descriptor's number can be reused
    // Among shared writers only the last removes the file: LOCK_EX|LOCK_NB
    // succeeds only when no other writer holds the ring.
    bool remove = !options_.keep_on_close &&
                  (options_.mode == WriterProcesses::One || ::flock(fd_, LOCK_EX | LOCK_NB) == 0);
    if (remove) {
        // Only if the file at the path is still the one we wrote (it may have
        // been removed by hand and replaced by another writer's ring).
        struct stat st {};
        if (::lstat(path_.c_str(), &st) == 0 && st.st_dev == device_ && st.st_ino == inode_ &&
            ::unlink(path_.c_str()) == 0)
            remove_unused_registry_of_ring();
    } else if (options_.keep_on_close &&
               (options_.mode == WriterProcesses::One || ::flock(fd_, LOCK_EX | LOCK_NB) == 0) &&
               still_holds_header_section(fd_) && has_ring_extension(*extension_in(&ring_->header()))) {
        // The last writer keeps the ring on purpose: not one killed writers
        // left (writers_open.hpp), so `evring gc` leaves it for its readers.
        shared::store_relaxed(detail::writers_open_word(*extension_in(&ring_->header())), 0);
    }
    ring_.reset();
    ::close(fd_);  // releases the flock and the marker
    fd_ = -1;
}

}  // namespace evring
