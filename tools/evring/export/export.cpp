// evring export: options, the source and its schema, the writers, then the
// library's follow loop with the Timeline as its sink.
#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "commands.hpp"
#include "output/escape.hpp"
#include "output/event_format.hpp"
#include "export/export_chrome.hpp"
#include "export/export_cmd.hpp"
#include "export/export_perfetto.hpp"
#include "export/export_timeline.hpp"
#include "open.hpp"
#include "output/output_file.hpp"
#include "ops/stop.hpp"
#include "output/values.hpp"

namespace evring::cli {
namespace {

struct ExportPlan {
    FollowOptions follow;
    SourceOptions source;
    TimelineOptions timeline;
    std::string track_flow;  // --track-by flow:NAME, resolved once the schema is known
};

Result<ExportPlan> plan_export(const ExportOptions& options) {
    ExportPlan plan;
    if (options.perfetto.empty() && options.chrome_json.empty())
        return Error(EINVAL, "export needs an output: --perfetto FILE and/or --chrome-json FILE");
    if (options.perfetto == options.chrome_json)
        return Error(EINVAL, fmt::format("--perfetto and --chrome-json both name '{}'", printable(options.perfetto)));
    if (auto s = options.select.check(plan.follow); !s) return std::move(s).error();
    if (options.track_by == "type") {
        plan.timeline.track_by = TimelineOptions::TrackBy::Type;
    } else if (options.track_by.starts_with("flow:") && options.track_by.size() > 5) {
        plan.timeline.track_by = TimelineOptions::TrackBy::Flow;
        plan.track_flow = options.track_by.substr(5);
    } else {
        return Error(EINVAL, fmt::format("bad --track-by '{}': expected type or flow:N (N a flow tag index 0-3 "
                                         "or its name in the schema)", printable(options.track_by)));
    }
    auto interval = parse_duration_nanos("--rate-interval", options.rate_interval);
    if (!interval) return std::move(interval).error();
    plan.timeline.rate_interval_nanos = *interval;
    if (options.max_snapshot_size) {
        auto size = parse_size("--max-snapshot-size", *options.max_snapshot_size);
        if (!size) return std::move(size).error();
        plan.source.max_snapshot_size = *size;
    }
    plan.follow.payloads = PayloadRead::Copy;
    plan.follow.stop_flag = &stop_flag();
    return plan;
}

// --track-by flow:NAME, once the schema is known.
Status resolve_track(ExportPlan& plan, const Schema* schema) {
    if (plan.timeline.track_by != TimelineOptions::TrackBy::Flow) return {};
    const std::string& tag = plan.track_flow;
    if (tag.size() == 1 && tag[0] >= '0' && tag[0] <= '3') {
        plan.timeline.flow_index = static_cast<std::size_t>(tag[0] - '0');
        return {};
    }
    if (schema != nullptr)
        if (auto index = schema->flow_tag(tag)) {
            plan.timeline.flow_index = *index;
            return {};
        }
    return Error(EINVAL, fmt::format("bad --track-by 'flow:{}': not a flow tag index 0-3 nor a flow tag of the "
                                     "source's schema", printable(tag)));
}

// The trace files: each written beside its path and put in place only when
// the export succeeded (output_file.hpp), never over the source itself.
struct Outputs {
    std::vector<OutputFile> files;
    std::vector<std::unique_ptr<TraceWriter>> writers;
    ~Outputs() { writers.clear(); }  // they flush into the files: first

    Status commit() {
        writers.clear();
        for (auto& f : files)
            if (auto s = f.commit(); !s) return s;
        return {};
    }
};

std::string summary(const TimelineStats& s, const ExportOptions& options, const Outputs& outputs, double seconds) {
    std::string text = fmt::format(
        "exported {} events in {:.3f} s ({:.0f} events/s): {} tracks, {} slices ({} unfinished, {} ends without a "
        "begin{}), {} counter samples, {} lost",
        s.events, seconds, seconds > 0 ? static_cast<double>(s.events) / seconds : 0.0, s.tracks, s.slices,
        s.unfinished, s.ends_without_begin,
        s.spans_over_cap != 0 ? fmt::format(", {} over the open-span cap", s.spans_over_cap) : std::string(),
        s.counter_samples, s.lost);
    std::size_t i = 0;
    if (!options.perfetto.empty()) {
        text += fmt::format("; perfetto '{}' ({} packets, {} bytes)", printable(options.perfetto),
                            outputs.writers[i]->records(), outputs.writers[i]->bytes());
        ++i;
    }
    if (!options.chrome_json.empty())
        text += fmt::format("; chrome-json '{}' ({} trace events, {} bytes)", printable(options.chrome_json),
                            outputs.writers[i]->records(), outputs.writers[i]->bytes());
    return text;
}

}  // namespace

Result<std::uint64_t> parse_duration_nanos(std::string_view option, std::string_view text) {
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
    const std::string_view unit = text.substr(digits);
    std::uint64_t scale = 0;
    if (unit == "ns") scale = 1;
    else if (unit == "us") scale = 1000;
    else if (unit == "ms") scale = 1000000;
    else if (unit == "s") scale = 1000000000;
    auto bad = [&](std::string_view why) {
        return Error(EINVAL, fmt::format("bad {} '{}': {}", option, printable(shortened(text)), why));
    };
    if (digits == 0 || scale == 0) return bad("expected a number and a unit: ns, us, ms or s (10ms)");
    if (digits > 12) return bad("longer than an hour");
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < digits; ++i) value = value * 10 + static_cast<std::uint64_t>(text[i] - '0');
    const std::uint64_t nanos = value * scale;
    if (nanos == 0) return bad("must be more than zero");
    if (nanos > 3600ull * 1000000000ull) return bad("longer than an hour");
    return nanos;
}

