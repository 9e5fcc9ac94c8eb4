// Which events a reader takes (selection.hpp).
#include "read/selection.hpp"

#include <fmt/format.h>

#include <charconv>

#include "query/span_labels_schema.hpp"
#include "query/span_seek.hpp"
#include "read/selection_values.hpp"
#include "util/text_escape.hpp"

namespace evring {
namespace {

bool starts_with_digit(std::string_view text) { return !text.empty() && text[0] >= '0' && text[0] <= '9'; }

// A --flow whose INDEX is a name (NAME=VALUE): it waits for the schema.
bool flow_names_a_tag(std::string_view flow) {
    const auto eq = flow.find('=');
    return !starts_with_digit(flow) && eq != 0 && eq != std::string_view::npos;
}

// --flow NAME=LABEL where NAME is the flow tag a span's events point back to
// its opening event with (`opener`, docs/schema.md): the user means the
// span's label (block=15000009), and the tag holds the opening event's seqno,
// which span_seek finds. nullopt when NAME is no such tag.
std::optional<Result<std::uint64_t>> span_label_flow(const std::string& flow, const Schema* schema,
                                                     EventSource& source) {
    if (schema == nullptr) return std::nullopt;
    const auto eq = flow.find('=');
    const auto index = schema->flow_tag(std::string_view(flow).substr(0, eq));
    if (!index) return std::nullopt;
    for (const SchemaSpan& span : schema->spans()) {
        if (span.opener != index || span.label.empty()) continue;
        SpanRef ref;
        ref.span = span.name;
        ref.text = "--flow " + flow;
        const std::string value = flow.substr(eq + 1);
        auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ref.label);
        if (ec != std::errc() || end != value.data() + value.size() || value.empty())
            return Result<std::uint64_t>(Error(EINVAL, fmt::format("bad --flow '{}': expected {}=NUMBER (a {} label)",
                                                                   printable(flow), printable(flow.substr(0, eq)),
                                                                   span.name)));
        return resolve_span(source, ref, *schema);
    }
    return std::nullopt;
}

// --until SPAN:N that cannot end anything: below a --from label of the same
// span (usage), or, on a file, a label no event carries (the search of
// --from block:N names what is there). A live ring may open it later.
Status check_span_stop(const FollowOptions& follow, const Schema& schema, EventSource& source) {
    const SpanRef& until = follow.stop.span;
    const SpanRef& from = follow.start.span;
    if (follow.start.kind == Position::Kind::Span && from.pick == SpanRef::Pick::Label && from.span == until.span &&
        until.label < from.label)
        return Error(EINVAL, fmt::format("--until {} ends before --from {} starts", until.text, from.text));
    if (source.kind() != SourceKind::Snapshot && source.kind() != SourceKind::Recording) return {};
    auto found = resolve_span(source, until, schema);
    if (!found) return Error(found.error().errno_value() == ENOENT ? EINVAL : found.error().errno_value(),
                             "--until " + found.error().message());
    return {};
}

}  // namespace

Status Selection::check_range(FollowOptions& follow) const {
    if (reset && !name) return Error(EINVAL, "--reset goes with --name (it forgets a named reader's position)");
    if (name)
        if (auto s = check_reader_name(*name); !s) return s;
    return parse_follow_range(follow, from, until, count);
}

Result<std::unique_ptr<NamedReader>> Selection::resume_named(FollowOptions& follow, EventSource& source,
                                                             std::vector<std::string>& notices) const {
    if (!name) return std::unique_ptr<NamedReader>();
    auto reader = NamedReader::open(*name);
    if (!reader) return std::move(reader).error();
    auto start = (*reader)->resume(source, follow.start, from_given, reset, notices);
    if (!start) return std::move(start).error();
    follow.start = *start;
    return std::move(*reader);
}

