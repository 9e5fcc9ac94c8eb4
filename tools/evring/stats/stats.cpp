// evring stats (stats_cmd.hpp): a FollowSink that tallies, then one table or
// one JSON object. A live ring is summarised up to the newest event when the
// command starts reading (the loop stops when caught up).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "commands.hpp"
#include "output/event_format.hpp"
#include "query/where.hpp"
#include "output/json.hpp"
#include "open.hpp"
#include "output/output.hpp"
#include "stats/stats_by.hpp"
#include "stats/stats_cmd.hpp"
#include "ops/stop.hpp"
#include "output/values.hpp"

namespace evring::cli {
namespace {

struct TypeTally {
    std::uint64_t events = 0;
    std::uint64_t bytes = 0;
};

// Instances of one schema span: opened by a begin event, closed by the next
// end event with the same key flow tags.
struct SpanTally {
    const SchemaSpan* span = nullptr;
    std::map<std::array<std::uint64_t, 4>, std::uint64_t> open;  // key -> begin time
    std::uint64_t opened = 0, closed = 0;
    std::uint64_t min = ~std::uint64_t{0}, max = 0, total = 0;

    std::array<std::uint64_t, 4> key(const EventDescriptor& d) const {
        std::array<std::uint64_t, 4> k{};
        for (auto i : span->key) k[i] = d.content_ext[i];
        return k;
    }
    void see(const EventDescriptor& d) {
        if (std::find(span->begin.begin(), span->begin.end(), d.event_type) != span->begin.end()) {
            ++opened;
            if (open.size() < 100000) open[key(d)] = d.record_epoch_nanos;  // bounded: a stream of unclosed spans
        } else if (std::find(span->end.begin(), span->end.end(), d.event_type) != span->end.end()) {
            auto it = open.find(key(d));
            if (it == open.end()) return;
            const std::uint64_t took = d.record_epoch_nanos >= it->second ? d.record_epoch_nanos - it->second : 0;
            open.erase(it);
            ++closed;
            min = std::min(min, took);
            max = std::max(max, took);
            total += took;
        }
    }
};

class StatsSink final : public FollowSink {
public:
    StatsSink(const Schema* schema, GroupedStats* grouped) : grouped_(grouped) {
        if (schema != nullptr)
            for (const auto& s : schema->spans()) spans_.push_back(SpanTally{&s, {}, 0, 0, ~std::uint64_t{0}, 0, 0});
    }
    bool event(const SourceEvent& e) override {
        const EventDescriptor& d = e.descriptor;
        TypeTally& t = types_[d.event_type];
        ++t.events;
        t.bytes += d.payload_size;
        if (events_ == 0) { first_seqno_ = d.seqno; first_nanos_ = d.record_epoch_nanos; }
        last_seqno_ = d.seqno;
        last_nanos_ = std::max(last_nanos_, d.record_epoch_nanos);
        first_nanos_ = std::min(first_nanos_, d.record_epoch_nanos);
        ++events_;
        bytes_ += d.payload_size;
        for (auto& s : spans_) s.see(d);
        if (grouped_ != nullptr) grouped_->add(e);
        return true;
    }
    bool gap(const SourceGap& g) override {
        ++gaps_;
        gap_seqnos_ += g.count;
        return true;
    }
    bool idle() override { return false; }  // caught up: summarise what is there

    std::string json(const Schema* schema, const std::string& path) const {
        std::string types = "[";
        for (const auto& [type, t] : types_) {
            JsonObject o;
            o.number("type", type);
            const SchemaEvent* e = schema ? schema->event(type) : nullptr;
            if (e) o.string("name", e->name);
            else o.null("name");
            o.number("events", t.events).number("bytes", t.bytes);
            types += (types.size() > 1 ? "," : "") + o.text();
        }
        types += "]";
        std::string spans = "[";
        for (const auto& s : spans_) {
            JsonObject o;
            o.string("name", s.span->name).number("opened", s.opened).number("closed", s.closed);
            if (s.closed > 0)
                o.number("min_nanos", s.min).number("mean_nanos", s.total / s.closed).number("max_nanos", s.max);
            spans += (spans.size() > 1 ? "," : "") + o.text();
        }
        spans += "]";
        JsonObject o;
        o.string("source", path).number("events", events_).number("bytes", bytes_);
        if (events_ > 0) {
            o.number("first_seqno", first_seqno_).number("last_seqno", last_seqno_);
            o.string("first_time", utc_time(first_nanos_)).string("last_time", utc_time(last_nanos_));
            o.string("first_nanos", std::to_string(first_nanos_)).string("last_nanos", std::to_string(last_nanos_));
        }
        o.number("gaps", gaps_).number("gap_seqnos", gap_seqnos_);
        std::string text = o.text();
        text.pop_back();
        text += fmt::format(",\"events_per_second\":{:.3f},\"types\":{},\"spans\":{}}}", rate(), types, spans);
        return text;
    }

    // The first line of the table: the source, its events, range, rate and gaps.
    std::string headline(const std::string& path) const {
        std::string out = fmt::format("{}: {} events, {} payload bytes", path, events_, bytes_);
        if (events_ > 0)
            out += fmt::format(", seqno {}..{}, {} .. {} ({:.3f} s, {:.0f} events/s)", first_seqno_, last_seqno_,
                               utc_time(first_nanos_), utc_time(last_nanos_), seconds(), rate());
        return out + fmt::format("; {} gaps ({} seqnos)\n", gaps_, gap_seqnos_);
    }

