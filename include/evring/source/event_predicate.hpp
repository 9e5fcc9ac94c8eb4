// evring/source/event_predicate.hpp — a test on whole events (descriptor and
// payload) that the follow loop applies after its FlowFilter.
//
// The follow loop (follow.hpp, FollowOptions::where) calls matches() for each
// event the FlowFilter kept; when needs_payload() the loop reads payloads
// (PayloadRead::Copy) so the predicate can look at fields. Implementations:
// the filter expressions of where.hpp (`--where`), compiled against a schema.
//
// Contract: matches() is const, does not allocate and reads a payload only
// when its state is PayloadState::Ok, within its size; a field the payload
// does not hold makes the test false.
//
// Thread safety: matches() may be called from several threads at once.
#pragma once

#include "evring/source/event_source.hpp"

namespace evring {

class EventPredicate {
public:
    virtual ~EventPredicate() = default;
    virtual bool needs_payload() const noexcept = 0;
    virtual bool matches(const SourceEvent& event) const noexcept = 0;
};

}  // namespace evring
