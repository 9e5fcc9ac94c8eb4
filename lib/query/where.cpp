// Filter expressions (where.hpp): compiling the parsed tree against a schema
// (where_eval.cpp runs it). Descriptor tests are moved before payload tests
// in every && and ||, so a payload is looked at only when the descriptor left
// the answer open.
#include "query/where.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>

#include "query/field_path.hpp"
#include "query/where_compiled.hpp"

namespace evring {
namespace detail {
namespace {

std::string shown(const WhereLiteral& l) { return l.negative ? "-" + l.name : l.name; }

class Compiler {
public:
    Compiler(const Schema& schema, std::string_view text, std::string_view option, const SpanLabelResolver& labels,
             const SpanLabels* table)
        : schema_(schema), text_(text), option_(option), labels_(labels), table_(table) {}

    Result<std::unique_ptr<Compiled>> compile(const WhereNode& n) {
        auto c = std::make_unique<Compiled>();
        c->kind = n.kind;
        if (n.kind != WhereNode::Kind::Test) {
            auto a = compile(*n.a);
            if (!a) return std::move(a).error();
            c->a = std::move(*a);
            if (n.b) {
                auto b = compile(*n.b);
                if (!b) return std::move(b).error();
                c->b = std::move(*b);
                // Descriptor tests first: the payload is read only when they leave it open.
                if (c->a->payload && !c->b->payload) std::swap(c->a, c->b);
            }
            c->payload = c->a->payload || (c->b && c->b->payload);
            return c;
        }
        if (auto s = test(n, *c); !s) return std::move(s).error();
        return c;
    }

private:
    Error fail(std::size_t at, std::string_view reason) const { return where_error(option_, text_, at, reason); }

    Status test(const WhereNode& n, Compiled& c) {
        c.op = n.op;
        const std::string& head = n.path[0].name;
        if (n.path.size() == 1 && (head == "type" || head == "seqno" || head == "time" || head == "payload_size")) {
            c.operand = head == "type" ? Operand::Type : head == "seqno" ? Operand::Seqno
                        : head == "time" ? Operand::Time : Operand::PayloadSize;
            return descriptor_literals(n, c);
        }
        if (n.path.size() == 1 && schema_.flow_tag(head)) {
            c.operand = Operand::Ext;
            c.ext = static_cast<std::uint8_t>(*schema_.flow_tag(head));
            if (n.op != WhereOp::Truth)
                for (const SchemaSpan& span : schema_.spans())
                    if (span.opener == c.ext && !span.label.empty()) return span_labels(n, c, span);
            return descriptor_literals(n, c);
        }
        if (n.path.size() == 2 && head == "ext" && n.path[1].index) {
            if (n.path[1].i > 3) return fail(n.at, "ext[I] takes I from 0 to 3");
            c.operand = Operand::Ext;
            c.ext = static_cast<std::uint8_t>(n.path[1].i);
            return descriptor_literals(n, c);
        }
        return field(n, c);
    }

    // `block == 15000009`: the flow tag holds the opening event's seqno, and
    // the user means the span's label. ==, != and in look each label up once,
    // now; <, <=, > and >= compare the label the span label table read as
    // reading went (span_labels.hpp), as no seqno orders labels.
    Status span_labels(const WhereNode& n, Compiled& c, const SchemaSpan& span) {
        const std::string raw = fmt::format("ext[{}]", c.ext);
        const bool ordered = n.op == WhereOp::Lt || n.op == WhereOp::Le || n.op == WhereOp::Gt || n.op == WhereOp::Ge;
        if (!ordered && n.op != WhereOp::Eq && n.op != WhereOp::Ne && n.op != WhereOp::In)
            return fail(n.at, fmt::format("'{}' compares {} labels ({}) with ==, !=, in, <, <=, > or >=; {} is the "
                                          "raw tag", n.operand, span.name, span.label, raw));
        if (ordered ? table_ == nullptr : !labels_)
            return fail(n.at, fmt::format("'{}' compares {} labels ({}), which this reader cannot look up; {} is "
                                          "the raw tag", n.operand, span.name, span.label, raw));
        for (const WhereLiteral& l : n.literals) {
            if (l.kind != WhereLiteral::Kind::Number || !l.fits || l.fraction || l.negative ||
                l.number[1] != 0 || l.number[2] != 0 || l.number[3] != 0)
                return fail(l.at, fmt::format("'{}' compares {} labels, whole numbers; '{}' is not one", n.operand,
                                              span.name, shown(l)));
            const std::uint64_t label = l.number[0];
            if (n.op == WhereOp::Eq || n.op == WhereOp::In) c.top = std::max(c.top.value_or(0), label);
            else if (n.op == WhereOp::Le) c.top = label;
            else if (n.op == WhereOp::Lt) c.top = label == 0 ? 0 : label - 1;  // `< 0` keeps nothing
            Value v;
            if (ordered) {
                c.operand = Operand::SpanLabel;
                v.u[0] = label;
            } else {
                auto seqno = labels_(span, label);
                if (!seqno) return fail(l.at, seqno.error().message());
                v.u[0] = *seqno;
            }
            c.literals.push_back(std::move(v));
        }
        return {};
    }

