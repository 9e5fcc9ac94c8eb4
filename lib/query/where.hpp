// lib/query/where.hpp — filter expressions: `--where 'type == TXN_HEADER_START
// && txn_header.gas_limit > 1000000'`.
//
//     auto where = evring::compile_where(text, schema);   // once, before reading
//     if (!where) fail(where.error().message());           // "bad --where '...': at 9: ..."
//     options.where = where->get();                        // follow.hpp
//
// The language (docs/cli.md, "Filter expressions"):
//   expr    := or
//   or      := and (('||' | 'or') and)*
//   and     := unary (('&&' | 'and') unary)*
//   unary   := ('!' | 'not') unary | '(' expr ')' | test
//   test    := operand [ CMP literal | 'in' '{' literal (',' literal)* '}' | '^=' literal ]
//   CMP     := == != < <= > >=          ('^=': starts with, for byte fields)
//   operand := type | seqno | time | payload_size | FLOWTAG | ext[I] | PATH
//   PATH    := NAME ('.' NAME | '[' INDEX ']')*     a payload field, through
//              nested structs, fixed arrays and trailing arrays
//   literal := 123 | -5 | 0xHEX (a number up to 2^256-1, or bytes) | "text"
//              | true | false | NAME (an event type after `type`, a value of
//              the field's enumeration)
// A bare operand tests for non-zero.
//
// Span names: a flow tag that a span declares as its `opener` (Monad's
// `block`, which holds the seqno of the block's BLOCK_START) compares by the
// span's label when the span has one (docs/schema.md). `block == 15000009`
// and `block in {15000009, 15000010}` keep the events of those blocks: each
// label is looked up in the source once, when compiling (a label no event
// carries is an error naming it). `block >= 15000009 && block <= 15000010`,
// `block > N`, `block < N` compare the label the span label table (`table`,
// span_labels.hpp, which the follow loop fills as it reads) holds for the
// event's opening: an event whose opening was not read has no label, and no
// ordered comparison holds for it. The predicate's span_top()
// (event_predicate.hpp) is the greatest label it keeps, so the follow loop
// stops once that has passed. `ext[I]` still compares the raw tag. A bare
// `block` tests the raw tag for non-zero.

// Contract:
// - Compiled once against the schema: every name is resolved to event
//   numbers, flow tag indices, enumeration values and, for each event type,
//   the field's offset and type. Unknown names are errors that give the
//   position (1-based character) and the valid names nearest to the one
//   written; so are comparisons that no event's field type allows (a byte
//   array with `<`, a number with a string).
// - Evaluation: descriptor tests (type, seqno, time, payload_size, flow tags)
//   first; payload fields only of events whose descriptor left the result
//   open. The loading form of matches() (event_predicate.hpp) fetches a
//   payload only then, so the follow loop never copies the payload of an
//   event the descriptor rules out. A field the event does not have, a payload that is not Ok, an array
//   index past the array's count, or a payload too short for the field makes
//   that comparison false (so `!(x == 1)` holds for events without x).
//   Payload reads are bounds-checked and allocation-free.
// - Hostile input is bounded: at most kMaxWhereBytes of text, nesting at most
//   kMaxWhereDepth, kMaxWhereNodes tests and operators; beyond that an error.
//
// Thread safety: a compiled expression is immutable; share it freely, except
// one with ordered span label tests: it reads its table, which the follow
// loop writes, so it runs on that loop's thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "evring/error.hpp"
#include "source/event_predicate.hpp"
#include "evring/schema/schema.hpp"
#include "source/span_labels.hpp"

namespace evring {

inline constexpr std::size_t kMaxWhereBytes = 64 * 1024;
inline constexpr int kMaxWhereDepth = 64;
inline constexpr std::size_t kMaxWhereNodes = 4096;

// A span's label to the sequence number of the event that opens that
// instance (span_seek.hpp's resolve_span over the source being read); an
// error, naming the label, when no event carries it.
using SpanLabelResolver = std::function<Result<std::uint64_t>(const SchemaSpan& span, std::uint64_t label)>;

// Compiles `text`; `option` names the option in errors ("--where"). `labels`
// looks span labels up for ==, != and in, `table` (read while evaluating;
// it must outlive the predicate) holds them for <, <=, > and >= (see "Span
// names" above); without them such an expression is refused.
Result<std::unique_ptr<EventPredicate>> compile_where(std::string_view text, const Schema& schema,
                                                      std::string_view option = "--where",
                                                      const SpanLabelResolver& labels = {},
                                                      const SpanLabels* table = nullptr);

}  // namespace evring
