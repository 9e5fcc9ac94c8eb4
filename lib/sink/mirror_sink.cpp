// The mirror's sink (mirror_sink.hpp).
#include "sink/mirror_sink.hpp"

#include <fmt/format.h>

#include <cstring>
#include <string>

#include "util/text_escape.hpp"

namespace evring {

bool MirrorSink::event(const SourceEvent& event) {
    const EventDescriptor& d = event.descriptor;
    Reservation r = publisher_.reserve(d.payload_size);
    if (!r) {
        status_ = Error(EFBIG, fmt::format("source seqno {}: a {}-byte payload does not fit the mirror ring "
                                           "(at most {}): give --to NAME:DESC_SHIFT:PAYLOAD_SHIFT",
                                           d.seqno, d.payload_size, publisher_.max_payload_size()));
        return false;
    }
    EventDescriptor& staged = r.descriptor();
    staged.event_type = d.event_type;
    staged.record_epoch_nanos = d.record_epoch_nanos;
    staged.content_ext = d.content_ext;
    if (tag_ >= 0) staged.content_ext[static_cast<std::size_t>(tag_)] = d.seqno;
    if (d.payload_size > 0) std::memcpy(r.payload(), event.payload.data(), d.payload_size);
    std::uint64_t& last = last_source(event.member);
    if (d.seqno != last + 1) say_mapping(r.seqno(), event);  // the offset changed: say the new one
    last = d.seqno;
    publisher_.commit(r);
    ++events_;
    return true;
}

void MirrorSink::say_mapping(std::uint64_t mirror_seqno, const SourceEvent& event) const {
    if (!report_) return;
    const std::uint64_t seqno = event.descriptor.seqno;
    if (members_)
        say(fmt::format("mirror seqno {} = member {} seqno {}", mirror_seqno, event.member, seqno));
    else
        say(fmt::format("mirror seqno {} = source seqno {}", mirror_seqno, seqno));
}

// A gap takes no sequence numbers in the mirror: the loop goes on, and the
// next event's mapping line says where the numbering resumes.
bool MirrorSink::gap(const SourceGap& gap) {
    if (!report_) return true;
    say(fmt::format("source {}seqno {}..{} ({} events) not in the mirror: {}",
                    members_ ? fmt::format("member {} ", gap.member) : std::string(), gap.first_seqno,
                    gap.last_seqno(), gap.count, describe(gap.reason)));
    if (!gap.detail.empty()) say(printable(gap.detail));
    return true;
}

void MirrorSink::notice(std::string_view text) {
    say(printable(text));
    last_source_.assign(last_source_.size(), 0);  // a new ring instance numbers from its own start
}

}  // namespace evring
