// Running a compiled filter expression (where_compiled.hpp).
//
// The tree is lowered once into a flat program of tests, each with the next
// test to run when it holds and when it does not (or the verdict): && and ||
// become jumps, ! swaps the targets, so evaluation is one loop over small
// records with no recursion, no virtual call and no allocation. Tests on the
// event type become bitsets over the type numbers; tests on other descriptor
// words compare 64-bit words (literals no 64-bit word reaches are folded into
// constants); payload fields that are unsigned words of at most 8 bytes at a
// fixed offset compare 64-bit words too. The compiler put descriptor tests
// before payload tests in every && and ||, so a payload is loaded (the lazy
// form of matches) only when the descriptor left the answer open.
#include <algorithm>
#include <cstring>

#include "query/where_compiled.hpp"

namespace evring::detail {
namespace {

constexpr std::uint32_t kAccept = 0xFFFFFFFEu;
constexpr std::uint32_t kReject = 0xFFFFFFFFu;

enum class Step : std::uint8_t { Const, TypeSet, Word, WordIn, Field, Label };

struct Instr {
    Step step = Step::Const;
    Operand operand = Operand::Type;
    WhereOp op = WhereOp::Truth;
    std::uint8_t ext = 0;
    bool value = false;          // Const: the result; TypeSet: the result for types past the bits
    std::uint32_t on_true = kAccept, on_false = kReject;
    std::uint64_t word = 0;      // Word: the literal
    std::uint32_t first = 0;     // TypeSet: first bit word; WordIn: first value; Field: the test
    std::uint32_t count = 0;     // TypeSet: bits; WordIn: values
};

// A literal against a 64-bit word: -1 below every word (negative), +1 above
// (2^64 or more), 0 compare `v`.
struct Word {
    std::uint64_t v = 0;
    std::int8_t clamp = 0;
};

Word word_of(const Value& l) {
    if (l.negative) return {0, -1};
    if (l.u[1] != 0 || l.u[2] != 0 || l.u[3] != 0) return {0, 1};
    return {l.u[0], 0};
}

int compare_word(std::uint64_t v, const Word& l) {
    if (l.clamp != 0) return -l.clamp;
    return v < l.v ? -1 : v > l.v ? 1 : 0;
}

// One payload field test: the compiled node, and its literals as words when
// every event's field is a small unsigned word at a fixed offset.
struct FieldTest {
    const Compiled* node = nullptr;
    std::vector<std::vector<Word>> words;  // per access; empty when not small
};

bool small_word(const Access& a) {
    return a.kind == Value::Kind::Unsigned && a.trailing < 0 && a.size <= 8 && !a.text;
}

// Reads an unsigned little-endian integer of `size` bytes (at most 32).
U256 read_unsigned(const std::byte* p, std::uint32_t size) {
    U256 v{};
    std::memcpy(v.data(), p, std::min<std::uint32_t>(size, 32));
    return v;
}

class Program {
public:
    explicit Program(const Compiled& root) { entry_ = lower(root, kAccept, kReject); }

    std::uint32_t entry() const { return entry_; }
    const std::vector<Instr>& code() const { return code_; }
    const std::vector<std::uint64_t>& bits() const { return bits_; }
    const std::vector<std::uint64_t>& values() const { return values_; }
    std::vector<FieldTest>& fields() { return fields_; }

private:
    // Emits `c` so that it goes on to `t` when it holds and `f` when not;
    // returns where it starts. The right operand is emitted first, so the
    // left one knows where to go.
    std::uint32_t lower(const Compiled& c, std::uint32_t t, std::uint32_t f) {
        switch (c.kind) {
        case WhereNode::Kind::And: return lower(*c.a, lower(*c.b, t, f), f);
        case WhereNode::Kind::Or: return lower(*c.a, t, lower(*c.b, t, f));
        case WhereNode::Kind::Not: return lower(*c.a, f, t);
        case WhereNode::Kind::Test: break;
        }
        Instr i = test(c);
        i.on_true = t;
        i.on_false = f;
        if (i.step == Step::Const) return i.value ? t : f;  // folded away
        code_.push_back(i);
        return static_cast<std::uint32_t>(code_.size() - 1);
    }

