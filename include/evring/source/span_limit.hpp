// evring/source/span_limit.hpp — where reading ends by a span's label.
//
// `--until block:15000010` ends after the end event (Monad: BLOCK_END or
// BLOCK_REJECT) of an instance labelled 15000010; `--until
// block.finalized:15000010` after the stage's event (BLOCK_FINALIZED) that
// marks 15000010; a --where range whose top is 15000010 (`block <= 15000010`,
// `block == 15000010`) before the first opening event labelled above it read
// once a stage event has marked a label at or above 15000010 (no instance at
// or below it opens after that: docs/cli.md, "Block ranges"). The follow loop
// (follow.hpp) applies it with the span label table the schema describes;
// seek_span_stop (span_seek.hpp) makes one from `--until SPAN:N`.
//
// Thread safety: a plain value.
#pragma once

#include <cstdint>

namespace evring {

struct SpanLimit {
    enum class Kind : std::uint8_t {
        None,   // no limit
        End,    // after the end event of an instance labelled `label`
        Stage,  // after the `stage_event` marking `label`
        Top,    // nothing past the instances labelled up to `label` is wanted
    };
    Kind kind = Kind::None;
    std::uint8_t tag = 0;        // the span's opener flow tag
    std::uint64_t label = 0;
    std::uint16_t stage_event = 0;  // Stage only
};

}  // namespace evring
