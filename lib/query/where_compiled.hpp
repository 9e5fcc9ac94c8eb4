// Private to lib/: a filter expression compiled against a schema (where.cpp
// makes it from the parsed tree, where_ast.hpp) and the predicate that runs
// it (where_eval.cpp).
//
// Thread safety: plain values; immutable once compiled.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "source/event_predicate.hpp"
#include "evring/schema/schema.hpp"
#include "query/field_access.hpp"
#include "query/where_ast.hpp"
#include "source/span_labels.hpp"

namespace evring::detail {

// SpanLabel: the label of the span instance flow tag `ext` points into
// (span_labels.hpp), for <, <=, > and >=.
enum class Operand : std::uint8_t { Type, Seqno, Time, PayloadSize, Ext, Field, SpanLabel };

// A value to compare with, in the form the field's type reads as.
struct Value {
    using Kind = FieldKind;
    Kind kind = Kind::Unsigned;
    bool negative = false;  // Unsigned: a literal below zero (below every value)
    U256 u{};
    Int128 s = 0;
    double f = 0;
    std::vector<std::uint8_t> b;
};

// Where a field is in one event type's payload, and the test's literals in
// that field's terms.
struct Access : FieldAccess {
    std::vector<Value> literals;
};

struct Compiled {
    WhereNode::Kind kind = WhereNode::Kind::Test;
    std::unique_ptr<Compiled> a, b;
    bool payload = false;  // the subtree reads payloads
    // Test:
    Operand operand = Operand::Type;
    std::uint8_t ext = 0;
    WhereOp op = WhereOp::Truth;
    std::vector<Value> literals;             // descriptor operands
    std::vector<std::int32_t> slot;          // Field: event type -> index into access, -1: no such field
    std::vector<Access> access;
    // A test on a labelled span's tag: the greatest label it keeps (== and in:
    // the greatest literal; <=: N; <: N - 1), for EventPredicate::span_top.
    std::optional<std::uint64_t> top;
};

inline int compare(const U256& x, const U256& y) {
    for (int i = 3; i >= 0; --i)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return 0;
}

inline bool holds(WhereOp op, int c) {
    switch (op) {
    case WhereOp::Eq: case WhereOp::In: return c == 0;
    case WhereOp::Ne: return c != 0;
    case WhereOp::Lt: return c < 0;
    case WhereOp::Le: return c <= 0;
    case WhereOp::Gt: return c > 0;
    case WhereOp::Ge: return c >= 0;
    default: return false;
    }
}

// Compares `v` (read from an event) with each literal as the op says.
inline bool test_unsigned(WhereOp op, const U256& v, const std::vector<Value>& lits) {
    if (op == WhereOp::Truth) return v != U256{};
    for (const Value& l : lits) {
        const int c = l.negative ? 1 : compare(v, l.u);
        if (op == WhereOp::In ? c == 0 : holds(op, c)) return true;
        if (op != WhereOp::In) return false;
    }
    return false;
}


// The predicate that evaluates `root` (where_eval.cpp); SpanLabel tests read
// `labels` (null only when there are none).
std::unique_ptr<EventPredicate> make_where_predicate(std::unique_ptr<Compiled> root,
                                                     const SpanLabels* labels = nullptr);

}  // namespace evring::detail
