// A ring set merged by time (ring_set_source.hpp): opening members, members
// coming and going, positions. The merge itself is ring_set_merge.cpp.
#include "source/ring_set_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "evring/ring/ring_reader.hpp"
#include "set/ring_set_manifest.hpp"
#include "evring/ring/shared_word.hpp"
#include "ring/sigbus_guard.hpp"
#include "ring/ring_locks.hpp"
#include "source/ring_set_member.hpp"
#include "source/source_identity.hpp"

namespace evring {
namespace {

constexpr std::uint64_t kRefreshInterval = 10'000'000;  // ns between manifest generation reads

std::uint64_t clock_nanos(clockid_t clock) {
    timespec ts{};
    ::clock_gettime(clock, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace

RingSetSource::~RingSetSource() {
    unmap_generation();
    if (manifest_fd_ >= 0) ::close(manifest_fd_);
}

void RingSetSource::adopt_manifest(RingSetManifest manifest, std::vector<std::byte> bytes, std::string location,
                                   RingSetSourceOptions options) {
    options_ = std::move(options);
    if (!options_.monotonic_nanos) options_.monotonic_nanos = [] { return clock_nanos(CLOCK_MONOTONIC); };
    directory_ = manifest.directory;
    schema_blob_ = manifest.schema_blob;
    content_type_ = manifest.content_type;
    schema_hash_ = manifest.schema_hash;
    generation_ = manifest.generation;
    SourceIdentity& id = identity_;
    id.kind = SourceKind::RingSet;
    id.members = true;
    id.location = std::move(location);
    id.path = manifest.directory;
    // Device and inode as every source encodes them (follow_name compares).
    detail::file_identity(id.path, id);
    id.content_type = manifest.content_type;
    id.schema_hash = manifest.schema_hash;
    id.ring_size = RingSize{std::uint64_t{1} << manifest.member_descriptor_shift,
                            std::uint64_t{1} << manifest.member_payload_buf_shift, 0};
    id.instance = manifest.set_id;
    for (const auto& warning : manifest.warnings) notices_.push_back(warning);
    bytes.resize(std::min<std::size_t>(bytes.size(), set_manifest_used_size(manifest)));
    manifest_bytes_ = std::move(bytes);
    manifest_ = std::move(manifest);
}

Result<std::unique_ptr<RingSetSource>> RingSetSource::open(const std::string& directory, std::string location,
                                                           RingSetSourceOptions options) {
    (void)install_sigbus_handler();
    // The manifest is opened once and re-read through this descriptor: a set
    // re-created under the name is another set, never read as this one.
    auto fd = open_set_manifest(directory);
    if (!fd) return std::move(fd).error();
    std::unique_ptr<RingSetSource> source(new RingSetSource());
    source->manifest_fd_ = *fd;
    auto bytes = read_set_manifest_bytes(*fd, directory);
    if (!bytes) return std::move(bytes).error();
    auto manifest = parse_set_manifest(*bytes, directory);
    if (!manifest) return std::move(manifest).error();
    const auto members = manifest->members;
    source->map_generation();
    source->adopt_manifest(std::move(manifest).value(), std::move(bytes).value(), std::move(location),
                           std::move(options));
    for (const auto& info : members) source->open_member(info.index, info.name, Position::latest());
    return source;
}

Result<std::unique_ptr<RingSetSource>> RingSetSource::open_snapshot(LoadedSetSnapshot snapshot, std::string location,
                                                                    RingSetSourceOptions options) {
    std::unique_ptr<RingSetSource> source(new RingSetSource());
    source->frozen_ = true;
    const std::string path = snapshot.manifest.directory;
    source->adopt_manifest(std::move(snapshot.manifest), std::move(snapshot.manifest_bytes), std::move(location),
                           std::move(options));
    for (auto& [index, loaded] : snapshot.members) {
        auto member = std::make_unique<Member>();
        member->index = index;
        member->name = fmt::format("m{}", index);
        member->path = loaded.ring.path();
        auto opened = RingSource::open_snapshot(std::move(loaded), member->path);
        if (!opened) return std::move(opened).context(fmt::format("set snapshot '{}'", path)).error();
        member->source = std::move(opened).value();
        if (auto moved = member->source->seek(Position::latest()); !moved) return std::move(moved).error();
        source->members_.push_back(std::move(member));  // ascending: load_set_snapshot checked
    }
    return source;
}

void RingSetSource::open_member(std::uint32_t index, const std::string& name, const Position& start) {
    fast_ = 0;  // members change, or a notice comes
    const std::string path = directory_ + "/" + name;
    auto skip = [&](const std::string& why) {
        notices_.push_back(fmt::format("ring set {}: member {} ({}) skipped: {}", directory_, index, path, why));
        struct stat st {};
        skipped_[index] = ::stat(path.c_str(), &st) == 0 ? std::pair<std::uint64_t, std::uint64_t>(st.st_dev, st.st_ino)
                                                           : std::pair<std::uint64_t, std::uint64_t>(0, 0);
    };
    skipped_.erase(index);
    auto reader = RingReader::open(path);
    if (!reader) return skip(reader.error().message());
    if (auto s = reader->ring().check_content_type(content_type_, schema_hash_); !s)
        return skip("it is not of the set's content: " + s.error().message());
    struct stat st {};
    const bool stat_ok = ::fstat(reader->fd(), &st) == 0;
    // The member is the file itself, not what the manifest says: a file
    // already read as another member (a link to it) is not read twice.
    if (stat_ok)
        for (const auto& m : members_)
            if (m->index != index && m->device == st.st_dev && m->inode == st.st_ino)
                return skip(fmt::format("it is the same file as member {} ({})", m->index, m->path));
    auto opened = RingSource::open_live(std::move(reader).value(), path);
    if (!opened) return skip(opened.error().message());
    auto member = std::make_unique<Member>();
    member->index = index;
    member->name = name;
    member->path = path;
    member->source = std::move(opened).value();
    if (stat_ok) {
        member->device = st.st_dev;
        member->inode = st.st_ino;
    }
    if (auto moved = member->source->seek(start); !moved) return skip(moved.error().message());
    // A member opened after the reader started (it joined, or was re-created)
    // is read from its oldest event: what its writer wrote and overwrote
    // before then is lost to this reader, and said, as for a ring re-created
    // under a followed name (handed out before its events: Member::after).
    if (start.kind == Position::Kind::Oldest && member->source->next_seqno() > 1) {
        member->after = SourceStep::Gap;
        member->after_item.gap = SourceGap{1, member->source->next_seqno() - 1, GapReason::RingReplaced, {}};
    }
    member->source->set_abandon_after(options_.abandon_after);
    member->bell.emplace(Doorbell::attach(*member->source->ring()));
    auto at = std::find_if(members_.begin(), members_.end(), [&](const auto& m) { return m->index > index; });
    member->serial = ++member_version_;
    members_.insert(at, std::move(member));
    order_ok_ = false;
}

void RingSetSource::refresh_members(bool force) {
    if (manifest_fd_ < 0) return;  // frozen: a set snapshot's members never change
    const std::uint64_t now = clock_nanos(CLOCK_MONOTONIC);
    if (removed_ || (!force && now < next_refresh_)) return;
    next_refresh_ = now + kRefreshInterval;
    auto generation = read_set_generation(manifest_fd_);
    if (!generation || (*generation == generation_ && !force)) return;
    fast_ = 0;  // members may change, notices come
    if (note_removed()) return;
    if (*generation < generation_)
        notices_.push_back(fmt::format("ring set {}: the manifest's generation ran backwards from {} to {}; "
                                       "re-reading its members",
                                       directory_, generation_, *generation));
    generation_ = *generation;
    order_ok_ = false;  // members may be opened or marked for re-opening
    auto manifest = read_own_manifest();
    if (!manifest) {
        // Said once per distinct problem: this runs before every wait.
        std::string problem = manifest.error().message() + "; reading the members already open";
        if (problem != manifest_problem_) notices_.push_back(problem);
        manifest_problem_ = std::move(problem);
        return;
    }
    manifest_problem_.clear();
    for (const auto& info : manifest->members) {
        auto it = std::find_if(members_.begin(), members_.end(), [&](const auto& m) { return m->index == info.index; });
        struct stat st {};
        if (it == members_.end()) {
            const bool exists = ::stat(info.path.c_str(), &st) == 0;
            const std::pair<std::uint64_t, std::uint64_t> file =
                exists ? std::pair<std::uint64_t, std::uint64_t>(st.st_dev, st.st_ino) : std::pair<std::uint64_t, std::uint64_t>(0, 0);
            if (auto was = skipped_.find(info.index); was != skipped_.end() && was->second == file) continue;
            open_member(info.index, info.name, Position::oldest());
            continue;
        }
        if (::stat(info.path.c_str(), &st) == 0 && (st.st_dev != (*it)->device || st.st_ino != (*it)->inode))
            (*it)->reopen = true;
    }
}

// From the member the event came from (its ring still holds the payload
// unless overwritten since: Expired then).
SourceStep RingSetSource::load_payload(SourceEvent& event) {
    if (last_ == nullptr || last_->index != event.member) {
        event.payload_state = PayloadState::Expired;
        event.payload = {};
        return SourceStep::Event;
    }
    const std::uint32_t member = event.member;
    const SourceStep step = last_->source->fill_payload(event);
    event.member = member;
    if (step == SourceStep::Failed) return fail(last_->source->error());
    return step;
}

Result<std::string> RingSetSource::seek(const Position& start) {
    seeking();
    last_ = nullptr;
    fast_ = 0;
    if (start.kind == Position::Kind::Seqno && start.member != Position::kAnyMember)
        return seek_member(start.member, start.value);
    if (start.kind == Position::Kind::Seqno && start.resume) return seek_members_after(start.members_after);
    if (start.kind == Position::Kind::Seqno)
        return Error(EINVAL, fmt::format("ring set '{}': a sequence number needs its member (MEMBER:SEQNO), since "
                                         "every member counts its own",
                                         identity_.location));
    std::string notes;
    std::uint64_t available = 0;
    order_ok_ = false;
    for (auto& m : members_) {
        m->drop_run();
        m->ended = false;
        auto moved = m->source->seek(start);
        if (!moved) return std::move(moved).error();
        if (!moved->empty()) notes += (notes.empty() ? "" : "; ") + *moved;
        if (start.kind == Position::Kind::Back) {
            std::uint64_t last = 0;
            if (guard_sigbus([&] { last = shared::load_acquire(m->source->ring()->header().control.last_seqno); }) &&
                last >= m->source->next_seqno())
                available += last - m->source->next_seqno() + 1;
        }
    }
    skip_ = start.kind == Position::Kind::Back && available > start.value ? available - start.value : 0;
    last_released_nanos_ = 0;
    return notes;
}

Result<std::string> RingSetSource::seek_member(std::uint32_t index, std::uint64_t seqno) {
    auto it = std::find_if(members_.begin(), members_.end(), [&](const auto& m) { return m->index == index; });
    if (it == members_.end())
        return Error(ENOENT, fmt::format("ring set '{}' has no member {} to start at", identity_.location, index));
    Member& m = **it;
    order_ok_ = false;
    fast_ = 0;
    auto moved = m.source->seek(Position::seqno(seqno));
    if (!moved) return std::move(moved).error();
    m.drop_run();
    SourceItem item;
    for (int i = 0; i < 64 && !m.has_head(); ++i)
        if (pull(m, item) != SourceStep::Gap) break;
    if (!m.has_head()) {
        // Nothing there yet: start every other member at the newest.
        for (auto& other : members_)
            if (other.get() != &m) {
                other->drop_run();
                (void)other->source->seek(Position::latest());
            }
        return *moved;
    }
    const Position at{Position::Kind::AbsoluteTime, m.head().record_epoch_nanos};
    for (auto& other : members_) {
        if (other.get() == &m) continue;
        other->drop_run();
        if (auto s = other->source->seek(at); !s) return std::move(s).error();
    }
    last_released_nanos_ = 0;
    if (heals() && m.head().seqno > seqno) return heal_member_start(m, seqno);
    return *moved;
}

// A healing set started at MEMBER:SEQNO the ring has overwritten: the member
// is sought again, keeping the start, so that its first read is the lapped
// gap up to its oldest event, handed to the healer (the pass above dropped
// it while looking for a time). The others start at that oldest event's
// time; the healed events come first, as a lapped member's do.
Result<std::string> RingSetSource::heal_member_start(Member& m, std::uint64_t seqno) {
    m.drop_run();
    m.source->keep_overwritten_starts(true);
    auto moved = m.source->seek(Position::seqno(seqno));
    m.source->keep_overwritten_starts(false);
    return moved;
}

bool RingSetSource::live() const {
    return std::any_of(members_.begin(), members_.end(), [](const auto& m) { return !m->ended && m->source->live(); }) ||
           writers_hold_set();
}

bool RingSetSource::writers_hold_set() const {
    if (manifest_fd_ < 0) return false;  // frozen
    // Every set writer holds LOCK_SH on the manifest while it lives
    // (ring_set.cpp); readers never lock it. /proc/locks is read only
    // once every member has ended.
    auto holders = detail::lock_holders(manifest_fd_);
    if (!holders) return false;
    return std::any_of(holders->begin(), holders->end(),
                       [](const detail::LockHolder& h) { return h.kind == detail::LockKind::Flock; });
}

Result<std::uint64_t> RingSetSource::now_nanos() {
    if (live()) return clock_nanos(CLOCK_REALTIME);
    std::uint64_t newest = 0;
    for (auto& m : members_)
        if (auto now = m->source->now_nanos(); now) newest = std::max(newest, *now);
    return newest;
}

std::span<const std::byte> RingSetSource::schema() const { return schema_blob_; }

std::string RingSetSource::end_text() const {
    if (frozen_) return fmt::format("end of set snapshot '{}' (every member read to its end)", identity_.location);
    if (removed_)
        return fmt::format("end of ring set '{}' (removed by its last writer; every member read to its end)",
                           identity_.location);
    return fmt::format("end of ring set '{}' (every member read to its end)", identity_.location);
}

std::vector<std::uint32_t> RingSetSource::members() const {
    std::vector<std::uint32_t> out;
    for (const auto& m : members_) out.push_back(m->index);
    return out;
}

const RingSource* RingSetSource::member_source(std::uint32_t index, std::uint64_t* serial) const {
    for (const auto& m : members_)
        if (m->index == index) {
            if (serial != nullptr) *serial = m->serial;
            return m->source.get();
        }
    return nullptr;
}

const MappedRing* RingSetSource::member_ring(std::uint32_t index) const {
    for (const auto& m : members_)
        if (m->index == index) return m->source->ring();
    return nullptr;
}

SourceCounters RingSetSource::member_counters(std::uint32_t index) const {
    for (const auto& m : members_) {
        if (m->index != index) continue;
        SourceCounters c = m->source->counters();
        c.events -= m->held();  // read ahead, not handed out yet
        return c;
    }
    return {};
}

}  // namespace evring
