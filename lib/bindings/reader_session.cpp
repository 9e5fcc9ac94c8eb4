// The bindings' reader session (reader_session.hpp).
#include "reader_session.hpp"

#include <fmt/format.h>

#include "set/ring_set_source.hpp"
#include "source/ring_source.hpp"

namespace evring::bindings {
namespace {

void on_event(evring_source& handle, const EventDescriptor& event) noexcept {
    const SourceCounters& c = handle.source->counters();
    // The source stands after this event: its seqno + 1 (no virtual call per event).
    handle.registration.on_event(event.record_epoch_nanos, event.seqno + 1, c.lost, c.abandoned);
}

void on_idle(evring_source& handle) noexcept {
    const EventSource& s = *handle.source;
    handle.registration.on_idle(s.next_seqno(), s.counters().lost, s.counters().abandoned);
}

// Event by event, keeping each one's member: sources whose events carry members.
Batch next_with_members(evring_source& handle, std::span<EventDescriptor> out, std::span<std::uint32_t> members) {
    Batch batch;
    SourceItem item;
    while (batch.events < out.size()) {
        const SourceStep step = handle.source->next(item, PayloadRead::None);
        switch (step) {
        case SourceStep::Event:
            if (!members.empty()) members[batch.events] = item.event.member;
            out[batch.events++] = item.event.descriptor;
            continue;
        case SourceStep::Gap:
            ++batch.gaps;
            batch.skipped += item.gap.count;
            continue;
        case SourceStep::Notice: hold_notice(handle, std::string(item.notice)); break;
        default: break;
        }
        batch.stopped = step;
        return batch;
    }
    batch.stopped = SourceStep::Event;
    return batch;
}

}  // namespace

std::string register_reader(evring_source& handle, const ReaderInfo& info) {
    const auto* ring_source = dynamic_cast<const RingSource*>(handle.source.get());
    const RingReader* ring = ring_source != nullptr ? ring_source->reader() : nullptr;
    if (ring == nullptr) return {};  // snapshots, recordings, sets: see the contract
    RegistrationOptions options;
    options.print_warning = false;  // the caller hands the reason on as a notice
    handle.registration = ReaderRegistration::attach(*ring, info, options);
    if (!handle.registration.registered())
        return fmt::format("not registered in the ring's reader registry: {}", handle.registration.warning());
    publish_position(handle);
    return handle.registration.notice();
}

void hold_notice(evring_source& handle, std::string text) { handle.held_notices.push_back(std::move(text)); }

SourceStep next_item(evring_source& handle, SourceItem& item, PayloadRead payload) {
    if (!handle.held_notices.empty()) {
        handle.item_text = std::move(handle.held_notices.front());
        handle.held_notices.erase(handle.held_notices.begin());
        item.notice = handle.item_text;
        return SourceStep::Notice;
    }
    // A where filter (evring_source_set_where) decides on descriptors first;
    // payloads are copied only of events it keeps, or whose fields it needs
    // (event_predicate.hpp): the rest are passed over on their descriptors.
    const EventPredicate* where = handle.where.get();
    const bool wants_payload = payload == PayloadRead::Copy;
    const PayloadRead read = where ? PayloadRead::None : payload;
    SourcePayloadLoader loader(*handle.source);
    for (;;) {
        const SourceStep step = handle.source->next(item, read);
        if (step == SourceStep::Event) {
            on_event(handle, item.event.descriptor);
            if (where) {
                const bool kept = where->matches(item.event, loader);
                if (!loader.failed() && !kept) continue;
                if (!loader.failed() && wants_payload && item.event.payload_state == PayloadState::NotRead)
                    loader.load(item.event);
                if (loader.failed()) return SourceStep::Failed;
                if (!wants_payload) {
                    item.event.payload_state = PayloadState::NotRead;
                    item.event.payload = {};
                }
            }
        } else if (step == SourceStep::NotReady) {
            on_idle(handle);
        }
        return step;
    }
}

Batch next_descriptors(evring_source& handle, std::span<EventDescriptor> out, std::span<std::uint32_t> members) {
    if (!handle.held_notices.empty()) return Batch{0, 0, 0, SourceStep::Notice};
    Batch batch;
    if (handle.source->identity().members) {
        batch = next_with_members(handle, out, members);
    } else {
        batch = handle.source->next_batch(out);
        if (!members.empty()) std::fill_n(members.begin(), batch.events, 0u);
    }
    // Once per batch (a seqlock write of one cache line): the registry sees
    // how far a batch reader has read, however large its batches.
    publish_position(handle);
    return batch;
}

void publish_position(evring_source& handle) noexcept {
    if (!handle.registration.registered()) return;
    const EventSource& s = *handle.source;
    handle.registration.update(s.next_seqno(), s.counters().lost, s.counters().abandoned);
}

SessionCounters counters_of(const evring_source& handle) {
    SessionCounters c{handle.source->counters()};
    if (const auto* set = dynamic_cast<const RingSetSource*>(handle.source.get())) c.late_events = set->late_events();
    return c;
}

std::uint32_t member_count(const evring_source& handle) {
    const auto* set = dynamic_cast<const RingSetSource*>(handle.source.get());
    return set != nullptr ? static_cast<std::uint32_t>(set->members().size()) : 0;
}

}  // namespace evring::bindings
