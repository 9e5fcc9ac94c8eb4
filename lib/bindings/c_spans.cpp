// The C ABI's assembled spans (evring.h, "Assembled spans"): the library's
// SpanReader (evring/query/span_reader.hpp) pulling through
// evring_source_next itself, so the events, gaps and notices it assembles
// are exactly what a C reader of the same source would be handed, filter
// checks and registry bookkeeping included.
#include <errno.h>

#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "handles.hpp"
#include "evring/query/span_reader.hpp"

using evring::bindings::big_enough;
using evring::bindings::deliver;
using evring::bindings::guard;
using evring::bindings::size_message;

struct evring_assembler {
    evring_source* source = nullptr;
    evring::SpanReader reader;
    mutable std::string error;  // const calls (get_counts) report failures too
    evring_item item{};  // the source's item, read whole whatever the caller's struct_size
    // The span handed out last, and the C views of it the caller's evring_span points into.
    evring::AssembledSpan current;
    std::vector<evring_span_event> events;
    std::vector<evring_span_stage> stages;
    std::vector<evring_span_nested> nested;
    std::string reassembly_error;
    evring_assembler(evring_source* s, evring::SpanReader r) : source(s), reader(std::move(r)) {
        item.struct_size = sizeof item;
    }
};

namespace {

// The first versioned sizes (struct_size may not be smaller; see c_source.cpp).
constexpr std::size_t kSpanFirst = 136;
constexpr std::size_t kCountsFirst = 48;
constexpr std::size_t kItemFirst = 128;
static_assert(sizeof(evring_span) == kSpanFirst);
static_assert(sizeof(evring_assembler_counts) == kCountsFirst);
// The element structs never grow (evring.h): their sizes are part of the ABI.
static_assert(sizeof(evring_span_event) == 88 && sizeof(evring_span_stage) == 24 && sizeof(evring_span_nested) == 32);
static_assert(EVRING_SPAN_BROKEN == static_cast<int>(evring::AssembledSpan::State::Broken));
// pull() and evring_assembler_next cast between the C steps and SourceStep.
static_assert(EVRING_STEP_EVENT == static_cast<int>(evring::SourceStep::Event) &&
              EVRING_STEP_GAP == static_cast<int>(evring::SourceStep::Gap) &&
              EVRING_STEP_NOTICE == static_cast<int>(evring::SourceStep::Notice) &&
              EVRING_STEP_END == static_cast<int>(evring::SourceStep::End));

int fail(const evring_assembler* a, std::string message) {
    a->error = evring::bindings::error_text(message);
    return EVRING_STEP_FAILED;
}

// Builds the C views of a->current into `out`.
void describe(evring_assembler* a, evring_span& out) {
    const evring::AssembledSpan& s = a->current;
    a->events.resize(s.events.size());
    for (std::size_t i = 0; i < s.events.size(); ++i) {
        const evring::AssembledEvent& e = s.events[i];
        evring_span_event& c = a->events[i];
        std::memcpy(&c.event, &e.descriptor, sizeof c.event);
        c.member = e.member;
        c.payload_state = static_cast<int>(e.payload_state);
        c.payload = e.payload_state == evring::PayloadState::Ok ? e.payload.data() : nullptr;
        c.payload_size = e.payload_state == evring::PayloadState::Ok ? e.payload.size() : 0;
    }
    a->stages.clear();
    for (const evring::AssembledStage& st : s.stages) a->stages.push_back({st.name.c_str(), st.seqno, st.nanos});
    a->nested.clear();
    for (const evring::AssembledNested& n : s.nested)
        a->nested.push_back({n.span->name.c_str(), n.key, n.events.data(), n.events.size()});
    a->reassembly_error.clear();
    if (s.state == evring::AssembledSpan::State::Broken)
        a->reassembly_error = fmt::format("seqno {}..{} lost", s.lost_first, s.lost_first + s.lost_count - 1);
    out.state = static_cast<int>(s.state);
    out.span = s.span->name.c_str();
    out.label = s.label;
    out.id = s.id.empty() ? nullptr : reinterpret_cast<const uint8_t*>(s.id.data());
    out.id_size = s.id.size();
    out.member = s.member;
    out.events = a->events.data();
    out.event_count = a->events.size();
    out.nested = a->nested.data();
    out.nested_count = a->nested.size();
    out.outside = s.outside.data();
    out.outside_count = s.outside.size();
    out.stages = a->stages.data();
    out.stage_count = a->stages.size();
    out.lost_first = s.lost_first;
    out.lost_count = s.lost_count;
    out.reassembly_error = a->reassembly_error.c_str();
}

// The event evring_source_next handed out, as the assembler takes it.
evring::SourceEvent event_of(const evring_item& item) {
    evring::SourceEvent e;
    std::memcpy(&e.descriptor, &item.event, sizeof item.event);
    e.member = item.member;
    e.payload_state = static_cast<evring::PayloadState>(item.payload_state);
    if (item.payload != nullptr) e.payload = {static_cast<const std::byte*>(item.payload), item.payload_size};
    return e;
}

evring::SourceGap gap_of(const evring_item& item) {
    evring::SourceGap g;
    g.first_seqno = item.gap_first_seqno;
    g.count = item.gap_count;
    g.member = item.member;
    g.reason = static_cast<evring::GapReason>(item.gap_reason);
    return g;
}

// One step of the source for the reader to assemble: evring_source_next into
// a->item, which a gap or notice is then delivered to the caller from.
evring::SourceStep pull(evring_assembler* a, evring::SourceItem& item) {
    if (a->source->where) {
        a->error = evring::bindings::error_text(
                "evring_assembler_next: a where filter was set on the source: whole instances would leave "
                "events out");
        return evring::SourceStep::Failed;
    }
    const int got = evring_source_next(a->source, &a->item, EVRING_READ_PAYLOAD);
    switch (got) {
    case EVRING_STEP_EVENT: item.event = event_of(a->item); break;
    case EVRING_STEP_GAP: item.gap = gap_of(a->item); break;
    case EVRING_STEP_FAILED: a->error = evring_source_error(a->source); break;  // escaped and bounded already
    default: break;
    }
    return static_cast<evring::SourceStep>(got);
}

}  // namespace