Command add_export(CLI::App& app) {
    auto options = std::make_shared<ExportOptions>();
    ExportOptions& o = *options;
    auto* c = app.add_subcommand("export", "Write a timeline of a ring, snapshot or recording for trace viewers");
    c->add_option("SOURCE", o.source, "Ring name or path, snapshot or recording")->required();
    c->add_option("--perfetto", o.perfetto, "Perfetto trace (protobuf) to write")->type_name("FILE");
    c->add_option("--chrome-json", o.chrome_json, "Chrome JSON trace to write")->type_name("FILE");
    o.select.add_range(*c, {.from = "oldest (default), latest, SEQNO, -N, or a time (2026-11-22T01:45:00Z, @EPOCH, -5s)"});
    o.select.add_filters(*c, {.where = "Only events this expression keeps (docs/cli.md, filter expressions)"});
    c->add_option("--track-by", o.track_by, "type (default: a track per event type) or flow:N (per value of "
                                            "flow tag N, an index 0-3 or the schema's name)");
    c->add_option("--schema", o.schema_file, "Schema file for a source without one")->type_name("FILE");
    c->add_option("--rate-interval", o.rate_interval, "Bucket of the event-rate counter (default 10ms)")
        ->type_name("DURATION");
    c->add_option("--max-snapshot-size", o.max_snapshot_size, kMaxSnapshotSizeHelp)->type_name("SIZE");
    return {c, [options] { return run_export(*options); }};
}

int run_export(ExportOptions& options) {
    auto plan = plan_export(options);
    if (!plan) return usage_error(plan.error());
    ReadRequest request;
    request.location = options.source;
    request.source = plan->source;
    request.selection = &options.select;
    if (!options.schema_file.empty()) request.schema_file = options.schema_file;
    std::unique_ptr<Reading> reading;
    if (int failed = open_selected(std::move(request), plan->follow, reading); failed != kExitOk) return failed;
    Reading& r = *reading;
    const SourceIdentity& identity = r.source()->identity();
    const Schema* decoder = r.schema();
    if (auto s = resolve_track(*plan, decoder); !s) return usage_error(s.error());

    Outputs outputs;
    OutputFileOptions rules;
    rules.what = "the trace";
    rules.keep.push_back({identity.path, "the source it is read from"});
    for (const std::string* path : {&options.perfetto, &options.chrome_json}) {
        if (path->empty()) continue;
        auto file = OutputFile::open(*path, rules);
        if (!file) return runtime_error(file.error());
        const int fd = file->fd();
        outputs.files.push_back(std::move(*file));
        outputs.writers.push_back(path == &options.perfetto ? make_perfetto_writer(fd, *path)
                                                            : make_chrome_json_writer(fd, *path));
    }
    std::vector<TraceWriter*> writers;
    for (auto& w : outputs.writers) writers.push_back(w.get());
    plan->timeline.root_name = fmt::format("evring {} ({})", identity.path, r.found_schema().from);
    plan->timeline.per_member = identity.members;  // a ring set, or a recording or snapshot of one
    plan->timeline.stop_when_caught_up = true;

    install_stop_handlers();
    const auto began = std::chrono::steady_clock::now();
    Timeline timeline(std::move(writers), decoder, identity.content_type, plan->timeline);
    auto result = r.run(timeline);
    if (!result) return runtime_error(result.error());
    if (auto s = timeline.finish(); !s) return runtime_error(s.error());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    const std::string done = summary(timeline.stats(), options, outputs, seconds);
    if (auto s = outputs.commit(); !s) return runtime_error(s.error());
    report_error(done);
    if (result->damaged) return damaged_error(identity.path, "everything readable was exported");
    return kExitOk;
}

}  // namespace evring::cli
