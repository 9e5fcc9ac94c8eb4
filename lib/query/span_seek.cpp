// Span positions (span_seek.hpp): walking back along the opener flow tag on
// rings and snapshots, a forward scan of a second source elsewhere.
#include "query/span_seek.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "recording/recording_index.hpp"
#include "source/recording_source.hpp"
#include "evring/schema/schema_resolve.hpp"
#include "evring/source/source_open.hpp"

namespace evring {
namespace {

// An event copied out of the source (its payload is valid only until the next call).
struct Held {
    EventDescriptor d{};
    std::vector<std::byte> payload;
};

// The event a span position names: its seqno and, in a ring set, whose it is.
struct Hit {
    std::uint64_t seqno = 0;
    std::uint32_t member = Position::kAnyMember;
};

// Reads fields named by dotted paths out of payloads, bounds-checked.
class FieldReader {
public:
    explicit FieldReader(const Schema& schema) : schema_(schema) {}

    std::optional<std::uint64_t> unsigned_at(const Held& e, const std::string& path) const {
        auto field = locate(e, path);
        if (!field) return std::nullopt;
        const SchemaType& t = schema_.type(field->type);
        std::uint64_t v = 0;
        std::memcpy(&v, e.payload.data() + field->offset, std::min<std::size_t>(t.size, 8));  // little-endian
        return v;
    }
    bool bytes_start_with(const Held& e, const std::string& path, const std::vector<std::uint8_t>& prefix) const {
        auto field = locate(e, path);
        if (!field) return false;
        const SchemaType& t = schema_.type(field->type);
        return prefix.size() <= t.size && std::memcmp(e.payload.data() + field->offset, prefix.data(), prefix.size()) == 0;
    }

    std::size_t size_of(std::uint16_t type, const std::string& path) const {
        const SchemaEvent* event = schema_.event(type);
        if (event == nullptr || path.empty()) return 0;
        auto field = schema_.find_field(*event, path);
        return field ? schema_.type(field->type).size : 0;
    }

private:
    std::optional<SchemaFieldRef> locate(const Held& e, const std::string& path) const {
        const SchemaEvent* event = schema_.event(e.d.event_type);
        if (event == nullptr || path.empty()) return std::nullopt;
        auto field = schema_.find_field(*event, path);
        if (!field) return std::nullopt;
        const SchemaType& t = schema_.type(field->type);
        if (std::size_t{field->offset} + t.size > e.payload.size()) return std::nullopt;
        return field;
    }
    const Schema& schema_;
};

class SpanSearch {
public:
    SpanSearch(EventSource& source, const SpanRef& ref, const Schema& schema, const SchemaSpan& span,
               const SchemaSpanStage* stage)
        : source_(source), ref_(ref), span_(span), stage_(stage), fields_(schema) {}