    std::string table(const Schema* schema, const std::string& path) const {
        std::string out = headline(path);
        out += fmt::format("\n{:<28} {:>12} {:>14}\n", "TYPE", "EVENTS", "BYTES");
        for (const auto& [type, t] : types_) {
            const SchemaEvent* e = schema ? schema->event(type) : nullptr;
            out += fmt::format("{:<28} {:>12} {:>14}\n", e ? e->name : std::to_string(type), t.events, t.bytes);
        }
        if (!spans_.empty()) out += fmt::format("\n{:<12} {:>8} {:>8} {:>14} {:>14} {:>14}\n", "SPAN", "OPENED",
                                                "CLOSED", "MIN", "MEAN", "MAX");
        for (const auto& s : spans_) {
            if (s.closed == 0) {
                out += fmt::format("{:<12} {:>8} {:>8}\n", s.span->name, s.opened, s.closed);
                continue;
            }
            out += fmt::format("{:<12} {:>8} {:>8} {:>12.3f}us {:>12.3f}us {:>12.3f}us\n", s.span->name, s.opened,
                               s.closed, static_cast<double>(s.min) / 1e3,
                               static_cast<double>(s.total) / static_cast<double>(s.closed) / 1e3,
                               static_cast<double>(s.max) / 1e3);
        }
        return out;
    }

private:
    double seconds() const { return events_ > 1 ? static_cast<double>(last_nanos_ - first_nanos_) / 1e9 : 0; }
    double rate() const { return seconds() > 0 ? static_cast<double>(events_) / seconds() : 0; }

    GroupedStats* grouped_;
    std::map<std::uint16_t, TypeTally> types_;
    std::vector<SpanTally> spans_;
    std::uint64_t events_ = 0, bytes_ = 0, gaps_ = 0, gap_seqnos_ = 0;
    std::uint64_t first_seqno_ = 0, last_seqno_ = 0, first_nanos_ = ~std::uint64_t{0}, last_nanos_ = 0;
};

}  // namespace

Command add_stats(CLI::App& app) {
    auto options = std::make_shared<StatsOptions>();
    StatsOptions& o = *options;
    auto* c = app.add_subcommand("stats", "Count events by type, time range and rate, spans and gaps of a source");
    c->add_option("SOURCE", o.source, "Ring name or path, snapshot or recording")->required();
    o.select.add_range(*c);
    o.select.add_filters(*c);
    o.select.add_name(*c);
    o.heal.add(*c);
    c->add_option("--schema", o.schema_file, "Schema file for a source without one")->type_name("FILE");
    c->add_option("--by", o.by.by, "Figures per group: type, a span (block), a flow tag or a payload field")
        ->type_name("KEY");
    c->add_option("--field", o.by.fields, "With --by: count, sum, p50, p99 and max of a numeric payload field "
                                          "per group (repeatable)")
        ->type_name("PATH");
    auto* json = c->add_flag("--json", o.json, "One JSON object instead of a table");
    c->add_flag("--csv", o.csv, "The groups as CSV (--by type when no --by is given)")->excludes(json);
    return {c, [options] { return run_stats(*options); }};
}

namespace {

// The figures, as a table, JSON or CSV.
void print_stats(const StatsOptions& options, const StatsSink& sink, const GroupedStats& grouped,
                 const Schema* schema, const std::string& path) {
    if (options.csv) {
        fmt::print("{}", grouped.csv());
    } else if (options.json) {
        std::string text = sink.json(schema, path);
        if (!options.by.by.empty()) text.insert(text.size() - 1, ",\"by\":" + grouped.json());
        fmt::print("{}\n", text);
    } else {
        fmt::print("{}\n", options.by.by.empty() ? sink.table(schema, path)
                                                 : sink.headline(path) + '\n' + grouped.text());
    }
}

}  // namespace

int run_stats(StatsOptions& options) {
    FollowOptions follow;
    if (auto s = options.select.check(follow); !s) return usage_error(s.error());
    follow.stop_flag = &stop_flag();
    if (options.csv && options.by.by.empty()) options.by.by = "type";
    options.select.span_labels = !options.by.by.empty();  // --by block: the block's number
    ReadRequest request;
    request.location = options.source;
    request.selection = &options.select;
    if (auto s = options.heal.apply(request.source, options.select.name.has_value()); !s) return usage_error(s.error());
    if (!options.schema_file.empty()) request.schema_file = options.schema_file;
    std::unique_ptr<Reading> reading;
    if (int failed = open_selected(std::move(request), follow, reading); failed != kExitOk) return failed;
    Reading& r = *reading;
    auto grouped = GroupedStats::make(r.schema(), options.by, r.follow().span_labels);
    if (!grouped) return usage_error(grouped.error());
    if (grouped->needs_payloads()) r.follow().payloads = PayloadRead::Copy;
    install_stop_handlers();
    StatsSink sink(r.schema(), options.by.by.empty() ? nullptr : &*grouped);
    // --name: the events since the last run; committed once the result is printed.
    std::vector<std::string> notices;
    const Status resumed = r.resume_named(notices);
    for (const auto& notice : notices) report_error(notice);
    if (!resumed) return exit_code(resumed.error());
    auto result = r.run(sink, {}, CommitSink::kAtEnd);
    if (!result) return runtime_error(result.error());
    const std::string& path = r.source()->identity().path;
    grouped->finish();
    print_stats(options, sink, *grouped, r.schema(), path);
    if (auto s = commit_printed(r.named(), *result); !s) return runtime_error(s.error());
    if (!result->damaged) return kExitOk;
    return damaged_error(path, "the figures cover only what could be read (the damaged part counts as gaps)");
}

}  // namespace evring::cli
