#include "sink/record_sink.hpp"

#include <fmt/format.h>

#include <cstring>

#include "util/text_escape.hpp"

namespace evring {

RingHeader source_header(const SourceIdentity& id) {
    RingHeader header{};
    header.magic = kRingMagic;
    header.content_type = id.content_type;
    header.schema_hash = id.schema_hash;
    header.size = id.ring_size;
    return header;
}

void RecordSink::started(const EventSource& source) {
    kind_ = source.kind();
    members_ = source.identity().members;
    const std::uint64_t from = source.next_seqno();
    if (report_)
        say(fmt::format("recording {}{} into {}", printable(source.identity().path),
                        from != 0 ? fmt::format(" from seqno {}", from) : std::string(), printable(output_)));
    if (asked_from_ != 0 && from > asked_from_ && !members_)
        (void)gap(SourceGap{asked_from_, from - asked_from_, GapReason::FellBehind, {}, 0});
    asked_from_ = 0;  // a ring re-opened by name starts a new instance: nothing asked of it
}

bool RecordSink::event(const SourceEvent& event) {
    EventDescriptor descriptor = event.descriptor;
    descriptor.reserved = static_cast<std::uint16_t>(event.member);  // kRecordingRingSet; 0 otherwise
    if (event.payload_state == PayloadState::Invalid) descriptor.payload_size = 0;  // cannot fit: descriptor only
    std::byte* dst = writer_.begin_event(descriptor);
    const bool intact = event.payload_state == PayloadState::Ok;
    if (intact && descriptor.payload_size > 0) std::memcpy(dst, event.payload.data(), descriptor.payload_size);
    if (!keep(writer_.end_event(intact))) return false;
    return kept(1);
}

bool RecordSink::kept(std::uint32_t events) {
    dirty_ = true;
    since_clock_check_ += events;
    if (since_clock_check_ < 4096) [[likely]]
        return true;
    since_clock_check_ = 0;
    const Clock::time_point now = Clock::now();
    if (!may_go_on(now)) return false;
    if (now - last_flush_ > std::chrono::seconds(1)) return flush();
    return true;
}

bool RecordSink::gap(const SourceGap& gap) {
    if (report_) {
        const std::string seqno = members_ ? fmt::format("member {} seqno", gap.member) : std::string("seqno");
        const std::string range = gap.count == 1 ? fmt::format("{} {}", seqno, gap.first_seqno)
                                                 : fmt::format("{} {}..{}", seqno, gap.first_seqno, gap.last_seqno());
        const std::string why = gap.reason == GapReason::FellBehind && kind_ != SourceKind::Recording
                                    ? std::string("the recorder fell behind")
                                    : std::string(describe(gap.reason));
        say(fmt::format("{} not captured ({} events): {}; a gap marker was recorded", range, gap.count, why));
        if (!gap.detail.empty()) say(printable(gap.detail));
    }
    dirty_ = true;
    return keep(writer_.append_gap(gap.first_seqno, gap.count, gap.reason, gap.member));
}

void RecordSink::notice(std::string_view text) { say(printable(text)); }

bool RecordSink::idle() {
    const Clock::time_point now = Clock::now();
    if (!may_go_on(now)) return false;
    if (dirty_ && now - last_flush_ > std::chrono::milliseconds(50)) return flush();
    return true;
}

// The caller's check, at most every 50 ms: a Python caller's takes the GIL.
bool RecordSink::may_go_on(Clock::time_point now) {
    if (!keep_going_ || now - last_check_ < std::chrono::milliseconds(50)) return true;
    last_check_ = now;
    if (keep_going_()) return true;
    stopped_ = true;
    return false;
}

bool RecordSink::flush() {
    dirty_ = false;
    last_flush_ = Clock::now();
    return keep(writer_.flush());
}

}  // namespace evring
