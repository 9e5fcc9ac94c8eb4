// Private to lib/query: the search behind span_seek.hpp's positions (SPAN:LABEL,
// SPAN:latest, SPAN:0xID, SPAN.STAGE:...), one object per lookup. Its three
// ways in, by the source:
//   span_seek.cpp        the scan of a second source from its oldest event (and
//                        the API: resolve_span, seek_source);
//   span_seek_ring.cpp   rings and snapshots: back along the opener flow tag;
//   span_seek_index.cpp  recordings: through their span index.
//
// Thread safety: as the source (one thread).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "evring/error.hpp"
#include "evring/schema/schema.hpp"
#include "evring/source/event_source.hpp"
#include "evring/source/position.hpp"
#include "recording/recording_index.hpp"

namespace evring {

class RecordingSource;

namespace span_search {

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

    Result<Hit> run();

    // What a person is told about how the position was found (a recording
    // without an index, or whose index lies, is read from the start).
    const std::string& notice() const { return notice_; }

private:
    // span_seek.cpp

    bool opens(const EventDescriptor& d) const {
        return std::find(span_.begin.begin(), span_.begin.end(), d.event_type) != span_.begin.end();
    }
    bool marks_stage(const EventDescriptor& d) const { return stage_ != nullptr && d.event_type == stage_->event; }

    // Does `e` (an opening event, or the stage's event) name the instance asked for?
    bool matches(const Held& e);

    // Reads `source` to its end (or until it has nothing ready) for the asked-for
    // instance's event; `latest` and an id keep the last one (the newest).
    std::optional<Hit> scan_forward(EventSource& source, bool openings);

    static std::optional<std::uint64_t> seqno_of(const std::optional<Hit>& hit) {
        return hit ? std::optional<std::uint64_t>(hit->seqno) : std::nullopt;
    }

    // The error for an instance no event is: what was asked, and the labels seen.
    Error not_found() const;

    // span_seek_ring.cpp

    // The event at `seqno`, or nullopt when the source no longer (or never) held it.
    std::optional<Held> read_at(std::uint64_t seqno);

    // The newest event's seqno (an error when the source holds none).
    Result<std::uint64_t> newest_seqno();

    // From `from` back: at each instance, its opening event (the event itself
    // or the one its opener tag points to), then the event before it.
    std::optional<std::uint64_t> walk_back(std::uint64_t from);

    // The stage's event: forward from the instance's opening event when it
    // is still held, else from the oldest event; `latest` walks back.
    std::optional<std::uint64_t> find_stage(std::uint64_t newest);

    // span_seek_index.cpp

    // A recording's span index (recording_index.hpp) names the event, or
    // where the unindexed rest of the file starts. A named event is read on
    // its own and checked (the right type, the label or id asked for); the
    // rest is read from where it starts. nullopt: read from the start (no
    // index, an index that lies, or nothing found).
    Result<std::optional<Hit>> from_index();

    // A ring set recording: a mark's seqno is some member's own, so each of
    // its candidates (IndexAnswer::candidates) is read and checked; the one
    // that is the event asked for gives the member. Two that are, in one
    // block: the index cannot tell which comes first, so a scan decides. The
    // unindexed tail of a file being written is read from the start too (its
    // seqnos do not say where it begins).
    Result<std::optional<Hit>> from_set_index(RecordingSource& recording, const IndexAnswer& answer);

    // An id: a mark keeps 32 bits of it (span_id_digest), so each mark that
    // agrees is a candidate, checked newest first; the unindexed tail of a
    // file being written goes first (it is newer).
    Result<std::optional<Hit>> from_id_index(RecordingSource& recording, std::uint32_t key);

    // The size of the span's (or stage's) id field in its first event type that has it (0: none).
    std::size_t id_size() const;

    // The event a label's mark names, read on its own: is it that instance?
    Result<bool> indexed_event_is_it(RecordingSource& recording, const IndexAnswer& answer);

    // Reads a second source from `start` on for the instance's event.
    Result<std::optional<Hit>> scan_from(const Position& start);

    // The notice for an index that named the wrong event (the first reason only).
    void distrust(std::uint64_t seqno, const std::string& why = {});

    EventSource& source_;
    const SpanRef& ref_;
    const SchemaSpan& span_;
    const SchemaSpanStage* stage_;
    FieldReader fields_;
    std::optional<Error> failure_;
    std::string notice_;
    std::uint64_t low_ = ~std::uint64_t{0}, high_ = 0, seen_ = 0;
};

}  // namespace span_search
}  // namespace evring