    Instr test(const Compiled& c) {
        Instr i;
        i.op = c.op;
        i.operand = c.operand;
        i.ext = c.ext;
        if (c.operand == Operand::Field) {
            i.step = Step::Field;
            FieldTest ft{&c, {}};
            for (const Access& a : c.access) {
                std::vector<Word> w;
                if (small_word(a))
                    for (const Value& l : a.literals) w.push_back(word_of(l));
                ft.words.push_back(std::move(w));
            }
            i.first = static_cast<std::uint32_t>(fields_.size());
            fields_.push_back(std::move(ft));
            return i;
        }
        if (c.operand == Operand::Type) return type_set(c, i);
        if (c.operand == Operand::SpanLabel) {  // an ordered comparison with one label (where.cpp)
            i.step = Step::Label;
            i.word = c.literals.empty() ? 0 : c.literals[0].u[0];
            return i;
        }
        if (c.op == WhereOp::Truth) {
            i.step = Step::Word;
            return i;
        }
        std::vector<Word> lits;
        for (const Value& l : c.literals) lits.push_back(word_of(l));
        if (c.op == WhereOp::In) {
            i.step = Step::WordIn;
            i.first = static_cast<std::uint32_t>(values_.size());
            for (const Word& w : lits)
                if (w.clamp == 0) values_.push_back(w.v);  // out of reach: never equal
            i.count = static_cast<std::uint32_t>(values_.size() - i.first);
            if (i.count == 0) i.step = Step::Const, i.value = false;
            return i;
        }
        if (lits.empty()) return i;  // Const false: the parser gives every comparison a literal
        if (lits[0].clamp != 0) {  // every word is above (or below) it
            i.step = Step::Const;
            i.value = holds(c.op, -lits[0].clamp);
            return i;
        }
        i.step = Step::Word;
        i.word = lits[0].v;
        return i;
    }

    // The types the test keeps, one bit each up to the highest type whose
    // answer differs from that of every type past it.
    Instr type_set(const Compiled& c, Instr i) {
        auto keeps = [&](std::uint64_t t) { return test_unsigned(c.op, U256{t, 0, 0, 0}, c.literals); };
        i.step = Step::TypeSet;
        i.value = keeps(65535);
        std::uint32_t n = 0;
        for (std::uint32_t t = 0; t < 65536; ++t)
            if (keeps(t) != i.value) n = t + 1;
        i.first = static_cast<std::uint32_t>(bits_.size());
        i.count = n;
        bits_.resize(bits_.size() + (n + 63) / 64, 0);
        for (std::uint32_t t = 0; t < n; ++t)
            if (keeps(t)) bits_[i.first + t / 64] |= std::uint64_t{1} << (t % 64);
        if (n == 0) i.step = Step::Const;  // every type alike
        return i;
    }

