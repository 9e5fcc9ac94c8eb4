// The timeline: tracks made on first use, spans matched by key onto lanes,
// rate and loss counters.
#include "export/export_timeline.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "output/event_format.hpp"

namespace evring::cli {

std::size_t Timeline::KeyHash::operator()(const Key& k) const noexcept {
    std::uint64_t h = 0x9e3779b97f4a7c15ull;
    for (std::uint64_t v : k) {
        h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        h *= 0xbf58476d1ce4e5b9ull;
    }
    return static_cast<std::size_t>(h ^ (h >> 31));
}

Timeline::Timeline(std::vector<TraceWriter*> writers, const Schema* schema, std::uint16_t content_type,
                   TimelineOptions options)
    : writers_(std::move(writers)), schema_(schema), content_type_(content_type), options_(std::move(options)) {
    for (std::size_t i = 0; i < 4; ++i) {
        const std::string* named = schema_ != nullptr ? &schema_->flow_tags()[i] : nullptr;
        flow_names_[i] = named != nullptr && !named->empty() ? *named : fmt::format("ext{}", i);
    }
    if (options_.rate_interval_nanos == 0) options_.rate_interval_nanos = 1;
    if (schema_ == nullptr) return;
    for (const SchemaSpan& span : schema_->spans()) {
        const auto index = static_cast<std::uint32_t>(spans_.size());
        spans_.push_back(SpanState{&span, 0, {}, {}, {}});
        for (std::uint16_t type : span.end) roles_[type].push_back(Role{index, false});
        for (std::uint16_t type : span.begin) roles_[type].push_back(Role{index, true});
    }
}

void Timeline::declare(TrackInfo track) {
    for (TraceWriter* w : writers_) w->track(track);
    ++stats_.tracks;
}

void Timeline::maybe_flush() {
    if (++since_flush_ < 256) return;
    since_flush_ = 0;
    for (TraceWriter* w : writers_) w->maybe_flush();
}

const std::string& Timeline::event_name(std::uint16_t type) {
    auto [it, inserted] = names_.try_emplace(type);
    if (!inserted) return it->second;
    const SchemaEvent* known = schema_ != nullptr ? schema_->event(type) : nullptr;
    if (known != nullptr) {
        it->second = known->name;
    } else {
        const std::string name = event_type_name(content_type_, type);
        it->second = name.find_first_not_of("0123456789") == std::string::npos ? "type " + name : name;
    }
    return it->second;
}

std::uint64_t Timeline::event_track(const EventDescriptor& d) {
    const bool by_flow = options_.track_by == TimelineOptions::TrackBy::Flow;
    const std::uint64_t value = by_flow ? d.content_ext[options_.flow_index] : d.event_type;
    if (auto it = event_tracks_.find(value); it != event_tracks_.end()) return it->second;
    const std::string& tag = flow_names_[options_.flow_index];
    if (by_flow && event_tracks_.size() >= kMaxFlowTracks) {
        // Past the cap every new value shares one track, so memory stays bounded.
        if (overflow_track_ == 0) {
            overflow_track_ = next_uuid_++;
            declare(TrackInfo{overflow_track_, root_, TrackInfo::Kind::Events, fmt::format("other {} values", tag), {}});
        }
        return overflow_track_;
    }
    auto [it, inserted] = event_tracks_.try_emplace(value, next_uuid_++);
    std::string name;
    if (!by_flow) name = event_name(d.event_type);
    else if (value == 0) name = fmt::format("no {}", tag);
    else name = fmt::format("{} {}", tag, value);
    declare(TrackInfo{it->second, root_, TrackInfo::Kind::Events, std::move(name), {}});
    return it->second;
}

Timeline::Key Timeline::key_of(const SchemaSpan& span, const EventDescriptor& d) const {
    Key key{};
    for (std::uint8_t tag : span.key) key[tag] = d.content_ext[tag];
    return key;
}

std::optional<std::uint32_t> Timeline::take_lane(SpanState& state) {
    if (!state.free_lanes.empty()) {
        const std::uint32_t lane = *state.free_lanes.begin();
        state.free_lanes.erase(state.free_lanes.begin());
        return lane;
    }
    if (state.lanes.size() == kMaxLanes) return std::nullopt;
    if (state.group == 0) {
        state.group = next_uuid_++;
        declare(TrackInfo{state.group, root_, TrackInfo::Kind::Group, state.span->name, {}});
    }
    const auto lane = static_cast<std::uint32_t>(state.lanes.size());
    state.lanes.push_back(next_uuid_++);
    declare(TrackInfo{state.lanes.back(), state.group, TrackInfo::Kind::Events,
                      fmt::format("{} lane {}", state.span->name, lane), {}});
    return lane;
}

void Timeline::end_spans(const SourceEvent& event, const EventArgs& args) {
    auto roles = roles_.find(event.descriptor.event_type);
    if (roles == roles_.end()) return;
    for (const Role& role : roles->second) {
        if (role.begin) continue;
        SpanState& state = spans_[role.span];
        auto open = state.open.find(key_of(*state.span, event.descriptor));
        if (open == state.open.end()) {
            ++stats_.ends_without_begin;
            continue;
        }
        for (TraceWriter* w : writers_) w->slice_end(state.lanes[open->second.lane], last_nanos_, args);
        state.free_lanes.insert(open->second.lane);
        state.open.erase(open);
    }
}

void Timeline::begin_spans(const SourceEvent& event, const EventArgs& args) {
    auto roles = roles_.find(event.descriptor.event_type);
    if (roles == roles_.end()) return;
    for (const Role& role : roles->second) {
        if (!role.begin) continue;
        SpanState& state = spans_[role.span];
        const Key key = key_of(*state.span, event.descriptor);
        if (auto open = state.open.find(key); open != state.open.end()) {
            // The end never came (lost, or filtered out): close the first as unfinished.
            const EventArgs note{nullptr, nullptr, nullptr, "unfinished: begun again"};
            for (TraceWriter* w : writers_) w->slice_end(state.lanes[open->second.lane], last_nanos_, note);
            ++stats_.unfinished;
            state.free_lanes.insert(open->second.lane);
            state.open.erase(open);
        }
        std::optional<std::uint32_t> lane;
        if (state.open.size() < kMaxOpenSpans) lane = take_lane(state);
        if (!lane) {
            ++stats_.spans_over_cap;
            continue;
        }
        for (TraceWriter* w : writers_) w->slice_begin(state.lanes[*lane], last_nanos_, state.span->name, args);
        ++stats_.slices;
        state.open.emplace(key, OpenSpan{*lane});
    }
}

void Timeline::sample(std::uint64_t track, std::uint64_t nanos, double value) {
    for (TraceWriter* w : writers_) w->counter(track, nanos, value);
    ++stats_.counter_samples;
}

void Timeline::count_rate(std::uint64_t nanos) {
    const std::uint64_t interval = options_.rate_interval_nanos;
    const std::uint64_t bucket = nanos - nanos % interval;
    const double per_second = 1e9 / static_cast<double>(interval);
    if (bucket > bucket_) {
        sample(rate_track_, bucket_, static_cast<double>(bucket_count_) * per_second);
        if (bucket > bucket_ + interval) sample(rate_track_, bucket_ + interval, 0);
        bucket_ = bucket;
        bucket_count_ = 0;
    }
    ++bucket_count_;
}

bool Timeline::event(const SourceEvent& event) {
    const std::uint64_t nanos = event.descriptor.record_epoch_nanos;
    if (!started_) {
        started_ = true;
        declare(TrackInfo{root_, 0, TrackInfo::Kind::Root, options_.root_name, {}});
        declare(TrackInfo{rate_track_, root_, TrackInfo::Kind::Counter, "event rate", "events/s"});
        declare(TrackInfo{lost_track_, root_, TrackInfo::Kind::Counter, "lost events", "events"});
        sample(lost_track_, nanos, static_cast<double>(stats_.lost));
        lost_pending_ = false;
        bucket_ = nanos - nanos % options_.rate_interval_nanos;
    }
    // Timestamps of several writers may step back a little; slices keep their order.
    last_nanos_ = std::max(last_nanos_, nanos);
    if (lost_pending_) {
        sample(lost_track_, last_nanos_, static_cast<double>(stats_.lost));
        lost_pending_ = false;
    }
    count_rate(last_nanos_);
    const EventArgs args{&event, schema_, &flow_names_, {}};
    const std::uint64_t track = event_track(event.descriptor);
    const std::string& name = event_name(event.descriptor.event_type);
    for (TraceWriter* w : writers_) w->instant(track, last_nanos_, name, args);
    ++stats_.events;
    end_spans(event, args);
    begin_spans(event, args);
    maybe_flush();
    return true;
}

bool Timeline::gap(const SourceGap& gap) {
    stats_.lost += gap.count;
    lost_pending_ = started_;
    return true;
}

Status Timeline::finish() {
    if (started_) {
        const EventArgs note{nullptr, nullptr, nullptr, "unfinished: still open at the end of the export"};
        for (SpanState& state : spans_) {
            // Close in lane order so the output does not depend on hashing.
            std::vector<std::uint32_t> lanes;
            for (const auto& [key, open] : state.open) lanes.push_back(open.lane);
            std::sort(lanes.begin(), lanes.end());
            for (std::uint32_t lane : lanes) {
                for (TraceWriter* w : writers_) w->slice_end(state.lanes[lane], last_nanos_, note);
                ++stats_.unfinished;
            }
            state.open.clear();
        }
        sample(rate_track_, bucket_, static_cast<double>(bucket_count_) * 1e9 /
                                         static_cast<double>(options_.rate_interval_nanos));
        if (lost_pending_) sample(lost_track_, last_nanos_, static_cast<double>(stats_.lost));
    }
    Status first;
    for (TraceWriter* w : writers_) {
        Status s = w->finish();
        if (!s && first) first = std::move(s);
    }
    return first;
}

}  // namespace evring::cli
