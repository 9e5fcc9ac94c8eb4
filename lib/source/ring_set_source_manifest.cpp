// The merged reader's looks at its own manifest (ring_set_source.hpp):
// through the descriptor it opened, never the name; whether the set was
// removed; and, before the merge releases an event, whether a member joined
// the set whose first events are earlier ("Members").
//
//   writer thread taking a member             merged reader (here)
//   J1 creates the member ring                R1 C = wall clock
//   J2 publish_entry: the entry, release      R2 acquire-load the manifest's
//      fence, generation + 1                     generation (no change)
//   J3 reserve its first event: its           R3 releases events stamped <= C
//      timestamp is read here, after J2
//
// If R2 does not see J2's increment, J2 comes after R2, so the new member's
// first timestamp (J3, after J2) is later than C: no event it will write can
// be earlier than one released at R3. If R2 sees it, the member table is
// re-read (pread) and the new member opened before anything is released.
// What is left is the contract's late case (a writer's clock read an instant
// before its reservation, a member let go after the stall bound), counted in
// counters().late.
#include <sys/mman.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include "evring/clock.hpp"
#include "evring/ring/shared_word.hpp"
#include "ring/sigbus_guard.hpp"
#include "source/ring_set_member.hpp"

namespace evring {

Result<RingSetManifest> RingSetSource::read_own_manifest() const {
    auto bytes = read_set_manifest_bytes(manifest_fd_, directory_);
    if (!bytes) return std::move(bytes).error();
    return parse_set_manifest(*bytes, directory_);
}

// The manifest this source opened has no name left: the set's last writer
// removed the set (its clean close, keep_on_close false) or someone removed
// it. Nothing will be added to it: its members are read to their end, and
// then the set ends (a set re-created under the name is another set, which
// --follow-name opens). Said once.
bool RingSetSource::note_removed() {
    if (removed_) return true;
    struct stat st {};
    if (::fstat(manifest_fd_, &st) != 0 || st.st_nlink > 0) return false;
    removed_ = true;
    fast_ = 0;
    notices_.push_back(fmt::format("ring set {} was removed (its last writer closed it); reading its members to "
                                   "their end", directory_));
    return true;
}

void RingSetSource::map_generation() {
    struct stat st {};
    if (::fstat(manifest_fd_, &st) != 0 || static_cast<std::uint64_t>(st.st_size) < sizeof(SetManifestHeader)) return;
    // Read-only and never pre-faulted: only the header's generation line is
    // ever touched, under a SIGBUS guard (a manifest cut short under us).
    const auto size = static_cast<std::size_t>(st.st_size);
    void* at = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, manifest_fd_, 0);
    if (at == MAP_FAILED) return;  // read with pread instead
    generation_map_ = at;
    generation_map_size_ = size;
}

void RingSetSource::unmap_generation() noexcept {
    if (generation_map_ != nullptr) ::munmap(generation_map_, generation_map_size_);
    generation_map_ = nullptr;
}

bool RingSetSource::member_joined_before(std::uint64_t nanos) {
    if (manifest_fd_ < 0 || removed_ || nanos <= members_seen_nanos_) return false;
    const std::uint64_t now = wall_clock_nanos();  // R1: before the generation is read
    std::uint64_t generation = 0;
    bool read = false;
    if (generation_map_ != nullptr) {
        const auto* header = static_cast<const SetManifestHeader*>(generation_map_);
        read = guard_sigbus([&] { generation = shared::load_acquire(header->generation); });  // R2
    } else if (auto g = read_set_generation(manifest_fd_)) {
        generation = *g;
        read = true;
    }
    members_seen_nanos_ = now;
    if (read && generation == generation_) return false;
    const std::uint64_t version = member_version_;
    refresh_members(true);
    return member_version_ != version || !notices_.empty();
}

// A named reader resuming: every member at once, each by its own last
// event, so that the merge then orders them by time as from any start.
Result<std::string> RingSetSource::seek_members_after(const std::vector<Position::MemberAfter>& after) {
    std::string notes;
    auto note = [&](std::string text) { notes += (notes.empty() ? "" : "; ") + text; };
    order_ok_ = false;
    fast_ = 0;
    for (auto& m : members_) {
        m->drop_run();
        m->ended = false;
        const Position::MemberAfter was = m->index < after.size() ? after[m->index] : Position::MemberAfter{};
        const bool same = was.last != 0 && was.instance == m->source->identity().instance;
        if (was.last != 0 && !same)
            note(fmt::format("member {} ({}) is a new ring instance: read from its oldest event; the instance read "
                             "before was read up to seqno {}, and how many events it held after that is not known "
                             "(it is gone)",
                             m->index, m->path, was.last));
        else if (was.instance == 0)
            note(fmt::format("member {} ({}) joined the set since the commit: read from its oldest event", m->index,
                             m->path));
        // A healing set's member resumes where it was even when the ring has
        // overwritten it: its first read is then a lapped gap, healed from
        // the set's recording (healer.hpp).
        m->source->keep_overwritten_starts(heals());
        auto moved = m->source->seek(same ? Position::after(was.last) : Position::oldest());
        m->source->keep_overwritten_starts(false);
        if (!moved) return std::move(moved).error();
        if (!moved->empty()) note(fmt::format("member {}: {}", m->index, *moved));
    }
    skip_ = 0;
    last_released_nanos_ = 0;
    return notes;
}

}  // namespace evring