    std::vector<Instr> code_;
    std::vector<std::uint64_t> bits_;
    std::vector<std::uint64_t> values_;
    std::vector<FieldTest> fields_;
    std::uint32_t entry_ = kReject;
};

class WherePredicate final : public EventPredicate {
public:
    WherePredicate(std::unique_ptr<Compiled> root, const SpanLabels* labels)
        : root_(std::move(root)), program_(*root_), labels_(labels) {
        top_ = top_of(*root_);
        // Flat arrays for the loop: no pointer chasing into the tree but for fields.
        code_ = program_.code();
        bits_ = program_.bits();
        values_ = program_.values();
        fields_ = std::move(program_.fields());
        // Where each event type starts: the tests on the type at the head of
        // the program are decided once per type, here (types past the
        // highest one any test singles out all behave alike).
        std::uint32_t last = 0;
        for (const Instr& i : code_)
            if (i.step == Step::TypeSet) last = std::max(last, i.count);
        entries_.resize(last + 1u);
        for (std::uint32_t t = 0; t <= last; ++t) {
            std::uint32_t pc = program_.entry();
            while (pc < kAccept && code_[pc].step == Step::TypeSet) pc = type_holds(code_[pc], t) ? code_[pc].on_true : code_[pc].on_false;
            entries_[t] = pc;
        }
    }
    bool needs_payload() const noexcept override { return root_->payload; }
    std::optional<SpanLimit> span_top() const noexcept override { return top_; }
    bool matches(const SourceEvent& event) const noexcept override { return run(event, nullptr); }
    bool matches(SourceEvent& event, PayloadLoader& loader) const noexcept override {
        return run(event, &loader);
    }

private:
    // `event` is changed (its payload loaded) only through `loader`, which
    // is given only by the non-const form.
    bool run(const SourceEvent& event, PayloadLoader* loader) const noexcept {
        const EventDescriptor& d = event.descriptor;
        const std::size_t type = d.event_type;
        std::uint32_t pc = entries_[std::min(type, entries_.size() - 1)];
        while (pc < kAccept) {
            const Instr& i = code_[pc];
            bool r = false;
            switch (i.step) {
            case Step::Const: r = i.value; break;
            case Step::TypeSet: r = type_holds(i, d.event_type); break;
            case Step::Word: {
                const std::uint64_t v = word(d, i);
                r = i.op == WhereOp::Truth ? v != 0 : holds(i.op, v < i.word ? -1 : v > i.word ? 1 : 0);
                break;
            }
            case Step::WordIn: {
                const std::uint64_t v = word(d, i);
                const std::uint64_t* first = values_.data() + i.first;
                r = std::find(first, first + i.count, v) != first + i.count;
                break;
            }
            case Step::Field: r = field(fields_[i.first], event, loader); break;
            case Step::Label: {
                // An event whose opening was not read has no label: no comparison holds.
                const auto label = labels_ != nullptr ? labels_->label_of(d, i.ext) : std::nullopt;
                r = label && holds(i.op, *label < i.word ? -1 : *label > i.word ? 1 : 0);
                break;
            }
            }
            pc = r ? i.on_true : i.on_false;
        }
        return pc == kAccept;
    }

    bool type_holds(const Instr& i, std::uint32_t t) const noexcept {
        return t < i.count ? ((bits_[i.first + t / 64] >> (t % 64)) & 1u) != 0 : i.value;
    }

    static std::uint64_t word(const EventDescriptor& d, const Instr& i) {
        switch (i.operand) {
        case Operand::Seqno: return d.seqno;
        case Operand::Time: return d.record_epoch_nanos;
        case Operand::PayloadSize: return d.payload_size;
        case Operand::Ext: return d.content_ext[i.ext];
        case Operand::Type: return d.event_type;
        case Operand::Field:
        case Operand::SpanLabel: break;
        }
        return 0;
    }

    static bool field(const FieldTest& ft, const SourceEvent& e, PayloadLoader* loader) {
        const Compiled& c = *ft.node;
        const std::uint16_t type = e.descriptor.event_type;
        if (type >= c.slot.size() || c.slot[type] < 0) return false;  // no such field: no payload needed
        if (e.payload_state == PayloadState::NotRead && loader != nullptr)
            loader->load(const_cast<SourceEvent&>(e));  // the non-const form's event (run's contract)
        if (e.payload_state != PayloadState::Ok) return false;
        const std::size_t slot = static_cast<std::size_t>(c.slot[type]);
        const Access& a = c.access[slot];
        const std::span<const std::byte> p = e.payload;
        if (!ft.words[slot].empty() || (small_word(a) && c.op == WhereOp::Truth)) {
            if (std::uint64_t{a.offset} + a.size > p.size()) return false;
            std::uint64_t v = 0;
            std::memcpy(&v, p.data() + a.offset, a.size);
            if (c.op == WhereOp::Truth) return v != 0;
            for (const Word& l : ft.words[slot]) {
                const int cmp = compare_word(v, l);
                if (c.op == WhereOp::In ? cmp == 0 : holds(c.op, cmp)) return true;
                if (c.op != WhereOp::In) return false;
            }
            return false;
        }
        const std::byte* at = field_at(a, p);
        if (at == nullptr) return false;
        return compare_at(c, a, at);
    }

