// lib/source/ring_set_source.hpp — a ring set read as one stream in time order.
//
// open_source (source_open.hpp) returns one of these for a set's name or
// directory. Each member is read by its own RingSource; the set source
// merges them by record_epoch_nanos.
//
// Contract, beyond event_source.hpp:
// - Order: events are handed out by (record_epoch_nanos, member index,
//   seqno): ties between members go to the lower member index, and within a
//   member events keep their sequence order. Every event and gap carries its
//   member index (SourceEvent::member, SourceGap::member); sequence numbers
//   are per member. Memory is one run of at most 32 descriptors read ahead
//   per member, never per event; payloads are read when an event is handed
//   out. counters() and member_counters() count only what was handed out.
// - Release rule: the earliest held event is released only when every other
//   member either holds an event too, or cannot produce an earlier one. A
//   member with no pending reservation (its last_seqno is the last sequence
//   number read) cannot, because reserve() takes the timestamp. A member that
//   has ended (writer gone, read to its end) cannot. A member with a pending
//   reservation (its writer between reserve and commit) holds the merge back
//   for at most stall_bound (default 100 ms) of monotonic time from when the
//   merge first waited on it; after that the merge moves on without it.
// - Late events: an event older than one already handed out (a member let
//   go after stall_bound that then commits, a writer clock stepping back, a
//   reserve whose timestamp was read just before the reader looked) is still
//   delivered, in its member's order, and counted in late_events() (and
//   counters().late). A member that joined the set is not such a case:
//   before an event stamped after the reader's last look at the manifest's
//   generation is released, the generation is read again (ring_set_source_manifest.cpp),
//   and a member that joined is opened and merged first.
// - Gaps are per member and exact: SourceGap::member names the member, the
//   range is in that member's sequence numbers. counters() sum all members;
//   member_counters(i) is member i's alone.
// - Positions: oldest, latest, times and durations are applied to every
//   member. -N starts at the N newest events of the set (each member is
//   positioned N back, and the older surplus is skipped without being handed
//   out). A plain SEQNO is refused (sequence numbers are per member); a
//   Position::member_seqno (MEMBER:SEQNO), or seek_member(MEMBER, SEQNO),
//   starts member MEMBER at SEQNO and every other member at that event's time.
//   Position::after_members (a named reader resuming) starts each member
//   after its own last event when its ring is the same instance, and at its
//   oldest otherwise (re-created since, joined since, nothing consumed); the
//   notes say which members started at their oldest and why.
// - Members: a member that is missing, truncated, not a ring, or carries
//   another content type or schema hash than the manifest is skipped with a
//   Notice naming its file and the reason; the others are read. The manifest's
//   generation is re-read at most every 10 ms while reading and before each
//   wait: new members are read from their oldest event (what they no longer
//   hold comes first as a RingReplaced Gap of that member), a member re-created
//   under its name (a crashed writer's member reclaimed) is read to its end
//   first, then from the new ring's oldest event. A manifest whose generation
//   runs backwards is re-read with a Notice. A member is read from its own
//   file, m<index>, whatever its entry names (ring_set_manifest.hpp), and a
//   member file that is the file of a member already read is skipped with a
//   Notice. A member whose file is cut short under the reader is read no
//   more: damage (damaged(), counters().damage_reports), and a LostToDamage
//   Gap of that member from its next seqno to its header's last_seqno when
//   the header can still be read, else a Notice.
// - Waiting: wait() sleeps on every member's doorbell at once (futex_waitv,
//   Linux 5.16 and later), never more than 100 ms, so that new members are
//   noticed; without futex_waitv (or with more than 128 members, or a member
//   whose doorbell is unusable) it polls every millisecond. The announce /
//   membarrier / re-check protocol is doorbell.hpp's, once for all members.
// - End: when every member has ended and no writer holds the set (a writer
//   holding it without a member yet, or with none left, will add one: until
//   it closes the source is live and gives NotReady). The manifest is opened
//   once and re-read through that descriptor, never by the name; when it has
//   no name left (the last writer's clean close removed the set), one Notice
//   says so and the set ends once its members have (a set re-created under
//   the name is another set: follow_name opens it).
// - A set snapshot (open_snapshot, ring_set_snapshot.hpp) is read the same
//   way, frozen: its members are the snapshot's (never refreshed), each read
//   to its end, the same merge order, gaps and positions; live() is false.
//
// Thread safety: as event_source.hpp (one thread at a time).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "evring/source/event_source.hpp"
#include "set/ring_set_manifest.hpp"
#include "set/ring_set_snapshot.hpp"
#include "source/ring_set_tree.hpp"

