// lib/query/span_labels_schema.hpp — the span label table (span_labels.hpp)
// and `--until SPAN:N` limits (span_limit.hpp) from a schema's [span.NAME]
// (docs/schema.md: `label`, `opener`, `end`, `stages`).
//
// Thread safety: pure functions.
#pragma once

#include "evring/error.hpp"
#include "evring/schema/schema.hpp"
#include "evring/source/position.hpp"
#include "evring/source/span_limit.hpp"
#include "source/span_labels.hpp"

namespace evring {

// Every span with a label and an opener flow tag; empty when none has.
SpanLabels span_labels_for(const Schema& schema);

// A stop position of kind Span (position.hpp) as a limit: SPAN:N ends after
// the end event of an instance labelled N, SPAN.STAGE:N after the stage's
// event for N. Errors name the position: a span the schema lacks, one
// without a label or an opener flow tag, an unknown stage.
Result<SpanLimit> span_stop_for(const Position& stop, const Schema& schema);

}  // namespace evring
