// Span labels and span stops from a schema (span_labels_schema.hpp).
#include "query/span_labels_schema.hpp"

#include <fmt/format.h>

#include "query/field_access.hpp"
#include "query/field_path.hpp"

namespace evring {
namespace {

// A label is an unsigned field of the fixed part (field_access.hpp's walk,
// as --where and --fields place fields).
std::optional<SpanLabelField> label_field(const Schema& schema, std::uint16_t number, const std::string& path) {
    const SchemaEvent* e = schema.event(number);
    auto steps = detail::parse_field_path(path, "a span label");
    if (e == nullptr || !steps) return std::nullopt;
    std::string problem;
    const auto field = detail::locate_field(schema, *e, *steps, problem);
    if (!field || field->trailing >= 0 || field->kind != detail::FieldKind::Unsigned || field->size > 8)
        return std::nullopt;
    return SpanLabelField{number, field->offset, field->size};
}

std::string names(const std::vector<std::string>& list) {
    std::string out;
    for (const auto& n : list) out += (out.empty() ? "" : ", ") + n;
    return out.empty() ? "none" : out;
}

}  // namespace

SpanLabels span_labels_for(const Schema& schema) {
    SpanLabels labels;
    for (const SchemaSpan& span : schema.spans()) {
        if (!span.opener || span.label.empty() || labels.track(*span.opener) != nullptr) continue;
        SpanTrack track;
        track.tag = *span.opener;
        for (std::uint16_t number : span.begin)
            if (auto f = label_field(schema, number, span.label)) track.openings.push_back(*f);
        track.ends = span.end;
        for (const SchemaSpanStage& stage : span.stages)
            if (auto f = label_field(schema, stage.event, stage.label)) track.stages.push_back(*f);
        if (!track.openings.empty()) labels.add(std::move(track));
    }
    return labels;
}

Result<SpanLimit> span_stop_for(const Position& stop, const Schema& schema) {
    const SpanRef& ref = stop.span;
    const SchemaSpan* span = schema.span(ref.span);
    if (span == nullptr) {
        std::vector<std::string> spans;
        for (const auto& s : schema.spans()) spans.push_back(s.name);
        return Error(EINVAL, fmt::format("--until {}: schema {} has no span '{}' (its spans: {})", ref.text,
                                         schema.content_name(), ref.span, names(spans)));
    }
    if (span->label.empty() || !span->opener)
        return Error(EINVAL, fmt::format("--until {}: span '{}' of schema {} declares no label and opener flow tag, "
                                         "so its instances cannot be told apart as they are read",
                                         ref.text, ref.span, schema.content_name()));
    SpanLimit limit;
    limit.tag = *span->opener;
    limit.label = ref.label;
    limit.kind = SpanLimit::Kind::End;
    if (!ref.stage.empty()) {
        const SchemaSpanStage* stage = span->stage(ref.stage);
        if (stage == nullptr) {
            std::vector<std::string> stages;
            for (const auto& s : span->stages) stages.push_back(s.name);
            return Error(EINVAL, fmt::format("--until {}: span '{}' of schema {} has no stage '{}' (its stages: {})",
                                             ref.text, ref.span, schema.content_name(), ref.stage, names(stages)));
        }
        limit.kind = SpanLimit::Kind::Stage;
        limit.stage_event = stage->event;
    }
    return limit;
}

}  // namespace evring
