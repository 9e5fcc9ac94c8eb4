// The span label table (span_labels.hpp).
#include "source/span_labels.hpp"

#include <algorithm>
#include <cstring>

namespace evring {
namespace {

std::optional<std::uint64_t> read_label(const SpanLabelField& f, std::span<const std::byte> payload) noexcept {
    if (f.size == 0 || f.size > 8 || f.offset > payload.size() || f.size > payload.size() - f.offset)
        return std::nullopt;
    std::uint64_t value = 0;
    std::memcpy(&value, payload.data() + f.offset, f.size);  // little-endian, as the ring format
    return value;
}

}  // namespace

void SpanLabels::add(SpanTrack track) { tracks_.push_back(std::move(track)); }

const SpanTrack* SpanLabels::track(std::size_t tag) const noexcept {
    for (const SpanTrack& t : tracks_)
        if (t.tag == tag) return &t;
    return nullptr;
}

bool SpanLabels::wants(const EventDescriptor& d) const noexcept {
    for (const SpanTrack& t : tracks_) {
        for (const SpanLabelField& f : t.openings)
            if (f.event == d.event_type) return true;
        for (const SpanLabelField& f : t.stages)
            if (f.event == d.event_type) return true;
    }
    return false;
}

SpanNote SpanLabels::note(const EventDescriptor& d, std::span<const std::byte> payload) noexcept {
    for (const SpanTrack& t : tracks_) {
        for (const SpanLabelField& f : t.openings) {
            if (f.event != d.event_type) continue;
            const auto value = read_label(f, payload);
            if (!value) continue;
            // The loop and a printer may both note one event: once is enough.
            if (label(t.tag, d.seqno) != value) {
                seen_[next_] = {d.seqno, *value, t.tag};
                next_ = (next_ + 1) % seen_.size();
            }
            return {SpanNote::Kind::Opening, t.tag, *value};
        }
        for (const SpanLabelField& f : t.stages) {
            if (f.event != d.event_type) continue;
            const auto value = read_label(f, payload);
            if (!value) continue;
            auto& settled = settled_[t.tag];
            settled = std::max(settled.value_or(0), *value);
            return {SpanNote::Kind::Stage, t.tag, *value};
        }
    }
    return {};
}

std::optional<std::uint64_t> SpanLabels::label(std::size_t tag, std::uint64_t seqno) const noexcept {
    for (const Seen& s : seen_)
        if (s.seqno == seqno && s.seqno != 0 && s.tag == tag) return s.label;
    return std::nullopt;
}

std::optional<std::uint64_t> SpanLabels::settled(std::size_t tag) const noexcept {
    return tag < settled_.size() ? settled_[tag] : std::nullopt;
}

}  // namespace evring
