// evring/query/where.hpp — filter expressions: `--where 'type == TXN_HEADER_START
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
// Contract:
// - Compiled once against the schema: every name is resolved to event
//   numbers, flow tag indices, enumeration values and, for each event type,
//   the field's offset and type. Unknown names are errors that give the
//   position (1-based character) and the valid names nearest to the one
//   written; so are comparisons that no event's field type allows (a byte
//   array with `<`, a number with a string).
// - Evaluation: descriptor tests (type, seqno, time, payload_size, flow tags)
//   first; payload fields only of events whose descriptor left the result
//   open. A field the event does not have, a payload that is not Ok, an array
//   index past the array's count, or a payload too short for the field makes
//   that comparison false (so `!(x == 1)` holds for events without x).
//   Payload reads are bounds-checked and allocation-free.
// - Hostile input is bounded: at most kMaxWhereBytes of text, nesting at most
//   kMaxWhereDepth, kMaxWhereNodes tests and operators; beyond that an error.
//
// Thread safety: a compiled expression is immutable; share it freely.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "evring/error.hpp"
#include "evring/source/event_predicate.hpp"
#include "evring/schema/schema.hpp"

namespace evring {

inline constexpr std::size_t kMaxWhereBytes = 64 * 1024;
inline constexpr int kMaxWhereDepth = 64;
inline constexpr std::size_t kMaxWhereNodes = 4096;

// Compiles `text`; `option` names the option in errors ("--where").
Result<std::unique_ptr<EventPredicate>> compile_where(std::string_view text, const Schema& schema,
                                                      std::string_view option = "--where");

}  // namespace evring