    Result<Hit> run() {
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

    // What a person is told about how the position was found (a recording
    // without an index, or whose index lies, is read from the start).
    const std::string& notice() const { return notice_; }

private:
    // A recording's span index (recording_index.hpp) names the event, or
    // where the unindexed rest of the file starts. A named event is read on
    // its own and checked (the right type, the label or id asked for); the
    // rest is read from where it starts. nullopt: read from the start (no
    // index, an index that lies, or nothing found).
    Result<std::optional<Hit>> from_index() {
        auto* recording = dynamic_cast<RecordingSource*>(&source_);
        if (recording == nullptr) return std::optional<Hit>();
        const std::uint32_t key = span_index_key(span_.name, stage_ ? std::string_view(stage_->name) : "");
        if (ref_.pick == SpanRef::Pick::Id) return from_id_index(*recording, key);
        const IndexQuery query = ref_.pick == SpanRef::Pick::Latest ? IndexQuery::span_latest(key)
                                                                    : IndexQuery::span(key, ref_.label);
        auto answer = recording->span_index(query, notice_);
        if (!answer) return std::move(answer).error();
        if (source_.identity().members) return from_set_index(*recording, *answer);
        if (answer->outcome == IndexOutcome::Found && ref_.pick == SpanRef::Pick::Label) {
            auto checked = indexed_event_is_it(*recording, *answer);
            if (!checked) return std::move(checked).error();
            if (*checked) return std::optional<Hit>(Hit{answer->seqno});
            return std::optional<Hit>();
        }
        if (answer->outcome != IndexOutcome::Found && answer->outcome != IndexOutcome::Tail)
            return std::optional<Hit>();
        // Latest reads on from its mark to the end; a label past the index, the tail.
        auto found = scan_from(Position::seqno(answer->seqno));
        if (!found) return std::move(found).error();
        if (answer->outcome == IndexOutcome::Found && !*found) {
            distrust(answer->seqno);
            return std::optional<Hit>();
        }
        return *found;
    }

    // A ring set recording: a mark's seqno is some member's own, so each of
    // its candidates (IndexAnswer::candidates) is read and checked; the one
    // that is the event asked for gives the member. Two that are, in one
    // block: the index cannot tell which comes first, so a scan decides. The
    // unindexed tail of a file being written is read from the start too (its
    // seqnos do not say where it begins).
    Result<std::optional<Hit>> from_set_index(RecordingSource& recording, const IndexAnswer& answer) {
        if (answer.outcome != IndexOutcome::Found) return std::optional<Hit>();
        const bool latest = ref_.pick == SpanRef::Pick::Latest;
        const std::vector<IndexedBlock>& candidates = answer.candidates;
        std::optional<Hit> hit;
        std::uint64_t hit_block = 0;
        std::string why;
        for (std::size_t j = 0; j < candidates.size(); ++j) {
            const IndexedBlock& block = candidates[latest ? candidates.size() - 1 - j : j];
            if (hit && block.offset != hit_block) break;
            IndexAnswer one;
            one.outcome = IndexOutcome::Found;
            one.block = block;
            one.seqno = answer.seqno;
            Record record;
            std::vector<std::byte> payload;
            auto read = recording.span_event(one, record, payload, why);
            if (!read) return std::move(read).error();
            if (!*read) continue;
            Held h{record.event, std::move(payload)};
            if (!((stage_ ? marks_stage(h.d) : opens(h.d)) && matches(h))) continue;
            if (hit) return std::optional<Hit>();  // two in one block
            hit = Hit{h.d.seqno, block.member};
            hit_block = block.offset;
        }
        if (!hit) {
            distrust(answer.seqno, why);
            return hit;
        }
        if (!latest) return hit;
        // Latest reads on from its mark to the end.
        auto found = scan_from(Position::member_seqno(hit->member, hit->seqno));
        if (!found) return std::move(found).error();
        if (!*found) distrust(answer.seqno);
        return *found;
    }

    // An id: a mark keeps 32 bits of it (span_id_digest), so each mark that
    // agrees is a candidate, checked newest first; the unindexed tail of a
    // file being written goes first (it is newer).
    Result<std::optional<Hit>> from_id_index(RecordingSource& recording, std::uint32_t key) {
        constexpr int kMaxCandidates = 16;
        std::uint64_t below = 0;
        for (int tries = 0; tries < kMaxCandidates; ++tries) {
            auto answer = recording.span_index(IndexQuery::span_id(key, ref_.id, ref_.id.size() == id_size(), below),
                                               notice_);
            if (!answer) return std::move(answer).error();
            if (answer->outcome == IndexOutcome::Tail) {
                auto found = scan_from(Position::seqno(answer->seqno));
                if (!found || *found) return found;
                if (answer->seqno == 0) return std::optional<Hit>();
                below = answer->seqno;
                continue;
            }
            if (answer->outcome != IndexOutcome::Found) return std::optional<Hit>();
            Record record;
            std::vector<std::byte> payload;
            std::string why;
            auto read = recording.span_event(*answer, record, payload, why);
            if (!read) return std::move(read).error();
            if (!*read) {
                distrust(answer->seqno, why);
                return std::optional<Hit>();
            }
            Held h{record.event, std::move(payload)};
            if ((stage_ ? marks_stage(h.d) : opens(h.d)) && matches(h)) return std::optional<Hit>(Hit{h.d.seqno});
            below = answer->seqno;  // another id with the same first bytes: the next older candidate
        }
        if (notice_.empty())
            notice_ = fmt::format("{}: more than {} span marks of recording '{}' agree with that id as far as the "
                                  "index keeps it; reading it from the start",
                                  ref_.text, kMaxCandidates, source_.identity().path);
        return std::optional<Hit>();
    }

    // The size of the span's (or stage's) id field in its first event type that has it (0: none).
    std::size_t id_size() const {
        const std::string& path = stage_ ? stage_->id : span_.id;
        if (stage_ != nullptr) return fields_.size_of(stage_->event, path);
        for (const std::uint16_t type : span_.begin)
            if (const std::size_t n = fields_.size_of(type, path); n > 0) return n;
        return 0;
    }

    // The event a label's mark names, read on its own: is it that instance?
    Result<bool> indexed_event_is_it(RecordingSource& recording, const IndexAnswer& answer) {
        Record record;
        std::vector<std::byte> payload;
        std::string why;
        auto read = recording.span_event(answer, record, payload, why);
        if (!read) return std::move(read).error();
        if (*read) {
            Held h{record.event, std::move(payload)};
            if ((stage_ ? marks_stage(h.d) : opens(h.d)) && matches(h)) return true;
        }
        distrust(answer.seqno, why);
        return false;
    }

    // Reads a second source from `start` on for the instance's event.
    Result<std::optional<Hit>> scan_from(const Position& start) {
        auto scratch = open_source(source_.identity().location, {});
        if (!scratch) return std::move(scratch).error();
        auto s = (*scratch)->seek(start);
        if (!s) return std::optional<Hit>();  // past the newest event: nothing there
        return scan_forward(**scratch, stage_ == nullptr);
    }

    void distrust(std::uint64_t seqno, const std::string& why = {}) {
        if (!notice_.empty()) return;
        notice_ = fmt::format("{}: the index of recording '{}' names seqno {}, which is not that event{} (the "
                              "index is not trusted); reading it from the start",
                              ref_.text, source_.identity().path, seqno, why.empty() ? "" : " (" + why + ")");
    }

    bool opens(const EventDescriptor& d) const {
        return std::find(span_.begin.begin(), span_.begin.end(), d.event_type) != span_.begin.end();
    }
    bool marks_stage(const EventDescriptor& d) const { return stage_ != nullptr && d.event_type == stage_->event; }

    // Does `e` (an opening event, or the stage's event) name the instance asked for?
    bool matches(const Held& e) {
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

    // The event at `seqno`, or nullopt when the source no longer (or never) held it.
    std::optional<Held> read_at(std::uint64_t seqno) {
        if (seqno == 0) return std::nullopt;
        auto moved = source_.seek(Position::seqno(seqno));
        if (!moved) return std::nullopt;
        SourceItem item;
        for (int tries = 0; tries < 4; ++tries) {
            switch (source_.next(item, PayloadRead::Copy)) {
            case SourceStep::Event: {
                if (item.event.descriptor.seqno != seqno) return std::nullopt;
                Held h;
                h.d = item.event.descriptor;
                h.payload.assign(item.event.payload.begin(), item.event.payload.end());
                return h;
            }
            case SourceStep::Gap:
            case SourceStep::Notice: continue;
            case SourceStep::Failed: failure_ = source_.error(); return std::nullopt;
            default: return std::nullopt;
            }
        }
        return std::nullopt;
    }

    Result<std::uint64_t> newest_seqno() {
        auto moved = source_.seek(Position{Position::Kind::Back, 1});
        if (!moved) return std::move(moved).error();
        SourceItem item;
        for (int tries = 0; tries < 4; ++tries) {
            const SourceStep step = source_.next(item, PayloadRead::None);
            if (step == SourceStep::Event) return item.event.descriptor.seqno;
            if (step == SourceStep::Failed) return source_.error();
            if (step != SourceStep::Gap && step != SourceStep::Notice) break;
        }
        return Error(ENOENT, fmt::format("{}: {} '{}' holds no events", ref_.text, describe(source_.kind()),
                                         source_.identity().path));
    }

    // From `from` back: at each instance, its opening event (the event itself
    // or the one its opener tag points to), then the event before it.
    std::optional<std::uint64_t> walk_back(std::uint64_t from) {
        std::uint64_t s = from;
        while (s > 0 && !failure_) {
            auto e = read_at(s);
            if (!e) return std::nullopt;  // older than the oldest event held
            std::uint64_t opener = 0;
            if (opens(e->d)) {
                opener = s;
            } else if (span_.opener && e->d.content_ext[*span_.opener] != 0 && e->d.content_ext[*span_.opener] < s) {
                opener = e->d.content_ext[*span_.opener];
                e = read_at(opener);
                if (!e || !opens(e->d)) return std::nullopt;  // overwritten, or a tag that lies
            } else {
                --s;  // between instances
                continue;
            }
            if (matches(*e)) return opener;
            s = opener - 1;
        }
        return std::nullopt;
    }

    // The stage's event: forward from the instance's opening event when it
    // is still held, else from the oldest event; `latest` walks back.
    std::optional<std::uint64_t> find_stage(std::uint64_t newest) {
        if (ref_.pick == SpanRef::Pick::Latest) {
            for (std::uint64_t s = newest; s > 0 && !failure_; --s) {
                auto e = read_at(s);
                if (!e) return std::nullopt;
                if (marks_stage(e->d) && matches(*e)) return s;
            }
            return std::nullopt;
        }
        std::optional<std::uint64_t> start;
        if (!span_.label.empty() || !span_.id.empty()) {
            const SchemaSpanStage* stage = stage_;
            stage_ = nullptr;  // the instance itself first
            start = walk_back(newest);
            stage_ = stage;
            low_ = ~std::uint64_t{0}, high_ = 0, seen_ = 0;
        }
        auto moved = source_.seek(start ? Position::seqno(*start) : Position::oldest());
        if (!moved) return std::nullopt;
        if (auto hit = scan_forward(source_, false); hit || start == std::nullopt) return seqno_of(hit);
        if (!source_.seek(Position::oldest())) return std::nullopt;
        return seqno_of(scan_forward(source_, false));
    }

    static std::optional<std::uint64_t> seqno_of(const std::optional<Hit>& hit) {
        return hit ? std::optional<std::uint64_t>(hit->seqno) : std::nullopt;
    }

    // Reads `source` to its end (or until it has nothing ready) for the asked-for
    // instance's event; `latest` and an id keep the last one (the newest).
    std::optional<Hit> scan_forward(EventSource& source, bool openings) {
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

    Error not_found() const {
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

    EventSource& source_;
    const SpanRef& ref_;
    const SchemaSpan& span_;
    const SchemaSpanStage* stage_;
    FieldReader fields_;
    std::optional<Error> failure_;
    std::string notice_;
    std::uint64_t low_ = ~std::uint64_t{0}, high_ = 0, seen_ = 0;
};

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