    static bool compare_at(const Compiled& c, const Access& a, const std::byte* at) {
        switch (a.kind) {
        case Value::Kind::Unsigned:
            return test_unsigned(c.op, read_unsigned(at, a.size), a.literals);
        case Value::Kind::Signed: {
            const std::int64_t s = read_signed(at, a.size);
            if (c.op == WhereOp::Truth) return s != 0;
            for (const Value& l : a.literals) {
                const int cmp = s < l.s ? -1 : s > l.s ? 1 : 0;
                if (c.op == WhereOp::In ? cmp == 0 : holds(c.op, cmp)) return true;
                if (c.op != WhereOp::In) return false;
            }
            return false;
        }
        case Value::Kind::Float: {
            const double f = read_float(at, a.size);
            if (c.op == WhereOp::Truth) return f != 0;
            for (const Value& l : a.literals) {
                if (f != f) return c.op == WhereOp::Ne;  // NaN equals nothing
                const int cmp = f < l.f ? -1 : f > l.f ? 1 : 0;
                if (c.op == WhereOp::In ? cmp == 0 : holds(c.op, cmp)) return true;
                if (c.op != WhereOp::In) return false;
            }
            return false;
        }
        case Value::Kind::Bytes: {
            if (c.op == WhereOp::Truth) {
                for (std::uint32_t i = 0; i < a.size; ++i)
                    if (at[i] != std::byte{0}) return true;
                return false;
            }
            for (const Value& l : a.literals) {
                bool eq = false;
                if (c.op == WhereOp::Prefix) eq = l.b.size() <= a.size && std::memcmp(at, l.b.data(), l.b.size()) == 0;
                else if (a.text)  // the text, then NUL padding (or the field's end)
                    eq = l.b.size() <= a.size && std::memcmp(at, l.b.data(), l.b.size()) == 0 &&
                         (l.b.size() == a.size || at[l.b.size()] == std::byte{0});
                else eq = l.b.size() == a.size && std::memcmp(at, l.b.data(), a.size) == 0;
                if (c.op == WhereOp::Ne) return !eq;
                if (eq) return true;
                if (c.op != WhereOp::In) return false;
            }
            return false;
        }
        }
        return false;
    }

    // The greatest label of one span an event kept can have: a test's own
    // top; the lower of the two sides of && (either bounds it), the higher
    // of || (both must be bounded, on one span); ! bounds nothing.
    static std::optional<SpanLimit> top_of(const Compiled& c) {
        switch (c.kind) {
        case WhereNode::Kind::Test:
            if (!c.top) return std::nullopt;
            return SpanLimit{SpanLimit::Kind::Top, c.ext, *c.top, 0};
        case WhereNode::Kind::Not: return std::nullopt;
        case WhereNode::Kind::And: {
            const auto a = top_of(*c.a), b = top_of(*c.b);
            if (!a || !b) return a ? a : b;
            if (a->tag != b->tag) return a;
            return a->label <= b->label ? a : b;
        }
        case WhereNode::Kind::Or: {
            const auto a = top_of(*c.a), b = top_of(*c.b);
            if (!a || !b || a->tag != b->tag) return std::nullopt;
            return a->label >= b->label ? a : b;
        }
        }
        return std::nullopt;
    }

    std::unique_ptr<Compiled> root_;
    Program program_;
    const SpanLabels* labels_;
    std::optional<SpanLimit> top_;
    std::vector<Instr> code_;
    std::vector<std::uint64_t> bits_;
    std::vector<std::uint64_t> values_;
    std::vector<FieldTest> fields_;
    std::vector<std::uint32_t> entries_;  // by event type (the last: every type past it)
};

}  // namespace

std::unique_ptr<EventPredicate> make_where_predicate(std::unique_ptr<Compiled> root, const SpanLabels* labels) {
    return std::make_unique<WherePredicate>(std::move(root), labels);
}

}  // namespace evring::detail