    Status descriptor_literals(const WhereNode& n, Compiled& c) {
        if (n.op == WhereOp::Prefix) return fail(n.at, fmt::format("'^=' is for byte fields; '{}' is a number", n.operand));
        for (const WhereLiteral& l : n.literals) {
            Value v;
            if (c.operand == Operand::Type && l.kind == WhereLiteral::Kind::Name) {
                const SchemaEvent* e = schema_.event(l.name);
                if (e == nullptr) {
                    std::vector<std::string> names;
                    for (const auto& ev : schema_.events()) names.push_back(ev.name);
                    return fail(l.at, fmt::format("'{}' is not an event type of schema {}{}", l.name,
                                                  schema_.content_name(), nearest(l.name, names)));
                }
                v.u[0] = e->number;
            } else if (l.kind != WhereLiteral::Kind::Number || !l.fits || l.fraction) {
                return fail(l.at, fmt::format("'{}' compares with a whole number; '{}' is not one", n.operand, shown(l)));
            } else {
                v.u = l.number;
                v.negative = l.negative && l.number != U256{};
            }
            c.literals.push_back(std::move(v));
        }
        return {};
    }

    // The field in every event type that has it; an error when none does, or
    // when no event's field can be compared with the literals.
    Status field(const WhereNode& n, Compiled& c) {
        c.operand = Operand::Field;
        c.payload = true;
        std::optional<Error> why_not;
        bool found = false;
        for (const SchemaEvent& e : schema_.events()) {
            auto place = locate_field(schema_, e, n.path, struct_error_);
            if (!place) continue;
            std::optional<Access> access(Access{std::move(*place), {}});
            found = true;
            auto ok = literals_for(n, *access);
            if (!ok) {
                if (!why_not) why_not = std::move(ok).error();
                continue;
            }
            if (c.slot.size() <= e.number) c.slot.resize(e.number + 1u, -1);
            c.slot[e.number] = static_cast<std::int32_t>(c.access.size());
            c.access.push_back(std::move(*access));
        }
        if (!found) {
            if (!struct_error_.empty()) return fail(n.at, struct_error_);
            return fail(n.at, fmt::format("no event of schema {} has a field '{}'{}", schema_.content_name(),
                                          n.operand, nearest(n.operand, all_paths())));
        }
        if (c.access.empty()) return std::move(*why_not);
        return {};
    }

    Status literals_for(const WhereNode& n, Access& a) {
        if (n.op == WhereOp::Prefix && a.kind != Value::Kind::Bytes)
            return fail(n.at, fmt::format("'^=' is for byte fields; '{}' is a number", n.operand));
        if (a.kind == Value::Kind::Bytes && n.op != WhereOp::Eq && n.op != WhereOp::Ne && n.op != WhereOp::In &&
            n.op != WhereOp::Prefix && n.op != WhereOp::Truth)
            return fail(n.at, fmt::format("'{}' is a byte array: compare it with ==, !=, in or ^=", n.operand));
        for (const WhereLiteral& l : n.literals) {
            Value v;
            v.kind = a.kind;
            if (a.kind == Value::Kind::Bytes) {
                if (l.kind == WhereLiteral::Kind::Name || (l.kind == WhereLiteral::Kind::Number && !l.is_hex) ||
                    (l.is_hex && l.bytes.empty()) || l.negative)
                    return fail(l.at, fmt::format("'{}' is a byte array: give 0x and whole bytes, or \"text\"; not '{}'",
                                                  n.operand, shown(l)));
                v.b = l.bytes;
            } else if (l.kind == WhereLiteral::Kind::Name) {
                std::uint64_t bits = 0;
                if (l.name == "true" || l.name == "false") {
                    bits = l.name == "true";
                } else if (a.enumeration != nullptr && a.enumeration->value(l.name) != nullptr) {
                    bits = a.enumeration->value(l.name)->bits;
                } else {
                    std::vector<std::string> names;
                    if (a.enumeration) for (const auto& ev : a.enumeration->values) names.push_back(ev.name);
                    return fail(l.at, fmt::format("'{}' is not a value of '{}'{}", l.name, n.operand,
                                                  a.enumeration ? nearest(l.name, names) : std::string("; it is a number")));
                }
                v.u[0] = bits;
                v.s = static_cast<std::int64_t>(bits);
                v.f = static_cast<double>(bits);
                if (a.kind == Value::Kind::Signed && a.enumeration == nullptr) v.s = static_cast<Int128>(bits);
            } else if (l.kind == WhereLiteral::Kind::String) {
                return fail(l.at, fmt::format("'{}' is a number; it cannot equal text", n.operand));
            } else if (l.fraction && a.kind != Value::Kind::Float) {
                return fail(l.at, fmt::format("'{}' is a whole number; '{}' has a fraction", n.operand, shown(l)));
            } else if (l.fraction) {
                v.f = l.real;
            } else {
                if (!l.fits) return fail(l.at, fmt::format("'{}' is past 2^256", shown(l)));
                v.u = l.number;
                v.negative = l.negative && l.number != U256{};
                const bool small = l.number[1] == 0 && l.number[2] == 0 && l.number[3] == 0;
                double f = 0;
                for (int i = 3; i >= 0; --i) f = f * 18446744073709551616.0 + static_cast<double>(l.number[i]);
                v.f = l.negative ? -f : f;
                if (a.kind == Value::Kind::Signed) {
                    if (!small) v.s = l.negative ? static_cast<Int128>(-1) << 100 : static_cast<Int128>(1) << 100;
                    else v.s = l.negative ? -static_cast<Int128>(l.number[0]) : static_cast<Int128>(l.number[0]);
                }
            }
            a.literals.push_back(std::move(v));
        }
        return {};
    }

