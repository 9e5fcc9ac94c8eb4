// Span positions (span_seek.hpp): the API, and the search's scan of a second
// source from its oldest event (streams, recordings without an index, and
// whatever an index could not answer). Rings walk back (span_seek_ring.cpp);
// recordings use their index first (span_seek_index.cpp).
#include "query/span_seek.hpp"

#include <fmt/format.h>

#include "query/span_search.hpp"
#include "evring/schema/schema_resolve.hpp"
#include "evring/source/source_open.hpp"

namespace evring {
namespace span_search {

Result<Hit> SpanSearch::run() {
    std::optional<Hit> found;
    if (source_.ring() != nullptr) {
        auto newest = newest_seqno();
        if (!newest) return std::move(newest).error();
        auto seqno = stage_ == nullptr ? walk_back(*newest) : find_stage(*newest);
        if (seqno) found = Hit{*seqno};
    } else {
        auto indexed = from_index();
        if (!indexed) return std::move(indexed).error();
        found = *indexed;
        if (!found && !failure_) {
            low_ = ~std::uint64_t{0}, high_ = 0, seen_ = 0;
            auto scratch = open_source(source_.identity().location, {});
            if (!scratch) return std::move(scratch).error();
            auto s = (*scratch)->seek(Position::oldest());
            if (!s) return std::move(s).error();
            found = scan_forward(**scratch, stage_ == nullptr);
        }
    }
    if (failure_) return std::move(*failure_);
    if (found) return *found;
    return not_found();
}

// Does `e` (an opening event, or the stage's event) name the instance asked for?
bool SpanSearch::matches(const Held& e) {
    const std::string& label_path = stage_ ? stage_->label : span_.label;
    const std::string& id_path = stage_ ? stage_->id : span_.id;
    if (auto label = fields_.unsigned_at(e, label_path)) {
        low_ = std::min(low_, *label);
        high_ = std::max(high_, *label);
        ++seen_;
    }
    switch (ref_.pick) {
    case SpanRef::Pick::Latest: return true;
    case SpanRef::Pick::Label: return fields_.unsigned_at(e, label_path) == ref_.label;
    case SpanRef::Pick::Id: return fields_.bytes_start_with(e, id_path, ref_.id);
    }
    return false;
}

// Reads `source` to its end (or until it has nothing ready) for the asked-for
// instance's event; `latest` and an id keep the last one (the newest).
std::optional<Hit> SpanSearch::scan_forward(EventSource& source, bool openings) {
    std::optional<Hit> last;
    SourceItem item;
    for (;;) {
        const SourceStep step = source.next(item, PayloadRead::Copy);
        if (step == SourceStep::Failed) {
            failure_ = source.error();
            return std::nullopt;
        }
        if (step == SourceStep::End || step == SourceStep::NotReady) return last;
        if (step != SourceStep::Event) continue;
        const EventDescriptor& d = item.event.descriptor;
        if (openings ? !opens(d) : !marks_stage(d)) continue;
        Held h;
        h.d = d;
        h.payload.assign(item.event.payload.begin(), item.event.payload.end());
        if (!matches(h)) continue;
        const Hit hit{d.seqno, item.event.member};
        if (ref_.pick == SpanRef::Pick::Label) return hit;
        last = hit;  // latest, and an id: the newest one
    }
}

Error SpanSearch::not_found() const {
    const std::string what = stage_ ? fmt::format("{} {}", span_.name, stage_->name) : span_.name;
    std::string asked;
    switch (ref_.pick) {
    case SpanRef::Pick::Latest: asked = fmt::format("no {} event", what); break;
    case SpanRef::Pick::Label: asked = fmt::format("no {} {}", what, ref_.label); break;
    case SpanRef::Pick::Id: asked = fmt::format("no {} with that id", what); break;
    }
    const std::string held = seen_ == 0 ? fmt::format("it holds no {} with a label", what)
                                        : fmt::format("its {} labels run from {} to {}", what, low_, high_);
    return Error(ENOENT, fmt::format("{}: {} in {} '{}' ({})", ref_.text, asked, describe(source_.kind()),
                                     source_.identity().path, held));
}

}  // namespace span_search

namespace {

using span_search::Hit;
using span_search::SpanSearch;

std::string names_of_spans(const Schema& schema) {
    std::string out;
    for (const auto& s : schema.spans()) out += (out.empty() ? "" : ", ") + s.name;
    return out.empty() ? "none" : out;
}

// resolve_span, with the member whose event it is (a ring set's: its seqnos are per member).
Result<Hit> resolve_hit(EventSource& source, const SpanRef& ref, const Schema& schema, std::string* notice) {
    const SchemaSpan* span = schema.span(ref.span);
    if (span == nullptr)
        return Error(EINVAL, fmt::format("{}: schema {} has no span '{}' (its spans: {})", ref.text,
                                         schema.content_name(), ref.span, names_of_spans(schema)));
    const SchemaSpanStage* stage = nullptr;
    if (!ref.stage.empty()) {
        stage = span->stage(ref.stage);
        if (stage == nullptr) {
            std::string names;
            for (const auto& s : span->stages) names += (names.empty() ? "" : ", ") + s.name;
            return Error(EINVAL, fmt::format("{}: span '{}' of schema {} has no stage '{}' (its stages: {})", ref.text,
                                             ref.span, schema.content_name(), ref.stage,
                                             names.empty() ? "none" : names));
        }
    }
    const std::string& label = stage ? stage->label : span->label;
    const std::string& id = stage ? stage->id : span->id;
    if (ref.pick == SpanRef::Pick::Label && label.empty())
        return Error(EINVAL, fmt::format("{}: span '{}' of schema {} declares no label field", ref.text, ref.span,
                                         schema.content_name()));
    if (ref.pick == SpanRef::Pick::Id && id.empty())
        return Error(EINVAL, fmt::format("{}: {} of schema {} declares no id field", ref.text,
                                         stage ? "the stage" : "the span", schema.content_name()));
    SpanSearch search(source, ref, schema, *span, stage);
    auto found = search.run();
    if (notice != nullptr) *notice = search.notice();
    return found;
}

}  // namespace

Result<std::uint64_t> resolve_span(EventSource& source, const SpanRef& ref, const Schema& schema, std::string* notice) {
    auto hit = resolve_hit(source, ref, schema, notice);
    if (!hit) return std::move(hit).error();
    return hit->seqno;
}

Result<std::string> seek_source(EventSource& source, const Position& start, const Schema* schema) {
    if (start.kind != Position::Kind::Span) return source.seek(start);
    std::optional<Schema> own;
    if (schema == nullptr) {
        auto found = resolve_schema(source);
        if (!found) return std::move(found).error();
        if (!found->schema)
            return Error(EINVAL, fmt::format("{}: a span position needs a schema, and {} '{}' has none (give --schema "
                                             "FILE)", start.span.text, describe(source.kind()),
                                             source.identity().path));
        own = std::move(found->schema);
        schema = &*own;
    }
    std::string how;
    auto hit = resolve_hit(source, start.span, *schema, &how);
    if (!hit) return std::move(hit).error();
    // A ring set counts per member: its position is MEMBER:SEQNO.
    const bool members = source.identity().members && hit->member != Position::kAnyMember;
    auto notice = source.seek(members ? Position::member_seqno(hit->member, hit->seqno) : Position::seqno(hit->seqno));
    if (!notice || how.empty()) return notice;
    return notice->empty() ? how : how + "; " + *notice;
}

}  // namespace evring