Status Selection::check_filters(FlowFilter& filter) const {
    for (const auto& flow : flows)
        if (!flow_names_a_tag(flow))
            if (auto s = add_flow(filter, flow); !s) return s;
    for (const auto& type : types) {
        if (!starts_with_digit(type)) continue;  // a name: resolve_names
        auto parsed = parse_type_option(nullptr, type);
        if (!parsed) return std::move(parsed).error();
        filter.types.add(*parsed);
    }
    return {};
}

Status Selection::check(FollowOptions& follow) const {
    if (auto s = check_range(follow); !s) return s;
    follow.members = members;  // the follow loop passes over the others' events and gaps
    return check_filters(follow.filter);
}

bool Selection::has_names() const {
    for (const auto& type : types)
        if (!starts_with_digit(type)) return true;
    for (const auto& flow : flows)
        if (flow_names_a_tag(flow)) return true;
    return false;
}

Status Selection::resolve_names(FlowFilter& filter, const Schema* schema, EventSource& source) const {
    for (const auto& type : types) {
        if (starts_with_digit(type)) continue;  // check_filters took it
        auto parsed = parse_type_option(schema, type);
        if (!parsed) return std::move(parsed).error();
        filter.types.add(*parsed);
    }
    for (const auto& flow : flows) {
        if (!flow_names_a_tag(flow)) continue;
        if (auto seqno = span_label_flow(flow, schema, source)) {
            if (!*seqno) return std::move(*seqno).error();
            const auto index = *schema->flow_tag(std::string_view(flow).substr(0, flow.find('=')));
            if (!filter.require_flow(index, **seqno))
                return Error(EINVAL, fmt::format("bad --flow '{}': at most 8 --flow conditions", printable(flow)));
            continue;
        }
        if (auto s = add_flow(filter, flow, schema); !s) return s;
    }
    return {};
}

Status Selection::resolve(FollowOptions& follow, const Schema* schema, EventSource& source) {
    return resolve(follow, schema, source, kept_);
}

Status Selection::resolve(FollowOptions& follow, const Schema* schema, EventSource& source,
                               SelectionKept& kept) const {
    if (!members.empty() && !source.identity().members)
        return Error(EINVAL, fmt::format("--member picks members of a ring set; '{}' is a {}",
                                         printable(source.identity().location), describe(source.kind())));
    if (auto s = resolve_names(follow.filter, schema, source); !s) return s;
    follow.schema = schema;
    const bool span_stop = follow.stop.kind == Position::Kind::Span;
    if (span_stop && schema == nullptr)
        return Error(EINVAL, fmt::format("--until {}: a span position needs a schema, and {} '{}' has none (give "
                                         "--schema FILE)", follow.stop.span.text, describe(source.kind()),
                                         source.identity().path));
    if (schema != nullptr && (span_stop || where || span_labels)) {
        kept.span_labels = std::make_unique<SpanLabels>(span_labels_for(*schema));
        if (kept.span_labels->any()) follow.span_labels = kept.span_labels.get();
    }
    if (span_stop) {
        auto limit = span_stop_for(follow.stop, *schema);
        if (!limit) return std::move(limit).error();
        if (follow.span_labels == nullptr)
            return Error(EINVAL, fmt::format("--until {}: schema {} has no span with a label and an opener flow tag",
                                             follow.stop.span.text, schema->content_name()));
        follow.span_stop = *limit;
        if (auto s = check_span_stop(follow, *schema, source); !s) return s;
    }
    return resolve_where(follow, schema, source, kept);
}

Status Selection::resolve_where(FollowOptions& follow, const Schema* schema, EventSource& source,
                                     SelectionKept& kept) const {
    return compile_where_option(follow, where, schema, kept.where, &source, where_option);
}

Status Selection::resolve_filters(FollowOptions& follow, const Schema* schema, EventSource& source,
                                  SelectionKept& kept) const {
    if (auto s = resolve_names(follow.filter, schema, source); !s) return s;
    return resolve_where(follow, schema, source, kept);
}

}  // namespace evring