    std::vector<std::string> all_paths() const {
        std::set<std::string> out = {"type", "seqno", "time", "payload_size"};
        for (const auto& t : schema_.flow_tags())
            if (!t.empty()) out.insert(t);
        for (const auto& e : schema_.events())
            if (const SchemaStruct* s = schema_.payload_of(e)) add_paths(*s, "", out, 0);
        return {out.begin(), out.end()};
    }
    void add_paths(const SchemaStruct& s, const std::string& prefix, std::set<std::string>& out, int depth) const {
        if (depth > 8) return;
        for (const auto& f : s.fields) {
            const std::string p = prefix + f.name;
            out.insert(p);
            const SchemaType& t = schema_.type(f.type);
            if (t.kind == TypeKind::Struct) add_paths(schema_.structs()[t.index], p + ".", out, depth + 1);
        }
        for (const auto& t : s.trailing) out.insert(prefix + t.name);
    }

    // "; nearest: a, b, c" by edit distance (bounded work: names and text are short or cut).
    static std::string nearest(std::string_view wanted, const std::vector<std::string>& names) {
        wanted = wanted.substr(0, 64);
        std::vector<std::pair<std::size_t, std::string>> scored;
        for (const auto& name : names) {
            const std::string_view n = std::string_view(name).substr(0, 64);
            std::vector<std::size_t> row(n.size() + 1);
            for (std::size_t j = 0; j <= n.size(); ++j) row[j] = j;
            for (std::size_t i = 1; i <= wanted.size(); ++i) {
                std::size_t diag = row[0];
                row[0] = i;
                for (std::size_t j = 1; j <= n.size(); ++j) {
                    const std::size_t up = row[j];
                    row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                                       diag + (std::tolower(wanted[i - 1]) == std::tolower(n[j - 1]) ? 0u : 1u)});
                    diag = up;
                }
            }
            // A name that ends with what was written (a path without its struct) is near too.
            std::size_t d = row[n.size()];
            if (n.size() > wanted.size() && n.substr(n.size() - wanted.size()) == wanted) d = 1;
            scored.emplace_back(d, name);
        }
        std::sort(scored.begin(), scored.end());
        std::string out;
        for (std::size_t i = 0; i < scored.size() && i < 5; ++i)
            if (scored[i].first <= std::max<std::size_t>(3, wanted.size() / 3))
                out += (out.empty() ? "; nearest: " : ", ") + scored[i].second;
        return out;
    }

    const Schema& schema_;
    std::string_view text_;
    std::string_view option_;
    const SpanLabelResolver& labels_;
    const SpanLabels* table_;
    std::string struct_error_;
};

}  // namespace
}  // namespace detail

Result<std::unique_ptr<EventPredicate>> compile_where(std::string_view text, const Schema& schema,
                                                      std::string_view option, const SpanLabelResolver& labels,
                                                      const SpanLabels* table) {
    auto tree = detail::parse_where(text, option);
    if (!tree) return std::move(tree).error();
    detail::Compiler compiler(schema, text, option, labels, table);
    auto compiled = compiler.compile(**tree);
    if (!compiled) return std::move(compiled).error();
    return std::unique_ptr<EventPredicate>(detail::make_where_predicate(std::move(*compiled), table));
}

}  // namespace evring
