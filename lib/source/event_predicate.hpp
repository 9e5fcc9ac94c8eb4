// lib/source/event_predicate.hpp — a test on whole events (descriptor and
// payload) that the follow loop applies after its FlowFilter.
//
// The follow loop (follow.hpp, FollowOptions::where) reads descriptors only
// (PayloadRead::None) and calls matches(event, loader) for each event the
// FlowFilter kept; the predicate decides on the descriptor first and calls
// loader.load(event) only when a payload field is still needed, so events
// the descriptor rules out never have their payload copied.
// Implementations: the filter expressions of where.hpp (`--where`), compiled
// against a schema.
//
// Contract: matches() is const, does not allocate and reads a payload only
// when its state is PayloadState::Ok, within its size; a field the payload
// does not hold makes the test false. The loading form calls load() at most
// once per event, and only while the event's state is NotRead.
//
// Thread safety: matches() may be called from several threads at once (each
// with its own event and loader).
#pragma once

#include <optional>

#include "evring/source/event_source.hpp"
#include "evring/source/span_limit.hpp"

namespace evring {

// Fetches the payload of an event read with PayloadRead::None
// (EventSource::read_payload); sets its payload_state and payload.
class PayloadLoader {
public:
    virtual void load(SourceEvent& event) noexcept = 0;

protected:
    ~PayloadLoader() = default;
};

// The loader of a source's own payloads (EventSource::read_payload), used by
// the follow loop and the bindings' reader session; it remembers a failure,
// which the caller reports as the source's (load() itself cannot fail).
class SourcePayloadLoader final : public PayloadLoader {
public:
    explicit SourcePayloadLoader(EventSource& source) noexcept : source_(source) {}
    void load(SourceEvent& event) noexcept override {
        if (source_.read_payload(event) == SourceStep::Failed) failed_ = true;
    }
    bool failed() const noexcept { return failed_; }

private:
    EventSource& source_;
    bool failed_ = false;
};

class EventPredicate;

// The one rule for an event read descriptor-first (PayloadRead::None), for
// the follow loop and the bindings' reader session alike: it is kept when
// `descriptor_kept` (the caller's own descriptor tests) and `where` (null:
// everything) keep it; the predicate loads the payload only when it needs a
// field. A kept event's payload is then loaded when `wanted` is Copy and
// nothing has loaded it yet, so only kept events the output prints are
// copied. A failed load shows in loader.failed().
inline bool keep_event(SourceEvent& event, bool descriptor_kept, const EventPredicate* where, PayloadRead wanted,
                       SourcePayloadLoader& loader) noexcept;

class EventPredicate {
public:
    virtual ~EventPredicate() = default;
    // True when some test looks at payload fields.
    virtual bool needs_payload() const noexcept = 0;
    // The greatest span label an event it keeps can belong to (a Top limit,
    // span_limit.hpp), when the expression bounds one: `block <= 15000010`,
    // `block == 15000010`; nullopt otherwise. The follow loop ends reading
    // once that top has passed.
    virtual std::optional<SpanLimit> span_top() const noexcept { return std::nullopt; }
    // On the event as it is: a payload not read makes field tests false.
    virtual bool matches(const SourceEvent& event) const noexcept = 0;
    // Lazily: the payload is loaded (once) only when the descriptor left the
    // answer open. The default loads first when needed, then tests.
    virtual bool matches(SourceEvent& event, PayloadLoader& loader) const noexcept {
        if (needs_payload() && event.payload_state == PayloadState::NotRead) loader.load(event);
        return matches(static_cast<const SourceEvent&>(event));
    }
};

inline bool keep_event(SourceEvent& event, bool descriptor_kept, const EventPredicate* where, PayloadRead wanted,
                       SourcePayloadLoader& loader) noexcept {
    const bool keep = descriptor_kept && (where == nullptr || where->matches(event, loader));
    if (keep && wanted == PayloadRead::Copy && event.payload_state == PayloadState::NotRead && !loader.failed())
        loader.load(event);
    return keep;
}

}  // namespace evring
