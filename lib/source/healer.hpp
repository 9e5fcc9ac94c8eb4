// lib/source/healer.hpp — reading a lapped reader's lost events from a recording.
//
// A reader that falls behind a live ring (or a ring set member) is handed a
// FellBehind gap: the writer overwrote those events before it read them.
// When `evring record` was writing every event of that ring to disk beside
// it, the events are not lost: the Healer reads them from the recording, in
// sequence order, with their payloads, and the reader then goes on in the
// live ring where the gap ended (EventSource::heal_with; docs/healing.md).
//
// Contract:
// - Only a recording of the same ring instance heals
//   (RecordingFileHeader::origin_instance == SourceIdentity::instance): a
//   recording of another ring, of an earlier ring under the same name, or
//   one that does not say (older recorders) is refused, once, in a notice
//   naming it. The instance is checked again whenever a recording is opened.
// - Exactly the gap's sequence numbers (of its member, in a ring set) are
//   handed out, each once: events as recorded (payload Ok, or Expired where
//   the recorder lost it too), and as Gaps what the recording does not hold:
//   its own gap records (the recorder was lapped too: truly lost, with their
//   reason), seqnos it skipped (a filtered recording), and, when it ends or
//   makes no progress for `patience`, the rest of the gap, FellBehind, whose
//   detail says why. Nothing outside the gap is handed out.
// - The recording may still be written: it is read as it grows (follow), so
//   events the recorder has not flushed yet are waited for, up to `patience`
//   without progress (the recorder flushes when idle and once a second).
// - Where the recording comes from: `recording` (a path: --heal-from), or,
//   with `find`, a running `evring record` of this ring found in the ring's
//   reader registry (it registers "-> /absolute/path"), looked for again
//   after a recording ended or when none was found (at most once a second).
//   The registry is also read when the healer is made (look_early): a
//   recorder that has exited by the reader's first lap has freed its slot,
//   and its recording, remembered, still heals when no recorder is running.
//
// Thread safety: one thread at a time, as its source.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "evring/source/event_source.hpp"

namespace evring {
class RecordingSource;
}

namespace evring::detail {

struct HealSettings {
    std::string recording;  // a recording path; empty: find one (`find`)
    bool find = false;      // look in the ring's reader registry
    std::chrono::milliseconds patience{3000};
};

class Healer {
public:
    // `live` is the source whose gaps are healed; it outlives the healer.
    Healer(HealSettings settings, const EventSource& live);
    ~Healer();

    // With `find`: remembers the recording of a recorder running now, so
    // that it heals even after the recorder exits. Quiet: a lap says why
    // nothing heals.
    void look_early();

    // Takes `gap` (FellBehind) to heal: true when the recording will hand
    // out its sequence numbers through next(); false when the gap stands
    // (no recording, or not of this instance: `notice` then says so, once).
    bool start(const SourceGap& gap, std::string& notice);
    // The next item of the gap taken; `done` once the gap is accounted for
    // (the item returned is then its last one, or NotReady is never
    // returned with it).
    SourceStep next(SourceItem& item, PayloadRead payload, bool& done);
    // The payload of the last event next() handed out.
    SourceStep load_payload(SourceEvent& event);
    // Drops the gap taken (the source was sought elsewhere); the recording
    // is sought again by the next start().
    void abandon() noexcept;
    // True when `event` is the last one this healer handed out.
    bool handed(const SourceEvent& event) const noexcept;
    // How many events came from the recording, and its path (for summaries).
    std::uint64_t healed() const noexcept { return healed_; }
    const std::string& recording_path() const noexcept { return path_; }

private:
    bool open_recording(std::string& notice);
    bool find_recording(std::string& notice);
    bool position(std::string& notice);
    // Hands out the rest of the gap as lost, `why` in its detail.
    SourceStep give_up(SourceItem& item, std::string why, bool& done);
    // Gives `gap` its whole line as detail, ending in `why`.
    void explain(SourceGap& gap, std::string_view why);
    SourceStep hand_out(SourceEvent& event, bool& done);

    HealSettings settings_;
    const EventSource& live_;
    std::unique_ptr<RecordingSource> recording_;
    std::string path_;                 // the last recording opened (with find: remembered, look_early)
    std::string said_;                 // the last refusal said (said once)
    std::chrono::steady_clock::time_point next_search_{};
    // The gap being healed: [next_, last_] of member_.
    std::uint64_t next_ = 0;
    std::uint64_t last_ = 0;
    std::uint32_t member_ = 0;
    // Where the recording stands: the next seqno it hands out for member_ (0: unknown).
    std::uint64_t recording_next_ = 0;
    std::uint32_t recording_member_ = 0;
    std::chrono::steady_clock::time_point deadline_{};
    std::uint64_t healed_ = 0;
    std::uint64_t handed_seqno_ = 0;   // the last event handed out (handed())
    std::uint32_t handed_member_ = 0;
    bool handed_any_ = false;
    std::string detail_;               // a gap's detail, valid until the next call
    std::optional<SourceEvent> held_;  // read past a gap the recording lacks: handed out next
    bool ended_ = false;               // the named recording ended: no more healing
};

}  // namespace evring::detail
