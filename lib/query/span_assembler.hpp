// lib/query/span_assembler.hpp — the engine behind SpanReader
// (evring/query/span_reader.hpp, whose contract it keeps): whole span
// instances built from pushed events, gaps and the end. The CLI's follow-loop
// sinks (watch, relay and mirror --assemble) push into it; SpanReader adds
// the pull loop every binding shares.
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
#include "evring/query/span_reader.hpp"
#include "evring/schema/schema.hpp"
#include "evring/source/event_source.hpp"
#include "query/field_access.hpp"

namespace evring {

class SpanAssembler {
public:
    static constexpr std::size_t kMaxOpen = 64;   // span_reader.hpp says 64
    static constexpr std::size_t kMaxHeld = 256;  // and 256

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
