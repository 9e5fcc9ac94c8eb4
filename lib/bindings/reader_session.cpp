// The bindings' reader session (reader_session.hpp).
#include "reader_session.hpp"

#include "named_session.hpp"
#include "wait_handle.hpp"

#include <fmt/format.h>

#include "query/span_seek.hpp"
#include "query/where.hpp"
#include "schema/schema_interest.hpp"
#include "source/ring_set_source.hpp"
#include "source/ring_source.hpp"
#include "evring/source/source_open.hpp"

namespace evring::bindings {
namespace {

void on_event(evring_source& handle, const SourceEvent& event) noexcept {
    if (handle.registration) handle.registration->event(event);  // never stops: its inner sink keeps going
}

void on_idle(evring_source& handle) noexcept {
    if (handle.registration) handle.registration->keep_alive();
}

// The registrations' inner sink: the session hands events out itself.
class PassSink final : public FollowSink {
public:
    bool event(const SourceEvent&) override { return true; }
};
PassSink g_pass;  // stateless, shared by every handle

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

Result<std::uint64_t> interest_for(const evring_source& handle, const InterestRequest& request, bool registering) {
    const Schema* schema = handle.schema.schema ? &*handle.schema.schema : nullptr;
    InterestContext context;
    context.registering = registering;
    context.names = {.keywords = "keywords", .level = "level", .no_register = "register off",
                     .schema_hint = "give a schema path"};
    auto word = resolve_interest(request, schema, *handle.source, context);
    if (!word) return std::move(word).error();
    return word->value_or(kInterestEverything);
}

std::string register_reader(evring_source& handle, const ReaderInfo& info, std::uint64_t interest) {
    const EventSource& source = *handle.source;
    const auto* set = dynamic_cast<const RingSetSource*>(&source);
    if (source.kind() != SourceKind::Ring && (set == nullptr || set->frozen()))
        return {};  // snapshots, recordings: see the contract
    auto sink = std::make_unique<RegisteringSink>(g_pass, info);
    sink->set_print_warning(false);  // the caller hands the reason on as a notice
    sink->set_interest(interest);
    sink->started(source);
    if (!sink->registered()) {
        if (set != nullptr)
            return sink->member_registrations() == 0 && !set->members().empty()
                       ? "not registered in the ring set members' reader registries"
                       : std::string();
        return fmt::format("not registered in the ring's reader registry: {}", sink->registration().warning());
    }
    std::string notice = sink->registration().notice();
    handle.registration = std::move(sink);
    publish_position(handle);
    return notice;
}

bool registered(const evring_source& handle) noexcept {
    return handle.registration && handle.registration->registered();
}

Status set_where(evring_source& handle, std::string_view expression, std::string_view caller) {
    if (expression.empty()) {
        handle.where.reset();
        return {};
    }
    if (!handle.schema.schema)
        return Error(EINVAL, fmt::format("{}: the source has no schema to name fields by", caller));
    const Schema& schema = *handle.schema.schema;
    // One second source for all the labels an expression names, opened on
    // the first: resolve_span moves the read position of a ring or snapshot.
    std::unique_ptr<EventSource> scratch;
    const SpanLabelResolver labels = [&](const SchemaSpan& span, std::uint64_t label) -> Result<std::uint64_t> {
        if (!scratch) {
            auto opened = open_source(handle.source->identity().location, handle.open_options);
            if (!opened) return std::move(opened).error();
            scratch = std::move(*opened);
        }
        SpanRef ref;
        ref.span = span.name;
        ref.label = label;
        ref.text = fmt::format("{}:{}", span.name, label);
        return resolve_span(*scratch, ref, schema);
    };
    auto compiled = compile_where(expression, schema, "where", labels);
    if (!compiled) return Error(EINVAL, compiled.error().message());
    handle.where = std::move(*compiled);
    return {};
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
            on_event(handle, item.event);
            if (where) {
                const bool kept = keep_event(item.event, true, where, payload, loader);
                if (loader.failed()) return SourceStep::Failed;
                if (!kept) continue;
                if (!wants_payload) {
                    item.event.payload_state = PayloadState::NotRead;
                    item.event.payload = {};
                }
            }
            hand_named(handle, item.event.descriptor.seqno, item.event.member);
        } else if (step == SourceStep::End) {
            handle.named_ended = true;
        } else if (step == SourceStep::NotReady) {
            on_idle(handle);
            rearm_descriptor(handle);  // read to NotReady: the descriptor sleeps again
        }
        return step;
    }
}

Batch next_descriptors(evring_source& handle, std::span<EventDescriptor> out, std::span<std::uint32_t> members) {
    if (!handle.held_notices.empty()) return Batch{0, 0, 0, SourceStep::Notice};
    Batch batch;
    if (handle.source->identity().members) {
        if (members.empty() && handle.named) {  // the named reader marks (member, seqno)
            handle.named_members.resize(out.size());
            members = handle.named_members;
        }
        batch = next_with_members(handle, out, members);
    } else {
        batch = handle.source->next_batch(out);
        if (!members.empty()) std::fill_n(members.begin(), batch.events, 0u);
    }
    hand_named(handle, out.first(batch.events), members.empty() ? members : members.first(batch.events));
    if (batch.stopped == SourceStep::End) handle.named_ended = true;
    // Once per batch (a seqlock write of one cache line): the registry sees
    // how far a batch reader has read, however large its batches.
    publish_position(handle);
    if (batch.stopped == SourceStep::NotReady) rearm_descriptor(handle);
    return batch;
}

void publish_position(evring_source& handle) noexcept {
    // The position when it moved (else a heartbeat at most every 100 ms):
    // a ring's, or each member's of a set.
    if (handle.registration) handle.registration->keep_alive();
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
