// evring/source/flow_filter.hpp — choosing events by type and flow tag, without
// touching payloads.
//
// Flow tags are the four content_ext words of a descriptor; their meaning is
// defined by the content type (in execution rings: [0] block-start seqno,
// [1] transaction index + 1, [2] account index). Filtering on them only reads
// the descriptor copy the iterator already made, so a reader can skip
// uninteresting events without pulling payload cache lines from the writer.
//
//     evring::FlowFilter filter;
//     filter.types.add(7);                 // event type 7 ...
//     filter.require_flow(1, 42);          // ... of transaction 41 only
//     if (filter.matches(event)) ...
//
// Thread safety: plain values; matches() is const and safe to share.
#pragma once

#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>

#include "evring/format.hpp"

namespace evring {

// A set of event types: one bit for each of the 65536 possible values.
class EventTypeSet {
public:
    void add(std::uint16_t type) noexcept { bits_.set(type); any_ = true; }
    void remove(std::uint16_t type) noexcept { bits_.reset(type); any_ = bits_.any(); }
    bool contains(std::uint16_t type) const noexcept { return bits_.test(type); }
    bool empty() const noexcept { return !any_; }

private:
    std::bitset<65536> bits_;
    bool any_ = false;
};

// All conditions must hold: an event type in `types` (when any were added),
// and content_ext[i] == value for each required flow tag.
class FlowFilter {
public:
    static constexpr std::size_t kMaxFlowConditions = 8;

    EventTypeSet types;

    // Returns false when more than kMaxFlowConditions are added or index > 3.
    bool require_flow(std::size_t index, std::uint64_t value) noexcept {
        if (index >= 4 || count_ == kMaxFlowConditions) return false;
        conditions_[count_++] = Condition{static_cast<std::uint8_t>(index), value};
        return true;
    }

    bool matches(const EventDescriptor& event) const noexcept {
        if (!types.empty() && !types.contains(event.event_type)) return false;
        for (std::size_t i = 0; i < count_; ++i)
            if (event.content_ext[conditions_[i].index] != conditions_[i].value) return false;
        return true;
    }

    bool accepts_everything() const noexcept { return types.empty() && count_ == 0; }

private:
    struct Condition {
        std::uint8_t index;
        std::uint64_t value;
    };
    std::array<Condition, kMaxFlowConditions> conditions_{};
    std::size_t count_ = 0;
};

}  // namespace evring