namespace evring {

class RingSource;

struct RingSetSourceOptions {
    std::chrono::nanoseconds stall_bound = std::chrono::milliseconds(100);
    // The monotonic clock the stall bound is measured with (tests inject one).
    std::function<std::uint64_t()> monotonic_nanos;
    // Every member's abandon bound (Iterator::kDefaultAbandonAfter by default;
    // RingSource::set_abandon_after).
    std::chrono::nanoseconds abandon_after = std::chrono::seconds(1);
    // How the merge finds the earliest head between reads (ring_set_merge.cpp):
    // Scan looks at every other member holding an event, Tree replays one
    // path of a tournament tree (log2 members comparisons); Auto scans below
    // kMergeTreeFrom members and takes the tree from there. The order handed
    // out is the same either way; tests and evring-set-bench force one to
    // compare them.
    enum class MergeOrder { Auto, Scan, Tree };
    MergeOrder merge_order = MergeOrder::Auto;
};

class RingSetSource final : public EventSource {
public:
    // `directory`: the set's directory; `location`: what the user gave.
    static Result<std::unique_ptr<RingSetSource>> open(const std::string& directory, std::string location,
                                                       RingSetSourceOptions options = {});
    // A set snapshot's members, merged; `location`: what the user gave.
    static Result<std::unique_ptr<RingSetSource>> open_snapshot(LoadedSetSnapshot snapshot, std::string location,
                                                                RingSetSourceOptions options = {});
    ~RingSetSource() override;

    Result<std::string> seek(const Position& start) override;
    Result<std::string> seek_member(std::uint32_t member, std::uint64_t seqno);
    // Position::after_members (ring_set_source_manifest.cpp).
    Result<std::string> seek_members_after(const std::vector<Position::MemberAfter>& after);
    void wait(std::chrono::nanoseconds timeout) override;
    bool live() const override;
    Result<std::uint64_t> now_nanos() override;
    std::uint64_t next_seqno() const override { return 0; }  // per member
    std::span<const std::byte> schema() const override;
    std::string end_text() const override;

    std::uint64_t late_events() const noexcept { return counters_.late; }
    // Member indexes currently read, ascending.
    std::vector<std::uint32_t> members() const;
    // Member `index`'s own counters (zeros for a member not read).
    SourceCounters member_counters(std::uint32_t index) const;
    // Member `index`'s own source (null when it is not read) and, in
    // `serial`, which opening of it that is (a member re-created under its
    // name gets a new one). Valid until member_version() changes.
    const RingSource* member_source(std::uint32_t index, std::uint64_t* serial = nullptr) const;
    // Changes whenever a member is opened or dropped (readers that keep
    // per-member state, such as RegisteringSink, re-sync then).
    std::uint64_t member_version() const noexcept { return member_version_; }
    // Member `index`'s ring (null when it is not read).
    const MappedRing* member_ring(std::uint32_t index) const;
    // The manifest as opened (a live set's may have changed since), and its bytes.
    const RingSetManifest& manifest() const noexcept { return manifest_; }
    std::span<const std::byte> manifest_bytes() const noexcept { return manifest_bytes_; }
    // True for a set snapshot (open_snapshot).
    bool frozen() const noexcept { return frozen_; }

    struct Member;  // lib/

protected:
    SourceStep read(SourceItem& item, PayloadRead payload) override;
    SourceStep load_payload(SourceEvent& event) override;
    void prepare_wait(WaitArm& arm) override;  // ring_set_source_wait.cpp

private:
    RingSetSource() = default;
    void adopt_manifest(RingSetManifest manifest, std::vector<std::byte> bytes, std::string location,
                        RingSetSourceOptions options);
    void refresh_members(bool force);
    // Opens member `index` at `start`; Oldest is for a member opened after
    // the reader started (joined or re-created): what it no longer holds
    // comes first as a RingReplaced Gap of that member.
    void open_member(std::uint32_t index, const std::string& name, const Position& start);
    Member* pick(SourceItem& item, SourceStep& step, bool& again);
    Member* next_in_order(SourceItem& item, SourceStep& step);
    bool refill(Member& member, SourceItem& item, SourceStep& step);
    Member* next_by_scan();
    Member* play(std::uint64_t key);
    std::uint64_t key_at(const Member& member, std::uint32_t at, std::uint32_t slot) const;
    void start_order(Member* best);
    bool build_tree();
    SourceStep read_slowly(SourceItem& item, PayloadRead payload);
    bool take_head(Member& member, SourceItem& item);
    bool joined_before_head(const Member& member);
    void look_ahead(const Member& member);
    SourceStep deliver(Member& member, SourceItem& item, PayloadRead payload, bool late);
    SourceStep deliver_payload(Member& member, SourceItem& item);
    SourceStep read_joined(Member& best, SourceItem& item, PayloadRead payload);
    SourceStep read_by_scan(SourceItem& item, PayloadRead payload);
    SourceStep fill(SourceItem& item);
    SourceStep pull(Member& member, SourceItem& item);
    Result<std::string> heal_member_start(Member& member, std::uint64_t seqno);
    SourceStep hand_out(Member& member, SourceStep step, SourceItem& item);
    // A member that failed (ring_set_member_failed.cpp): damage, and a gap
    // from `first_lost` when its header still says how far it went.
    SourceStep member_failed(Member& member, std::uint64_t first_lost, SourceItem& item);
    bool may_release();
    std::uint64_t now_monotonic() const;
    bool writers_hold_set() const;
    Result<RingSetManifest> read_own_manifest() const;
    bool note_removed();
    // Before an event stamped `nanos` is released (ring_set_source_manifest.cpp): true
    // when a member joined since the last look and was opened (the merge then
    // starts over, so that its earlier events go first).
    bool member_joined_before(std::uint64_t nanos);
    void map_generation();
    void unmap_generation() noexcept;

