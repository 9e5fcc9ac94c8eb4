// tools/evring/export/export_timeline.hpp — how `evring export` lays events out on a
// timeline: the follow loop's sink (evring/source/follow.hpp) that turns events into
// tracks, instants, slices and counter samples for one or more TraceWriters
// (export_trace.hpp).
//
// Layout (docs/operations.md, "Export"):
// - a root track named after the source; under it one track per event type
//   (named from the schema) or, with TrackBy::Flow, one per value of a flow
//   tag ("block 1234", "no block" for 0), created when first used. Every
//   event is an instant on its track, its payload decoded into arguments.
// - the schema's spans ([span.NAME]: a begin event, an end event, key flow
//   tags): each open span instance is a slice on a lane of its span's group
//   ("block" > "block lane 0", ...). An instance takes the lowest free lane,
//   so a lane holds one open slice at a time and slices on a track always
//   nest; a txn slice lies inside its block's slice in time. An end closes
//   the open instance with the same key values; an end with none is counted
//   (the begin was before the export started); a second begin for an open
//   key closes the first as unfinished; instances still open at the end are
//   closed at the last event's time, marked unfinished.
// - counter tracks: "event rate" (events/s of the exported events per
//   rate interval, a zero after an empty interval) and "lost events" (the
//   sequence numbers in gaps so far, any reason).
// Memory: what is open (spans, lanes) and one entry per track (at most
// kMaxFlowTracks flow-value tracks; later values share one); nothing per
// event. Open spans are capped (kMaxOpenSpans per span) so a stream of begins
// without ends cannot grow it: past the cap begins are counted, not drawn.
//
// Thread safety: one thread.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "evring/source/follow.hpp"
#include "evring/schema/schema.hpp"
#include "export/export_trace.hpp"

namespace evring::cli {

struct TimelineOptions {
    enum class TrackBy : std::uint8_t { Type, Flow };
    TrackBy track_by = TrackBy::Type;
    std::size_t flow_index = 0;                      // TrackBy::Flow: content_ext[flow_index]
    std::uint64_t rate_interval_nanos = 10'000'000;  // the event rate's bucket
    std::string root_name;                           // "evring /dev/shm/feed"
    bool stop_when_caught_up = true;                 // a live ring: export what is there, then stop
};

struct TimelineStats {
    std::uint64_t events = 0;
    std::uint64_t tracks = 0;
    std::uint64_t slices = 0;             // begun (each also ended)
    std::uint64_t unfinished = 0;         // closed at the end or by a second begin
    std::uint64_t ends_without_begin = 0;
    std::uint64_t spans_over_cap = 0;
    std::uint64_t counter_samples = 0;
    std::uint64_t lost = 0;               // seqnos in gaps
    // Packets (Perfetto) / trace events: tracks + events + 2 x slices + counter samples.
    std::uint64_t records() const noexcept { return tracks + events + 2 * slices + counter_samples; }
};

inline constexpr std::size_t kMaxOpenSpans = 65536;
inline constexpr std::size_t kMaxLanes = 4096;
// --track-by flow: values past this many share the track "other TAG values".
inline constexpr std::size_t kMaxFlowTracks = 65536;

class Timeline final : public FollowSink {
public:
    // `schema` may be null (events named by number, payloads in hex).
    Timeline(std::vector<TraceWriter*> writers, const Schema* schema, std::uint16_t content_type,
             TimelineOptions options);

    bool event(const SourceEvent& event) override;
    bool gap(const SourceGap& gap) override;
    bool idle() override { return !options_.stop_when_caught_up; }

    // Closes what is open, writes the last counter samples, finishes every writer.
    Status finish();
    const TimelineStats& stats() const noexcept { return stats_; }
    const std::array<std::string, 4>& flow_names() const noexcept { return flow_names_; }

private:
    using Key = std::array<std::uint64_t, 4>;
    struct KeyHash {
        std::size_t operator()(const Key& k) const noexcept;
    };
    struct OpenSpan {
        std::uint32_t lane;
    };
    struct SpanState {
        const SchemaSpan* span = nullptr;
        std::uint64_t group = 0;                 // the group track's uuid
        std::vector<std::uint64_t> lanes;        // lane track uuids
        std::set<std::uint32_t> free_lanes;
        std::unordered_map<Key, OpenSpan, KeyHash> open;
    };
    struct Role {
        std::uint32_t span;
        bool begin;
    };

    void declare(TrackInfo track);
    std::uint64_t event_track(const EventDescriptor& d);
    const std::string& event_name(std::uint16_t type);
    void end_spans(const SourceEvent& event, const EventArgs& args);
    void begin_spans(const SourceEvent& event, const EventArgs& args);
    std::optional<std::uint32_t> take_lane(SpanState& state);
    Key key_of(const SchemaSpan& span, const EventDescriptor& d) const;
    void count_rate(std::uint64_t nanos);
    void sample(std::uint64_t track, std::uint64_t nanos, double value);
    void maybe_flush();

    std::vector<TraceWriter*> writers_;
    const Schema* schema_;
    std::uint16_t content_type_;
    TimelineOptions options_;
    std::array<std::string, 4> flow_names_;
    TimelineStats stats_;

    std::uint64_t root_ = 1;
    std::uint64_t rate_track_ = 2;
    std::uint64_t lost_track_ = 3;
    std::uint64_t next_uuid_ = 16;
    std::uint64_t overflow_track_ = 0;
    std::unordered_map<std::uint64_t, std::uint64_t> event_tracks_;
    std::unordered_map<std::uint16_t, std::string> names_;  // type or flow value -> uuid
    std::vector<SpanState> spans_;
    std::unordered_map<std::uint16_t, std::vector<Role>> roles_;  // event type -> span roles

    bool started_ = false;
    std::uint64_t last_nanos_ = 0;
    std::uint64_t bucket_ = 0;        // start of the current rate bucket
    std::uint64_t bucket_count_ = 0;
    bool lost_pending_ = false;
    std::uint32_t since_flush_ = 0;
};

}  // namespace evring::cli
