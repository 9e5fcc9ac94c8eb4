// A ring set merged by time (ring_set_source.hpp): opening members, the
// release rule, positions.
//
// Invariant: read() calls next() on a member only when it holds no event of
// that member, so a held event's payload (in that member's source) stays
// valid until the merge hands it out, and until the next read() after that.
#include "evring/set/ring_set_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "util/device_id.hpp"
#include "evring/ring/ring_reader.hpp"
#include "evring/set/ring_set_manifest.hpp"
#include "evring/ring/shared_word.hpp"
#include "evring/ring/sigbus_guard.hpp"
#include "set/ring_set_member.hpp"

namespace evring {
namespace {

constexpr std::uint64_t kRefreshInterval = 10'000'000;  // ns between manifest generation reads

std::uint64_t clock_nanos(clockid_t clock) {
    timespec ts{};
    ::clock_gettime(clock, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

bool earlier(const RingSetSource::Member& a, const RingSetSource::Member& b) {
    const auto& x = a.head.event.descriptor;
    const auto& y = b.head.event.descriptor;
    if (x.record_epoch_nanos != y.record_epoch_nanos) return x.record_epoch_nanos < y.record_epoch_nanos;
    if (a.index != b.index) return a.index < b.index;
    return x.seqno < y.seqno;
}

}  // namespace

void probe_pending(std::vector<std::unique_ptr<RingSetSource::Member>>& members) {
    // Acquire: the reservation word is only compared with what this reader
    // has read (no data is read through it).
    const bool intact = guard_sigbus([&] {
        for (auto& m : members) {
            if (m->has_head || m->ended) continue;
            const MappedRing* ring = m->source->ring();
            m->pending = ring != nullptr &&
                         shared::load_acquire(ring->header().control.last_seqno) >= m->source->next_seqno();
        }
    });
    if (!intact)
        for (auto& m : members) m->pending = !m->has_head && !m->ended;
}

RingSetSource::~RingSetSource() {
    if (manifest_fd_ >= 0) ::close(manifest_fd_);
}

Result<std::unique_ptr<RingSetSource>> RingSetSource::open(const std::string& directory, std::string location,
                                                           RingSetSourceOptions options) {
    (void)install_sigbus_handler();
    auto manifest = read_set_manifest(directory);
    if (!manifest) return std::move(manifest).error();
    std::unique_ptr<RingSetSource> source(new RingSetSource());
    source->options_ = std::move(options);
    if (!source->options_.monotonic_nanos) source->options_.monotonic_nanos = [] { return clock_nanos(CLOCK_MONOTONIC); };
    source->directory_ = directory;
    const std::string file = directory + "/" + kSetManifestName;
    source->manifest_fd_ = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (source->manifest_fd_ < 0) return Error::from_errno(errno, "opening " + file);
    source->schema_blob_ = manifest->schema_blob;
    source->content_type_ = manifest->content_type;
    source->schema_hash_ = manifest->schema_hash;
    SourceIdentity& id = source->identity_;
    id.kind = SourceKind::RingSet;
    id.members = true;
    id.location = std::move(location);
    id.path = directory;
    id.content_type = manifest->content_type;
    id.schema_hash = manifest->schema_hash;
    id.ring_size = RingSize{std::uint64_t{1} << manifest->member_descriptor_shift,
                            std::uint64_t{1} << manifest->member_payload_buf_shift, 0};
    id.instance = manifest->set_id;
    struct stat st {};
    if (::stat(directory.c_str(), &st) == 0) {
        id.device = detail::device_id(st);  // as every source's (device_id.hpp)
        id.inode = st.st_ino;
    }
    source->generation_ = manifest->generation;
    for (const auto& warning : manifest->warnings) source->notices_.push_back(warning);
    for (const auto& info : manifest->members) source->open_member(info.index, info.name, Position::latest());
    return source;
}

void RingSetSource::open_member(std::uint32_t index, const std::string& name, const Position& start) {
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
    member->bell.emplace(Doorbell::attach(*member->source->ring()));
    auto at = std::find_if(members_.begin(), members_.end(), [&](const auto& m) { return m->index > index; });
    members_.insert(at, std::move(member));
}

void RingSetSource::refresh_members(bool force) {
    // The clock is read once per 256 calls: a clock read per merged event
    // would cost more than the merge itself.
    if (!force && (++refresh_calls_ & 255) != 0) return;
    const std::uint64_t now = clock_nanos(CLOCK_MONOTONIC);
    if (!force && now < next_refresh_) return;
    next_refresh_ = now + kRefreshInterval;
    auto generation = read_set_generation(manifest_fd_);
    if (!generation || (*generation == generation_ && !force)) return;
    if (*generation < generation_)
        notices_.push_back(fmt::format("ring set {}: the manifest's generation ran backwards from {} to {}; "
                                       "re-reading its members",
                                       directory_, generation_, *generation));
    generation_ = *generation;
    auto manifest = read_set_manifest(directory_);
    if (!manifest) {
        notices_.push_back(manifest.error().message() + "; reading the members already open");
        return;
    }
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

SourceStep RingSetSource::pull(Member& m, SourceItem& item, PayloadRead payload) {
    const SourceStep step = m.source->next(m.head, payload);
    switch (step) {
    case SourceStep::Event:
        m.has_head = true;
        m.idle = false;
        m.stuck_since = 0;
        return step;
    case SourceStep::Gap:
        item.gap = m.head.gap;
        item.gap.member = m.index;
        return step;
    case SourceStep::Notice:
        notice_text_ = fmt::format("member {}: {}", m.index, m.head.notice);
        item.notice = notice_text_;
        return step;
    case SourceStep::NotReady:
        m.idle = true;
        return step;
    case SourceStep::End:
        m.ended = true;
        return step;
    case SourceStep::Failed:
        m.ended = true;
        notice_text_ = fmt::format("member {}: {}; no longer read", m.index, m.source->error().message());
        item.notice = notice_text_;
        return SourceStep::Notice;
    }
    return step;
}

// The release rule (see the contract): false while a member without a held
// event has a reservation pending and the stall bound has not passed.
bool RingSetSource::may_release() {
    bool ok = true;
    std::uint64_t now = 0;  // read only when a member has a reservation pending
    for (auto& m : members_) {
        if (m->ended || m->has_head) continue;
        if (!m->pending) {
            m->stuck_since = 0;
            continue;
        }
        if (now == 0) now = now_monotonic();
        if (m->stuck_since == 0) m->stuck_since = now;
        if (now - m->stuck_since < static_cast<std::uint64_t>(options_.stall_bound.count())) ok = false;
    }
    return ok;
}

std::uint64_t RingSetSource::now_monotonic() const { return options_.monotonic_nanos(); }

SourceStep RingSetSource::read(SourceItem& item, PayloadRead payload) {
    for (;;) {
        refresh_members(false);
        if (!notices_.empty()) {
            notice_text_ = std::move(notices_.front());
            notices_.erase(notices_.begin());
            item.notice = notice_text_;
            return SourceStep::Notice;
        }
        // An idle member is pulled again only when its writer has reserved
        // something new (phase 0), or when no member holds an event (phase
        // 1: its NotReady path then notices a writer that exited): a NotReady
        // pull costs a liveness check, which must not be paid per event.
        probe_pending(members_);
        for (int phase = 0; phase < 2; ++phase) {
            if (phase == 1 && std::any_of(members_.begin(), members_.end(), [](const auto& m) { return m->has_head; }))
                break;
            for (std::size_t i = 0; i < members_.size(); ++i) {
                Member& m = *members_[i];
                if (m.has_head) continue;
                if (m.ended) {
                    if (!m.reopen || phase == 1) continue;
                    const std::uint32_t index = m.index;
                    const std::string name = m.name;
                    members_.erase(members_.begin() + static_cast<std::ptrdiff_t>(i));
                    open_member(index, name, Position::oldest());
                    return read(item, payload);  // at most once per re-created member
                }
                const bool quiet = m.idle && !m.pending;
                if (quiet != (phase == 1)) continue;
                const SourceStep step = pull(m, item, payload);
                if (step == SourceStep::Gap || step == SourceStep::Notice) return step;
            }
        }
        Member* best = nullptr;
        for (auto& m : members_)
            if (m->has_head && (best == nullptr || earlier(*m, *best))) best = m.get();
        if (best == nullptr) {
            const bool all_ended = std::all_of(members_.begin(), members_.end(), [](const auto& m) { return m->ended; });
            if (!all_ended) return SourceStep::NotReady;
            refresh_members(true);  // a member may have appeared since
            if (!notices_.empty()) continue;
            if (std::any_of(members_.begin(), members_.end(), [](const auto& m) { return !m->ended || m->reopen; }))
                continue;
            return SourceStep::End;
        }
        if (!may_release()) return SourceStep::NotReady;
        best->has_head = false;
        item.event = best->head.event;
        item.event.member = best->index;
        const std::uint64_t t = item.event.descriptor.record_epoch_nanos;
        if (t < last_released_nanos_) ++late_;
        else last_released_nanos_ = t;
        if (skip_ > 0) {
            --skip_;
            continue;
        }
        return SourceStep::Event;
    }
}

Result<std::string> RingSetSource::seek(const Position& start) {
    if (start.kind == Position::Kind::Seqno && start.member != Position::kAnyMember)
        return seek_member(start.member, start.value);
    if (start.kind == Position::Kind::Seqno)
        return Error(EINVAL, fmt::format("ring set '{}': a sequence number needs its member (MEMBER:SEQNO), since "
                                         "every member counts its own",
                                         identity_.location));
    std::string notes;
    std::uint64_t available = 0;
    for (auto& m : members_) {
        m->has_head = false;
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
    auto moved = m.source->seek(Position::seqno(seqno));
    if (!moved) return std::move(moved).error();
    m.has_head = false;
    SourceItem item;
    for (int i = 0; i < 64 && !m.has_head; ++i)
        if (pull(m, item, PayloadRead::None) != SourceStep::Gap) break;
    if (!m.has_head) {
        // Nothing there yet: start every other member at the newest.
        for (auto& other : members_)
            if (other.get() != &m) (void)other->source->seek(Position::latest());
        return *moved;
    }
    const Position at{Position::Kind::AbsoluteTime, m.head.event.descriptor.record_epoch_nanos};
    for (auto& other : members_) {
        if (other.get() == &m) continue;
        other->has_head = false;
        if (auto s = other->source->seek(at); !s) return std::move(s).error();
    }
    m.head.event.payload_state = PayloadState::NotRead;
    last_released_nanos_ = 0;
    return *moved;
}

bool RingSetSource::live() const {
    return std::any_of(members_.begin(), members_.end(), [](const auto& m) { return !m->ended && m->source->live(); });
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
    return fmt::format("end of ring set '{}' (every member read to its end)", identity_.location);
}

std::vector<std::uint32_t> RingSetSource::members() const {
    std::vector<std::uint32_t> out;
    for (const auto& m : members_) out.push_back(m->index);
    return out;
}

SourceCounters RingSetSource::member_counters(std::uint32_t index) const {
    for (const auto& m : members_)
        if (m->index == index) return m->source->counters();
    return {};
}

}  // namespace evring
