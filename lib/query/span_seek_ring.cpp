// Span positions on rings and snapshots (span_search.hpp): from the newest
// event back along the opener flow tag, one or two reads per span instance;
// a stage forward from its instance's opening event.
#include <fmt/format.h>

#include "query/span_search.hpp"

namespace evring::span_search {

// The event at `seqno`, or nullopt when the source no longer (or never) held it.
std::optional<Held> SpanSearch::read_at(std::uint64_t seqno) {
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

Result<std::uint64_t> SpanSearch::newest_seqno() {
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
std::optional<std::uint64_t> SpanSearch::walk_back(std::uint64_t from) {
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
std::optional<std::uint64_t> SpanSearch::find_stage(std::uint64_t newest) {
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

}  // namespace evring::span_search
