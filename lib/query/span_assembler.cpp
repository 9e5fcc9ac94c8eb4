// Whole span instances from a source's events (span_assembler.hpp).
#include "query/span_assembler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>

#include "query/field_path.hpp"

namespace evring {
namespace {

// A number field of `event` at `path` (at most 64 bits), or a byte array
// with `bytes`; nullopt when the event has none.
Result<std::optional<detail::FieldAccess>> field_of(const Schema& schema, const SchemaEvent& event,
                                                    std::string_view path, bool bytes, std::string_view what) {
    auto steps = detail::parse_field_path(path, what);
    if (!steps) return std::move(steps).error();
    std::string problem;
    auto a = detail::locate_field(schema, event, *steps, problem);
    if (!a) return std::optional<detail::FieldAccess>();
    const bool number = a->kind == detail::FieldKind::Unsigned && a->size <= 8;
    if (bytes ? a->kind != detail::FieldKind::Bytes : !number)
        return Error(EINVAL, fmt::format("{} '{}' of {} is not {}", what, path, event.name,
                                         bytes ? "a byte array" : "an unsigned number of at most 64 bits"));
    return std::optional<detail::FieldAccess>(std::move(*a));
}

std::optional<std::uint64_t> word_at(const detail::FieldAccess& a, const SourceEvent& e) {
    if (e.payload_state != PayloadState::Ok) return std::nullopt;
    const std::byte* at = detail::field_at(a, e.payload);
    if (at == nullptr) return std::nullopt;
    return detail::read_word(at, a.size);
}

std::vector<std::byte> bytes_at(const std::optional<detail::FieldAccess>& a, const SourceEvent& e) {
    if (!a || e.payload_state != PayloadState::Ok) return {};
    const std::byte* at = detail::field_at(*a, e.payload);
    return at == nullptr ? std::vector<std::byte>() : std::vector<std::byte>(at, at + a->size);
}

}  // namespace

Result<SpanAssembler> SpanAssembler::make(const Schema& schema, std::string_view span, std::string_view stage) {
    SpanAssembler a;
    a.schema_ = &schema;
    std::string labelled;
    for (const SchemaSpan& s : schema.spans()) {
        if (s.label.empty() || !s.opener) continue;
        if (s.name == span) a.span_ = &s;
        labelled += (labelled.empty() ? "" : ", ") + s.name;
    }
    if (a.span_ == nullptr)
        return Error(EINVAL, fmt::format("no span '{}' with a label in schema {}{}", span, schema.content_name(),
                                         labelled.empty() ? std::string(" (it has none)")
                                                          : fmt::format(" (spans with labels: {})", labelled)));
    a.opener_ = *a.span_->opener;
    for (std::uint16_t type : a.span_->begin) {
        const SchemaEvent* e = schema.event(type);
        if (e == nullptr) continue;
        auto label = field_of(schema, *e, a.span_->label, false, "the span's label");
        if (!label) return std::move(label).error();
        auto id = a.span_->id.empty() ? Result<std::optional<detail::FieldAccess>>(std::nullopt)
                                      : field_of(schema, *e, a.span_->id, true, "the span's id");
        if (!id) return std::move(id).error();
        if (!*label) continue;
        if (a.label_slot_.size() <= type) a.label_slot_.resize(type + 1u, -1);
        a.label_slot_[type] = static_cast<std::int32_t>(a.labels_.size());
        a.labels_.push_back(**label);
        a.ids_.push_back(*id ? **id : detail::FieldAccess{});
        a.has_id_.push_back(id->has_value());
    }
    for (const SchemaSpan& s : schema.spans()) {
        if (&s == a.span_) continue;
        for (std::uint8_t tag : s.key)
            if (tag != a.opener_) {
                a.nested_.push_back({&s, tag});
                break;
            }
    }
    for (const SchemaSpanStage& st : a.span_->stages) {
        const SchemaEvent* e = schema.event(st.event);
        if (e == nullptr) continue;
        auto label = field_of(schema, *e, st.label, false, "a stage's label");
        if (!label) return std::move(label).error();
        auto id = st.id.empty() ? Result<std::optional<detail::FieldAccess>>(std::nullopt)
                                : field_of(schema, *e, st.id, true, "a stage's id");
        if (!id) return std::move(id).error();
        if (*label) a.stages_.push_back({st.event, st.name, **label, *id});
    }
    if (stage.empty() || stage == "ended") return a;
    std::string names = "ended";
    for (std::size_t i = 0; i < a.stages_.size(); ++i) {
        if (a.stages_[i].name == stage) {
            a.wanted_ = i + 2;
            return a;
        }
        names += ", " + a.stages_[i].name;
    }
    return Error(EINVAL, fmt::format("span '{}' has no stage '{}' (its stages: {})", span, stage, names));
}

bool SpanAssembler::is(const std::vector<std::uint16_t>& types, std::uint16_t type) const {
    return std::find(types.begin(), types.end(), type) != types.end();
}

void SpanAssembler::event(const SourceEvent& e) {
    if (is(span_->begin, e.descriptor.event_type)) begin(e);
    else place(e);
    // A stage event marks instances by its payload, after taking its place in one.
    for (std::size_t i = 0; i < stages_.size(); ++i)
        if (stages_[i].event == e.descriptor.event_type) stage_event(e, stages_[i], i + 2);
}

void SpanAssembler::place(const SourceEvent& e) {
    const EventDescriptor& d = e.descriptor;
    const std::uint64_t opener = d.content_ext[opener_];
    if (opener == 0) return;
    auto it = std::find_if(open_.rbegin(), open_.rend(), [&](const Open& o) {
        return o.begin_seqno == opener && o.span.member == e.member;
    });
    if (it == open_.rend()) {
        ++counts_.unassembled;  // its instance began before reading did (or was handed out)
        return;
    }
    Open& open = *it;
    add(open, e);
    if (!is(span_->end, d.event_type) || open.ended) return;
    open.ended = true;
    open.span.stages.push_back({"ended", d.seqno, d.record_epoch_nanos});
    open.reached = std::max<std::size_t>(open.reached, 1);
    if (open.reached >= wanted_) {
        hand_out(std::move(open), AssembledSpan::State::Complete);
        open_.erase(std::next(it).base());
        return;
    }
    // Waiting for its stage: at most kMaxHeld of them.
    const auto held = std::count_if(open_.begin(), open_.end(), [](const Open& o) { return o.ended; });
    if (static_cast<std::size_t>(held) > kMaxHeld) {
        open_.erase(std::find_if(open_.begin(), open_.end(), [](const Open& o) { return o.ended; }));
        ++counts_.unfinished;
    }
}

void SpanAssembler::begin(const SourceEvent& e) {
    const std::uint16_t type = e.descriptor.event_type;
    const std::int32_t slot = type < label_slot_.size() ? label_slot_[type] : -1;
    const auto label = slot >= 0 ? word_at(labels_[static_cast<std::size_t>(slot)], e) : std::nullopt;
    if (!label) {
        ++counts_.unassembled;  // an instance with no label (its payload expired) cannot be named
        return;
    }
    const auto unended = std::count_if(open_.begin(), open_.end(), [](const Open& o) { return !o.ended; });
    if (static_cast<std::size_t>(unended) >= kMaxOpen) {
        open_.erase(std::find_if(open_.begin(), open_.end(), [](const Open& o) { return !o.ended; }));
        ++counts_.unfinished;
    }
    Open open;
    open.begin_seqno = e.descriptor.seqno;
    open.span.span = span_;
    open.span.label = *label;
    open.span.member = e.member;
    const std::size_t i = static_cast<std::size_t>(slot);
    if (has_id_[i]) open.span.id = bytes_at(ids_[i], e);
    add(open, e);
    open_.push_back(std::move(open));
}

void SpanAssembler::add(Open& open, const SourceEvent& e) {
    AssembledSpan& s = open.span;
    const std::size_t index = s.events.size();
    AssembledEvent copy;
    copy.descriptor = e.descriptor;
    copy.member = e.member;
    copy.payload_state = e.payload_state;
    if (e.payload_state == PayloadState::Ok) copy.payload.assign(e.payload.begin(), e.payload.end());
    s.events.push_back(std::move(copy));
    for (const Nested& n : nested_) {
        const std::uint64_t key = e.descriptor.content_ext[n.tag];
        if (key == 0) continue;
        auto [at, fresh] = open.nested_at[n.tag].try_emplace(key, s.nested.size());
        if (fresh) s.nested.push_back({n.span, key, {}});
        s.nested[at->second].events.push_back(index);
        return;
    }
    s.outside.push_back(index);
}

void SpanAssembler::stage_event(const SourceEvent& e, const Stage& stage, std::size_t rank) {
    const auto label = word_at(stage.label, e);
    if (!label) return;
    const std::vector<std::byte> id = bytes_at(stage.id, e);
    for (auto it = open_.begin(); it != open_.end();) {
        Open& o = *it;
        if (o.span.label != *label) {
            ++it;
            continue;
        }
        if (!id.empty() && !o.span.id.empty() && id != o.span.id) {
            // A rival of the instance the chain took: abandoned, once it ended.
            if (!o.ended) {
                ++it;
                continue;
            }
            hand_out(std::move(o), AssembledSpan::State::Abandoned);
            it = open_.erase(it);
            continue;
        }
        o.span.stages.push_back({stage.name, e.descriptor.seqno, e.descriptor.record_epoch_nanos});
        o.reached = std::max(o.reached, rank);
        if (o.ended && o.reached >= wanted_) {
            hand_out(std::move(o), AssembledSpan::State::Complete);
            it = open_.erase(it);
            continue;
        }
        ++it;
    }
}

void SpanAssembler::gap(const SourceGap& g) {
    for (auto it = open_.begin(); it != open_.end();) {
        if (it->ended || it->span.member != g.member) {
            ++it;
            continue;
        }
        it->span.lost_first = g.first_seqno;
        it->span.lost_count = g.count;
        hand_out(std::move(*it), AssembledSpan::State::Broken);
        it = open_.erase(it);
    }
}

void SpanAssembler::end() {
    counts_.unfinished += open_.size();
    open_.clear();
}

void SpanAssembler::hand_out(Open&& open, AssembledSpan::State state) {
    open.span.state = state;
    switch (state) {
    case AssembledSpan::State::Complete: ++counts_.handed_out; break;
    case AssembledSpan::State::Abandoned: ++counts_.abandoned; break;
    case AssembledSpan::State::Broken: ++counts_.broken; break;
    }
    ready_.push_back(std::move(open.span));
}

std::optional<AssembledSpan> SpanAssembler::take() {
    if (ready_.empty()) return std::nullopt;
    AssembledSpan s = std::move(ready_.front());
    ready_.pop_front();
    return s;
}

}  // namespace evring