extern "C" {

evring_assembler* evring_assembler_open(evring_source* source, const char* span, const char* stage) {
    using evring::bindings::set_last_error;
    auto refuse = [](std::string why) -> evring_assembler* {
        set_last_error(evring::Error(EINVAL, "evring_assembler_open: " + why));
        return nullptr;
    };
    if (source == nullptr) return refuse("no source (NULL handle)");
    if (span == nullptr) return refuse("no span given (\"block\")");
    return guard(
        [&]() -> evring_assembler* {
            const std::optional<evring::Schema>& schema = source->schema.schema;
            if (!schema) return refuse("the source has no schema to find spans in");
            if (source->where) return refuse("a where filter is set: whole instances would leave events out");
            auto made = evring::SpanReader::make(*schema, span, stage == nullptr ? "" : stage);
            if (!made) return refuse(made.error().message());
            return new evring_assembler(source, std::move(*made));
        },
        [&](int, const char* message) -> evring_assembler* {
            set_last_error(evring::Error(ENOMEM, message));
            return nullptr;
        });
}

void evring_assembler_close(evring_assembler* assembler) { delete assembler; }

int evring_assembler_next(evring_assembler* a, evring_span* span, evring_item* item) {
    if (a == nullptr) return EVRING_STEP_FAILED;
    if (!big_enough(span, kSpanFirst))
        return fail(a, span == nullptr ? "evring_assembler_next: no span given (NULL)"
                                       : size_message("evring_assembler_next", "evring_span", span->struct_size));
    if (item != nullptr && !big_enough(item, kItemFirst))
        return fail(a, size_message("evring_assembler_next", "evring_item", item->struct_size));
    return guard(
        [&]() -> int {
            for (evring::SourceItem seen;;) {
                const evring::SourceStep step =
                        a->reader.next_span([a](evring::SourceItem& i) { return pull(a, i); }, a->current, seen);
                if (step == evring::SourceStep::Event) {
                    evring_span out{};
                    describe(a, out);
                    deliver(span, out);
                    return EVRING_STEP_EVENT;
                }
                if (step != evring::SourceStep::Gap && step != evring::SourceStep::Notice)
                    return static_cast<int>(step);  // NotReady, End, Failed (a->error says why)
                if (item == nullptr) continue;  // the caller did not ask to see them
                deliver(item, a->item);
                a->item.struct_size = sizeof a->item;
                return static_cast<int>(step);
            }
        },
        [&](int, const char* message) { return fail(a, message); });
}

const char* evring_assembler_error(const evring_assembler* assembler) {
    return assembler == nullptr ? "no assembler (NULL handle)" : assembler->error.c_str();
}

int evring_assembler_get_counts(const evring_assembler* assembler, evring_assembler_counts* counts) {
    if (assembler == nullptr || counts == nullptr) return EVRING_E_INVALID;
    if (!big_enough(counts, kCountsFirst)) {
        fail(assembler, size_message("evring_assembler_get_counts", "evring_assembler_counts", counts->struct_size));
        return EVRING_E_INVALID;
    }
    const evring::AssemblerCounts& c = assembler->reader.counts();
    evring_assembler_counts got{};
    got.handed_out = c.handed_out;
    got.abandoned = c.abandoned;
    got.broken = c.broken;
    got.unfinished = c.unfinished;
    got.unassembled = c.unassembled;
    deliver(counts, got);
    return EVRING_OK;
}

}  // extern "C"
