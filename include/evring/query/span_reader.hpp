// evring/query/span_reader.hpp — whole span instances (Monad's blocks, with
// their transactions and commit stages) read from any event source, instead
// of one event at a time. The schema's [span.NAME] drives it
// (docs/schema.md), so every content type with labelled spans gets it.
//
//     auto source = evring::open_source("emn-30b-15m.snapshot.zst", {});
//     auto found = evring::resolve_schema(**source);          // schema_resolve.hpp
//     auto blocks = evring::SpanReader::make(*found->schema, "block", "finalized");
//     (*source)->seek(evring::Position::oldest());
//     evring::AssembledSpan block;
//     evring::SourceItem item;
//     for (;;) {
//         switch (blocks->next_span(**source, block, item)) {
//         case evring::SourceStep::Event:    use(block); break;     // a whole block
//         case evring::SourceStep::Gap:      note(item.gap); break;  // its blocks come out Broken
//         case evring::SourceStep::Notice:   log(item.notice); break;
//         case evring::SourceStep::NotReady: (*source)->wait(100ms); break;
//         case evring::SourceStep::End:      return;
//         case evring::SourceStep::Failed:   fail((*source)->error().message());
//         }
//     }
//
// Contract:
// - An instance opens with one of the span's begin events (its label and id
//   read from its payload) and holds every event whose opener flow tag is the
//   begin event's seqno (of the same ring set member). Its end event ends it:
//   the stage "ended" (for Monad, a proposed block executed). Events of an
//   instance whose begin event was not read (reading started inside it) are
//   counted (`unassembled`), never handed out as a short instance.
// - Nested spans (every other span of the schema whose key has a flow tag the
//   opener tag is not) group an instance's events by that tag's value: a
//   block's transactions by `txn`.
// - Stages: the schema's stage events (Monad: BLOCK_FINALIZED,
//   BLOCK_VERIFIED) mark the instances of the label in their payload, and of
//   the same id when both carry one; an instance of that label with another
//   id is a rival the chain did not take, handed out as Abandoned. With no
//   stage an instance is handed out when it ends; else once it has reached
//   that stage (or one after it in the schema's order). At most 256 ended
//   instances wait for their stage; past that the oldest is dropped and
//   counted unfinished.
// - A gap (lost seqnos) while instances are open breaks each of them: it is
//   handed out as Broken with the lost seqnos (lost_first, lost_count), never
//   as a shorter instance.
// - When the source ends (or finish() is called), instances still open or
//   still waiting for their stage are counted unfinished and dropped: a
//   snapshot ends before its newest blocks are finalized.
// - Memory: an instance holds copies of its events' payloads until it is
//   handed out; at most 64 are open at once (past that the oldest is dropped
//   and counted unfinished), so begin events without ends stay bounded.
// - next_span reads the source with PayloadRead::Copy: labels, ids and the
//   stages' labels are in payloads. A source filtered by `--where` would hand
//   out instances with events left out; do not assemble from one.
// - The Schema given to make() must outlive the reader (instances point at
//   its spans).
//
// Thread safety: one thread, as the source.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"
#include "evring/format.hpp"
#include "evring/schema/schema.hpp"
#include "evring/source/event_source.hpp"

namespace evring {

class SpanAssembler;  // lib/query/span_assembler.hpp, the engine behind SpanReader

struct AssembledEvent {
    EventDescriptor descriptor{};
    std::uint32_t member = 0;  // the ring set member (0 for other sources)
    PayloadState payload_state = PayloadState::NotRead;
    std::vector<std::byte> payload;  // a copy; Ok only
};

struct AssembledStage {
    std::string name;          // "ended", then the schema's stage names ("finalized", ...)
    std::uint64_t seqno = 0;   // of the event that marked it
    std::uint64_t nanos = 0;   // that event's record_epoch_nanos
};

struct AssembledNested {
    const SchemaSpan* span = nullptr;   // "txn"
    std::uint64_t key = 0;              // the flow tag's value (the transaction's index)
    std::vector<std::size_t> events;    // indices into AssembledSpan::events
};

struct AssembledSpan {
    enum class State : std::uint8_t { Complete, Abandoned, Broken };
    const SchemaSpan* span = nullptr;
    State state = State::Complete;
    std::uint64_t label = 0;              // the block number
    std::vector<std::byte> id;            // the begin event's id field; empty when the span names none
    std::uint32_t member = 0;
    std::vector<AssembledEvent> events;   // in the order read: the begin event first
    std::vector<AssembledNested> nested;  // in the order their first events came
    std::vector<std::size_t> outside;     // events in no nested instance (begin and end included)
    std::vector<AssembledStage> stages;   // in the order reached
    std::uint64_t lost_first = 0, lost_count = 0;  // Broken: the seqnos lost inside it
};

// "complete", "abandoned", "broken": the words the CLI, C and Python print.
const char* to_string(AssembledSpan::State state) noexcept;

struct AssemblerCounts {
    std::uint64_t handed_out = 0, abandoned = 0, broken = 0;
    std::uint64_t unfinished = 0;   // open or waiting for the stage at the end, or pushed out
    std::uint64_t unassembled = 0;  // events of instances whose begin event was not read
};

class SpanReader {
public:
    // `span`: a span of `schema` with a label and an opener tag ("block");
    // `stage`: "" (hand out when ended), "ended", or one of its stages. The
    // error names the spans (or stages) the schema has.
    static Result<SpanReader> make(const Schema& schema, std::string_view span, std::string_view stage = {});

    SpanReader(SpanReader&&) noexcept;
    SpanReader& operator=(SpanReader&&) noexcept;
    ~SpanReader();

    // The next whole instance, reading `source` as needed:
    // - Event: `out` holds it;
    // - Gap: `item.gap` was lost; the instances it broke come next;
    // - Notice: `item.notice`, as the source said it;
    // - NotReady: nothing whole yet; wait on the source and call again;
    // - End: the source ended and every instance left was handed out. Repeats;
    // - Failed: the source's error().
    SourceStep next_span(EventSource& source, AssembledSpan& out, SourceItem& item) {
        return next_span([&source](SourceItem& i) { return source.next(i, PayloadRead::Copy); }, out, item);
    }

    // The same over the caller's own step: `pull(item)` answers as
    // EventSource::next(item, PayloadRead::Copy) would. For readers that pull
    // through bookkeeping of their own (the C ABI and Python pull through
    // their reader sessions).
    template <class Pull>
        requires std::invocable<Pull&, SourceItem&>
    SourceStep next_span(Pull&& pull, AssembledSpan& out, SourceItem& item) {
        for (;;) {
            if (take(out)) return SourceStep::Event;
            if (ended_) return SourceStep::End;
            const SourceStep step = pull(item);
            switch (step) {
            case SourceStep::Event: event(item.event); break;
            case SourceStep::Gap: gap(item.gap); return step;
            case SourceStep::End: finish(); break;  // what it left is handed out first
            default: return step;  // Notice, NotReady, Failed
            }
        }
    }

    // Pushing instead of pulling (a follow loop's sink, follow.hpp): every
    // event with its payload, every gap, then finish() at the end; take()
    // hands out what is whole, false when nothing is.
    void event(const SourceEvent& e);
    void gap(const SourceGap& g);
    void finish();  // as the source's end; later calls to next_span return End
    bool take(AssembledSpan& out);

    const AssemblerCounts& counts() const noexcept;
    const Schema& schema() const noexcept;  // the one make() was given

private:
    explicit SpanReader(std::unique_ptr<SpanAssembler> assembler);
    std::unique_ptr<SpanAssembler> assembler_;
    bool ended_ = false;
};

}  // namespace evring