    std::string directory_;
    RingSetManifest manifest_;
    std::vector<std::byte> manifest_bytes_;
    bool frozen_ = false;
    std::uint64_t member_version_ = 0;
    int manifest_fd_ = -1;  // -1: frozen, nothing to refresh
    std::uint64_t generation_ = 0;
    bool removed_ = false;           // the manifest opened has no name left (note_removed)
    // The manifest mapped read-only for its generation word alone (null:
    // read it with pread), and the wall clock before its last read: every
    // member that joined before then is open (member_joined_before).
    void* generation_map_ = nullptr;
    std::size_t generation_map_size_ = 0;
    std::uint64_t members_seen_nanos_ = 0;
    std::string manifest_problem_;   // the last manifest read error said (said once)
    std::uint64_t next_refresh_ = 0;
    // read()'s one gate (ring_set_merge.cpp). fast_: events read() may still
    // hand out from the order without read_slowly; granted by read_slowly
    // when the order holds, no -N surplus is left to pass over and no notice
    // waits, and set to 0 by whatever may change those (a seek, members
    // opened or re-read, a member failing). until_poll_: events and slow
    // calls left until read_slowly polls the manifest (refresh_members, which
    // reads the clock: a clock read per merged event would cost more than the
    // merge), those granted to fast_ taken off in advance and given back
    // unused; never 0 between calls.
    static constexpr std::uint32_t kPollEvery = 256;
    std::uint32_t fast_ = 0;
    std::uint32_t until_poll_ = kPollEvery;
    std::vector<std::byte> schema_blob_;
    std::uint16_t content_type_ = 0;
    std::array<std::uint8_t, 32> schema_hash_{};
    std::vector<std::unique_ptr<Member>> members_;
    Member* last_ = nullptr;  // whose event read() handed out last (load_payload); reset by read() and seek()
    // Members skipped (missing, foreign, ...) and the file they were then
    // (device, inode; 0, 0 when missing): tried again only when it changes.
    std::map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>> skipped_;
    std::vector<std::string> notices_;  // waiting to be handed out
    std::string notice_text_;
    std::uint64_t last_released_nanos_ = 0;
    std::uint64_t skip_ = 0;  // -N: older events still to pass over
    std::uint64_t runs_ = 0;  // runs read from members that held events (probe_pending)
    // The order (pick, next_in_order): taken from a full pass that found no
    // member wanting a read, and valid until something resets it (order_ok_ =
    // false where members are opened, dropped, sought or fail, and when the
    // member released last reads nothing more). `released_` is the member
    // picked last, whose head moves on. Either an unordered list of the other
    // members holding a head, whose earliest is order_[bound_] (Scan), or a
    // tournament tree over every member (Tree, order_tree_). O(members) memory.
    Member* released_ = nullptr;
    bool order_ok_ = false;
    bool order_tree_ = false;
    // Members holding no event that had not ended when the order was taken
    // (idle, probed without a reservation): probed again after each run read.
    std::size_t quiet_ = 0;
    std::vector<Member*> order_;
    std::size_t bound_ = 0;
    // The tree (ring_set_tree.hpp; slot i: members_[i], its winner released_)
    // and the key of released_'s head now that it moved on (kUnplaced: found
    // from the member, after reading its next run if it used this one up).
    MergeTree tree_;
    std::uint64_t next_key_ = MergeTree::kUnplaced;
    RingSetSourceOptions options_;
};

}  // namespace evring
