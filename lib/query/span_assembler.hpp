// lib/query/span_assembler.hpp — whole span instances (Monad's blocks) from
// a source's events: each instance with its events, its nested spans'
// instances (a block's transactions) and its stages, driven by the schema's
// [span.NAME] (docs/schema.md), so any content type with labelled spans gets
// it, not only Monad's.
//
//     auto assembler = evring::SpanAssembler::make(schema, "block", "finalized");
//     ... for each event the follow loop hands out: assembler->event(e);
//     ... for each gap: assembler->gap(g);  at the end: assembler->end();
//     while (auto block = assembler->take()) use(*block);
//
// Contract:
// - An instance opens with one of the span's begin events (its label and id
//   read from its payload) and holds every event whose opener flow tag is the
//   begin event's seqno (of the same ring set member). Its end event ends it:
//   the stage "ended" (for Monad, a proposed block executed). Events of an
//   instance whose begin event was not read (reading started inside it) are
//   counted, not assembled: no instance is ever handed out short.
// - Nested spans (every other span of the schema whose key has a flow tag the
//   opener tag is not) group the instance's events by that tag's value (a
//   block's transactions by `txn`).
// - Stages: the schema's stage events (Monad: BLOCK_FINALIZED, BLOCK_VERIFIED)
//   mark the instances of the label in their payload, and of the same id when
//   both say one; an instance of that label with another id is a rival the
//   chain did not take: handed out as Abandoned. With `stage` empty an
//   instance is handed out when it ends; else once it has reached that stage
//   (or one after it in the schema's order), and at most kMaxHeld ended
//   instances wait for it (the oldest goes out as Unfinished past that).
// - A gap (lost seqnos) while instances are open breaks every open instance:
//   each is handed out as Broken, naming the lost seqnos
//   (`reassembly_error`), never as a shorter instance.
// - end(): instances still open, or still waiting for their stage, are
//   counted as unfinished and dropped (a snapshot ends before its newest
//   blocks are finalized).
// - Memory: an instance holds copies of its events' payloads until it is
//   handed out; at most kMaxOpen are open at once (the oldest is dropped and
//   counted past that), so a stream of begin events without ends is bounded.
//
// Thread safety: one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "evring/error.hpp"
#include "evring/schema/schema.hpp"
#include "evring/source/event_source.hpp"
#include "query/field_access.hpp"

namespace evring {

struct AssembledEvent {
    EventDescriptor descriptor{};
    std::uint32_t member = 0;
    PayloadState payload_state = PayloadState::NotRead;
    std::vector<std::byte> payload;  // Ok only
};

struct AssembledStage {
    std::string name;  // "ended", then the schema's stage names
    std::uint64_t seqno = 0;  // of the event that marked it
    std::uint64_t nanos = 0;
};

struct AssembledNested {
    const SchemaSpan* span = nullptr;
    std::uint64_t key = 0;              // the flow tag's value
    std::vector<std::size_t> events;    // indices into AssembledSpan::events
};

struct AssembledSpan {
    enum class State : std::uint8_t { Complete, Abandoned, Broken };
    const SchemaSpan* span = nullptr;
    State state = State::Complete;
    std::uint64_t label = 0;
    std::vector<std::byte> id;  // the begin event's id field; empty when the span names none
    std::uint32_t member = 0;
    std::vector<AssembledEvent> events;  // in the order read: the begin event first
    std::vector<AssembledNested> nested;  // in the order their first events came
    std::vector<std::size_t> outside;     // events in no nested instance (begin and end included)
    std::vector<AssembledStage> stages;   // in the order reached
    std::uint64_t lost_first = 0, lost_count = 0;  // Broken: the seqnos lost inside it
};

// "complete", "abandoned", "broken": the words the CLI and Python print.
const char* to_string(AssembledSpan::State state) noexcept;

struct AssemblerCounts {
    std::uint64_t handed_out = 0, abandoned = 0, broken = 0;
    std::uint64_t unfinished = 0;   // open or waiting for the stage at end(), or pushed out
    std::uint64_t unassembled = 0;  // events of instances whose begin event was not read
};

class SpanAssembler {
public:
    static constexpr std::size_t kMaxOpen = 64;
    static constexpr std::size_t kMaxHeld = 256;

    // `span`: a span of `schema` with a label and an opener tag; `stage`:
    // "" (hand out when ended), "ended", or one of its stages.
    static Result<SpanAssembler> make(const Schema& schema, std::string_view span, std::string_view stage);

    // Events need their payloads read (the labels, ids and stage labels are in them).
    void event(const SourceEvent& e);
    void gap(const SourceGap& g);
    void end();
    std::optional<AssembledSpan> take();
    const AssemblerCounts& counts() const noexcept { return counts_; }
    const Schema& schema() const noexcept { return *schema_; }  // the one make() was given

private:
    struct Nested {
        const SchemaSpan* span = nullptr;
        std::uint8_t tag = 0;
    };
    struct Stage {
        std::uint16_t event = 0;
        std::string name;
        detail::FieldAccess label;
        std::optional<detail::FieldAccess> id;
    };
    struct Open {
        std::uint64_t begin_seqno = 0;
        AssembledSpan span;
        std::map<std::uint64_t, std::size_t> nested_at[4];  // per tag: key -> index into span.nested
        bool ended = false;
        std::size_t reached = 0;  // stages reached, by their rank (1: ended)
    };
    SpanAssembler() = default;
    void begin(const SourceEvent& e);
    void place(const SourceEvent& e);  // into its open instance
    void add(Open& open, const SourceEvent& e);
    void stage_event(const SourceEvent& e, const Stage& stage, std::size_t rank);
    void hand_out(Open&& open, AssembledSpan::State state);
    bool is(const std::vector<std::uint16_t>& types, std::uint16_t type) const;

    const Schema* schema_ = nullptr;
    const SchemaSpan* span_ = nullptr;
    std::uint8_t opener_ = 0;
    detail::FieldAccess label_{};
    std::vector<std::int32_t> label_slot_;  // begin event type -> index into labels_
    std::vector<detail::FieldAccess> labels_, ids_;
    std::vector<bool> has_id_;
    std::vector<Nested> nested_;
    std::vector<Stage> stages_;   // rank i + 2 (1 is "ended")
    std::size_t wanted_ = 1;      // the rank an instance is handed out at
    std::deque<Open> open_;       // open and held instances, oldest first
    std::deque<AssembledSpan> ready_;
    AssemblerCounts counts_;
};

}  // namespace evring
