// Grouping a source's events for `evring stats --by` (stats_by.hpp).
#include "stats/stats_by.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cerrno>

#include "query/field_path.hpp"
#include "source/span_labels.hpp"

namespace evring::cli {
namespace {

using detail::FieldKind;

const char* kind_name(FieldKind k) {
    switch (k) {
    case FieldKind::Unsigned: return "an unsigned number";
    case FieldKind::Signed: return "a signed number";
    case FieldKind::Float: return "a floating-point number";
    case FieldKind::Bytes: return "bytes";
    }
    return "?";
}

// `text` as a field of every event type that has it, one kind throughout:
// a number of at most 64 bits, or (with `bytes`) a byte array.
// `only`: that event type's field alone.
Result<GroupedStats::Field> compile_field(const Schema* schema, const std::string& text, std::string_view option,
                                          bool bytes, const SchemaEvent* only = nullptr) {
    if (schema == nullptr)
        return Error(EINVAL, fmt::format("bad {} '{}': a payload field needs the source's schema (give --schema FILE)",
                                         option, text));
    auto steps = detail::parse_field_path(text, option);
    if (!steps) return std::move(steps).error();
    GroupedStats::Field f;
    f.path = text;
    std::string problem;
    for (const SchemaEvent& e : schema->events()) {
        if (only != nullptr && only->number != e.number) continue;
        auto a = detail::locate_field(*schema, e, *steps, problem);
        if (!a) continue;
        if (a->kind == FieldKind::Bytes && !bytes) {
            problem = fmt::format("'{}' is bytes in {}; {} takes numbers", text, e.name, option);
            continue;
        }
        if (a->kind != FieldKind::Bytes && a->size > 8) {
            problem = fmt::format("'{}' is a {}-bit number in {}; {} takes numbers of at most 64 bits", text,
                                  a->size * 8, e.name, option);
            continue;
        }
        if (!f.places.empty() && a->kind != f.kind)
            return Error(EINVAL, fmt::format("bad {} '{}': it is {} in {} and {} in another event type", option, text,
                                             kind_name(a->kind), e.name, kind_name(f.kind)));
        f.kind = a->kind;
        f.places.add(e.number, std::move(*a));
    }
    if (!f.places.empty()) return f;
    if (!problem.empty()) return Error(EINVAL, fmt::format("bad {} '{}': {}", option, text, problem));
    return Error(EINVAL, fmt::format("bad {} '{}': no event of schema {} has a field '{}'", option, text,
                                     schema->content_name(), text));
}

bool has(const std::vector<std::uint16_t>& types, std::uint16_t type) {
    return std::find(types.begin(), types.end(), type) != types.end();
}

}  // namespace

std::uint64_t ordered_word(FieldKind kind, const std::byte* at, std::uint32_t size) noexcept {
    constexpr std::uint64_t kTop = std::uint64_t{1} << 63;
    switch (kind) {
    case FieldKind::Signed: return static_cast<std::uint64_t>(detail::read_signed(at, size)) ^ kTop;
    case FieldKind::Float: {
        const std::uint64_t bits = std::bit_cast<std::uint64_t>(detail::read_float(at, size));
        return (bits & kTop) != 0 ? ~bits : bits | kTop;
    }
    default: return detail::read_word(at, size);
    }
}

std::string word_text(FieldKind kind, std::uint64_t word) {
    constexpr std::uint64_t kTop = std::uint64_t{1} << 63;
    switch (kind) {
    case FieldKind::Signed: return std::to_string(static_cast<std::int64_t>(word ^ kTop));
    case FieldKind::Float: return fmt::format("{}", std::bit_cast<double>((word & kTop) != 0 ? word & ~kTop : ~word));
    default: return std::to_string(word);
    }
}

Result<GroupedStats> GroupedStats::make(const Schema* schema, const StatsByOptions& options,
                                        const SpanLabels* labels) {
    GroupedStats g;
    g.schema_ = schema;
    g.labels_ = labels;
    g.by_ = options.by;
    if (options.by.empty()) {
        if (!options.fields.empty())
            return Error(EINVAL, "--field is figured per group: give --by too (--by type: a group per event type)");
        return g;
    }
    for (const std::string& text : options.fields) {
        auto f = compile_field(schema, text, "--field", false);
        if (!f) return std::move(f).error();
        g.fields_.push_back(std::move(*f));
    }
    if (options.by == "type") return g;
    if (schema == nullptr)
        return Error(EINVAL, fmt::format("bad --by '{}': without the source's schema only --by type groups (give "
                                         "--schema FILE)",
                                         options.by));
    for (const SchemaSpan& span : schema->spans()) {
        if (span.name != options.by || span.label.empty() || !span.opener) continue;
        if (labels == nullptr)
            return Error(EINVAL, fmt::format("bad --by '{}': this source's span labels cannot be read", options.by));
        g.kind_ = KeyKind::Span;
        g.span_ = &span;
        g.tag_ = *span.opener;
        for (const SchemaSpan& other : schema->spans())
            if (&other != &span) g.counted_.push_back({other.name, other.begin});
        for (const SchemaSpanStage& stage : span.stages) {
            g.counted_.push_back({stage.name, {stage.event}});
            // The stage's event says in its payload which instance it marks.
            auto f = compile_field(schema, stage.label, "a stage label", false, schema->event(stage.event));
            if (!f) return std::move(f).error();
            g.stages_.push_back(std::move(*f));
        }
        return g;
    }
    if (auto tag = schema->flow_tag(options.by)) {
        g.kind_ = KeyKind::Tag;
        g.tag_ = static_cast<std::uint8_t>(*tag);
        return g;
    }
    auto f = compile_field(schema, options.by, "--by", true);
    if (!f)
        return Error(EINVAL, fmt::format("{} (--by takes 'type', a span with a label, a flow tag or a payload field)",
                                         f.error().message()));
    g.kind_ = KeyKind::Field;
    g.key_field_ = std::move(*f);
    return g;
}

bool GroupedStats::needs_payloads() const noexcept {
    return !fields_.empty() || !stages_.empty() || kind_ == KeyKind::Field;
}

std::optional<GroupedStats::Key> GroupedStats::key_of(const SourceEvent& e) const {
    const EventDescriptor& d = e.descriptor;
    const bool payload = e.payload_state == PayloadState::Ok;
    switch (kind_) {
    case KeyKind::Type: return Key{d.event_type, {}};
    case KeyKind::Tag:
        if (d.content_ext[tag_] == 0) return std::nullopt;
        return Key{d.content_ext[tag_], {}};
    case KeyKind::Span:
        if (auto label = labels_->instance_label(d, tag_)) return Key{*label, {}};
        for (const Field& stage : stages_)
            if (const detail::FieldAccess* a = stage.in(d.event_type); a != nullptr && payload)
                if (const std::byte* at = detail::field_at(*a, e.payload)) return Key{detail::read_word(at, a->size), {}};
        return std::nullopt;
    case KeyKind::Field: {
        const detail::FieldAccess* a = key_field_.in(d.event_type);
        if (a == nullptr || !payload) return std::nullopt;
        const std::byte* at = detail::field_at(*a, e.payload);
        if (at == nullptr) return std::nullopt;
        if (key_field_.kind != FieldKind::Bytes) return Key{ordered_word(key_field_.kind, at, a->size), {}};
        std::string bytes(reinterpret_cast<const char*>(at), a->size);
        if (a->text) bytes.resize(std::min(bytes.find('\0'), bytes.size()));
        return Key{0, std::move(bytes)};
    }
    }
    return std::nullopt;
}

GroupedStats::Group& GroupedStats::group(const std::optional<Key>& key) {
    Group* g = nullptr;
    bool fresh = false;
    if (!key) {
        fresh = !unkeyed_;
        if (fresh) unkeyed_.emplace();
        g = &*unkeyed_;
    } else {
        auto [it, inserted] = groups_.try_emplace(*key);
        g = &it->second;
        fresh = inserted;
    }
    if (fresh) {
        g->counted.assign(counted_.size(), 0);
        g->fields.resize(fields_.size());
        for (std::size_t i = 0; i < fields_.size(); ++i) g->fields[i].kind = fields_[i].kind;
    }
    return *g;
}

void GroupedStats::add(const SourceEvent& e) {
    if (by_.empty()) return;
    const EventDescriptor& d = e.descriptor;
    const std::optional<Key> key = key_of(e);
    Group& g = group(key);
    ++g.events;
    g.bytes += d.payload_size;
    g.first_nanos = std::min(g.first_nanos, d.record_epoch_nanos);
    g.last_nanos = std::max(g.last_nanos, d.record_epoch_nanos);
    if (span_ != nullptr && key) {
        if (has(span_->begin, d.event_type) && !g.begin_nanos) g.begin_nanos = d.record_epoch_nanos;
        if (has(span_->end, d.event_type)) g.end_nanos = d.record_epoch_nanos;
    }
    for (std::size_t i = 0; i < counted_.size(); ++i)
        if (has(counted_[i].types, d.event_type)) ++g.counted[i];
    if (e.payload_state != PayloadState::Ok) return;
    for (std::size_t i = 0; i < fields_.size(); ++i) {
        const detail::FieldAccess* a = fields_[i].in(d.event_type);
        const std::byte* at = a != nullptr ? detail::field_at(*a, e.payload) : nullptr;
        if (at == nullptr) continue;
        Values& v = g.fields[i];
        v.words.push_back(ordered_word(v.kind, at, a->size));
        if (v.kind == FieldKind::Float) v.float_sum += detail::read_float(at, a->size);
        else if (v.kind == FieldKind::Signed) v.sum += detail::read_signed(at, a->size);
        else v.sum += detail::read_word(at, a->size);
    }
}

void GroupedStats::finish() {
    auto sort_group = [](Group& g) {
        for (Values& v : g.fields) std::sort(v.words.begin(), v.words.end());
    };
    for (auto& [key, g] : groups_) sort_group(g);
    if (unkeyed_) sort_group(*unkeyed_);
}

}  // namespace evring::cli
