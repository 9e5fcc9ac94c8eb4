// Healer (healer.hpp): a lapped gap read from a recording of the same ring,
// and a running `evring record` of the ring found in its reader registry.
#include "source/healer.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "registry/reader_kinds.hpp"
#include "registry/reader_listing.hpp"
#include "registry/recorder_output.hpp"
#include "source/recording_source.hpp"
#include "source/ring_set_source.hpp"
#include "source/ring_source.hpp"

namespace evring::detail {

Healer::Healer(HealSettings settings, const EventSource& live) : settings_(std::move(settings)), live_(live) {}
Healer::~Healer() = default;

bool Healer::handed(const SourceEvent& event) const noexcept {
    return handed_any_ && event.descriptor.seqno == handed_seqno_ && event.member == handed_member_;
}

void Healer::abandon() noexcept {
    held_.reset();
    next_ = last_ = 0;
}

// A recording is believed only for the ring instance it says it recorded.
bool Healer::open_recording(std::string& notice) {
    auto opened = RecordingSource::open(settings_.recording, settings_.recording, true, true);
    if (!opened) {
        notice = fmt::format("not healing lapped gaps: {}", opened.error().message());
        return false;
    }
    const std::uint64_t origin = (*opened)->reader().header().origin_instance;
    if (origin != live_.identity().instance) {
        notice = fmt::format(
            "not healing lapped gaps from recording '{}': {}", settings_.recording,
            origin == 0 ? std::string("it does not say which ring instance it recorded (a recorder older than "
                                      "healing, or a recording of a file)")
                        : fmt::format("it recorded ring instance {:016x}, and this is {:016x} (another ring, or an "
                                      "earlier one under the same name)",
                                      origin, live_.identity().instance));
        return false;
    }
    if ((*opened)->identity().members != live_.identity().members) {
        notice = fmt::format("not healing lapped gaps from recording '{}': it is not of a {}", settings_.recording,
                             live_.identity().members ? "ring set" : "single ring");
        return false;
    }
    recording_ = std::move(opened).value();
    path_ = settings_.recording;
    recording_next_ = 0;
    return true;
}

bool Healer::start(const SourceGap& gap, std::string& notice) {
    if (gap.reason != GapReason::FellBehind) return false;
    if (ended_) return false;  // --heal-from's recording ended (said with its last gap)
    if (!recording_) {
        std::string why;
        const bool found = settings_.find ? find_recording(why) : open_recording(why);
        if (!found) {
            if (why != said_) notice = why;  // once per reason, not once per lap
            said_ = why;
            return false;
        }
        said_.clear();
    }
    next_ = gap.first_seqno;
    last_ = gap.last_seqno();
    member_ = gap.member;
    deadline_ = std::chrono::steady_clock::now() + settings_.patience;
    if (!position(notice)) return false;
    return true;
}

// The recording reads on from where it stands when the gap starts there;
// otherwise it is sought (through its index) to the gap's first seqno.
bool Healer::position(std::string& notice) {
    if (recording_next_ == next_ && recording_member_ == member_) return true;
    const Position at = live_.identity().members ? Position::member_seqno(member_, next_) : Position::seqno(next_);
    auto moved = recording_->seek(at);
    if (!moved) {
        notice = fmt::format("not healing lapped gap {}..{}: {}", next_, last_, moved.error().message());
        recording_.reset();
        return false;
    }
    recording_next_ = next_;
    recording_member_ = member_;
    return true;
}

// "lost 16 events (seqno 21..36): the reader fell behind the writer, and WHY":
// a healer's gap says why the recording could not fill it (watch prints a
// gap's detail as its whole line).
void Healer::explain(SourceGap& gap, std::string_view why) {
    const std::string seqno = live_.identity().members ? fmt::format("member {} seqno", gap.member) : "seqno";
    const std::string range = gap.count == 1 ? fmt::format("{} {}", seqno, gap.first_seqno)
                                             : fmt::format("{} {}..{}", seqno, gap.first_seqno, gap.last_seqno());
    detail_ = fmt::format("lost {} events ({}): the reader fell behind the writer, and {}", gap.count, range, why);
    gap.detail = detail_;
}

SourceStep Healer::give_up(SourceItem& item, std::string why, bool& done) {
    item.gap = SourceGap{next_, last_ - next_ + 1, GapReason::FellBehind, {}, member_};
    explain(item.gap, why);
    done = true;
    return SourceStep::Gap;
}

SourceStep Healer::hand_out(SourceEvent& event, bool& done) {
    next_ = event.descriptor.seqno + 1;
    done = event.descriptor.seqno == last_;
    ++healed_;
    handed_seqno_ = event.descriptor.seqno;
    handed_member_ = event.member;
    handed_any_ = true;
    return SourceStep::Event;
}

SourceStep Healer::next(SourceItem& item, PayloadRead payload, bool& done) {
    done = false;
    if (held_) {
        item.event = *held_;
        held_.reset();
        return hand_out(item.event, done);
    }
    for (;;) {
        const SourceStep step = recording_->next(item, payload);
        const auto now = std::chrono::steady_clock::now();
        switch (step) {
        case SourceStep::Event: {
            const SourceEvent& e = item.event;
            deadline_ = now + settings_.patience;
            if (e.member != member_ || e.descriptor.seqno < next_) continue;
            recording_next_ = e.descriptor.seqno + 1;
            if (e.descriptor.seqno > last_)  // the recording has nothing for the rest
                return give_up(item, fmt::format("recording '{}' does not hold them (a filtered recording)", path_),
                               done);
            if (e.descriptor.seqno > next_) {  // a recording that skipped some (filtered): a gap, then it
                const std::uint64_t first = next_;
                next_ = e.descriptor.seqno;
                held_ = e;  // its payload stays the recording's last record until the next call
                item.gap = SourceGap{first, next_ - first, GapReason::FellBehind, {}, member_};
                explain(item.gap, fmt::format("recording '{}' does not hold them (a filtered recording)", path_));
                return SourceStep::Gap;
            }
            return hand_out(item.event, done);
        }
        case SourceStep::Gap: {
            SourceGap& g = item.gap;
            deadline_ = now + settings_.patience;
            if (g.member != member_ || g.last_seqno() < next_) continue;
            if (g.first_seqno > last_)
                return give_up(item, fmt::format("recording '{}' does not hold them", path_), done);
            // Clipped to what is still owed: the recorder lost these too.
            const std::uint64_t first = std::max(g.first_seqno, next_);
            const std::uint64_t end = std::min(g.last_seqno(), last_);
            const std::string said(g.detail);  // the recording's own words (damage), if any
            g = SourceGap{first, end - first + 1, g.reason, {}, member_};
            if (g.reason == GapReason::FellBehind)
                explain(g, fmt::format("so did the recorder of '{}' (they are not in it)", path_));
            else if (!said.empty())
                explain(g, fmt::format("recording '{}' lost them: {}", path_, said));
            next_ = end + 1;
            recording_next_ = next_;
            done = end == last_;
            return SourceStep::Gap;
        }
        case SourceStep::Notice: return step;  // the recording's own words (a rotation, damage)
        case SourceStep::NotReady:
            if (now < deadline_) return step;
            return give_up(item,
                           fmt::format("recording '{}' did not reach seqno {} within {} ms", path_, next_,
                                       settings_.patience.count()),
                           done);
        case SourceStep::End:
        case SourceStep::Failed: {
            std::string why = step == SourceStep::End
                                  ? fmt::format("recording '{}' ended before seqno {}", path_, next_)
                                  : fmt::format("reading recording '{}' failed: {}", path_,
                                                recording_->error().message());
            recording_.reset();  // found again (find), or refused from now on
            ended_ = !settings_.find;
            return give_up(item, std::move(why), done);
        }
        }
    }
}

SourceStep Healer::load_payload(SourceEvent& event) {
    if (!recording_) {
        event.payload_state = PayloadState::Expired;
        event.payload = {};
        return SourceStep::Event;
    }
    return recording_->read_payload(event);
}

// --- finding the recording: the recorder registers its output as
// "-> /absolute/path" (tools/evring/record.cpp); a ring set's recorder
// registers in every member's registry, so a set's first member is asked. ---
namespace {

const RingReader* registry_ring(const EventSource& live) {
    if (const auto* ring = dynamic_cast<const RingSource*>(&live)) return ring->reader();
    if (const auto* set = dynamic_cast<const RingSetSource*>(&live)) {
        for (std::uint32_t index : set->members())
            if (const RingSource* member = set->member_source(index); member != nullptr && member->reader() != nullptr)
                return member->reader();
    }
    return nullptr;
}

}  // namespace

void Healer::look_early() {
    if (!settings_.find) return;
    std::string ignored;
    if (find_recording(ignored)) recording_.reset();  // opened again, and sought, at the first lap
    next_search_ = {};
}

bool Healer::find_recording(std::string& notice) {
    const auto now = std::chrono::steady_clock::now();
    if (now < next_search_) {
        notice = said_;  // the same words: not said again
        return false;
    }
    next_search_ = now + std::chrono::seconds(1);
    const RingReader* ring = registry_ring(live_);
    if (ring == nullptr) {
        notice = fmt::format("not healing lapped gaps: '{}' has no reader registry to find a recorder in",
                             live_.identity().location);
        return false;
    }
    ListingOptions options;
    options.reclaim_dead = false;  // looking, not tidying
    auto listing = list_readers(*ring, options);
    if (!listing) {
        notice = fmt::format("not healing lapped gaps: {}", listing.error().message());
        return false;
    }
    std::string refused;
    for (const ReaderEntry& entry : listing->readers) {
        if (entry.kind != reader_kinds::kRecord || entry.liveness == ReaderLiveness::Dead) continue;
        std::string output = recorder_output(entry);  // whole, though the registry keeps 79 characters
        if (output.empty()) continue;
        settings_.recording = std::move(output);
        std::string why;
        if (open_recording(why)) return true;
        refused = why;
    }
    // No recorder runs now: the one found before (path_: it finished, or was
    // stopped) left its events on disk.
    if (refused.empty() && !path_.empty()) {
        settings_.recording = path_;
        if (open_recording(refused)) return true;
    }
    notice = refused.empty() ? fmt::format("not healing lapped gaps: no `evring record` of '{}' is running",
                                           live_.identity().location)
                             : refused;
    return false;
}

}  // namespace evring::detail
