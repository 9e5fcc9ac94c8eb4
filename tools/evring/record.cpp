// evring record: the options, the read pipeline (read/reading.hpp), then the
// library's record pipeline (lib/record/record_source.hpp), which writes every event, and a gap marker
// with its reason for every sequence number it did not capture, into a
// recording. With --trigger, captures of the ring around the events an
// expression keeps instead (capture/).
#include <filesystem>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "capture/capture.hpp"
#include "cursor/named_reader.hpp"
#include "commands.hpp"
#include "output/escape.hpp"
#include "evring/source/follow.hpp"
#include "record/record_source.hpp"
#include "registry/reader_kinds.hpp"
#include "open.hpp"
#include "ops/stop.hpp"
#include "output/values.hpp"
#include "watch.hpp"

namespace evring::cli {
namespace {

struct RecordPlan {
    FollowOptions follow;
    RecordingOptions recording;
    std::optional<CapturePlan> capture;  // --trigger
};

Result<RecordPlan> plan_record(RecordOptions& options) {
    RecordPlan plan;
    auto capture = plan_captures(options.capture, options.output);
    if (!capture) return std::move(capture).error();
    plan.capture = std::move(*capture);
    if (plan.capture) {
        // The trigger is the follow loop's --where: descriptors first, payloads only as EXPR needs them.
        if (options.select.where)
            return Error(EINVAL, "--where and --trigger do not go together: a capture holds every event of its window");
        if (options.select.count)
            return Error(EINVAL, "--count and --trigger do not go together: --max-captures bounds the captures");
        if (options.select.name)
            return Error(EINVAL, "--name and --trigger do not go together: a named recorder resumes one "
                                 "recording, and captures are many");
        options.select.where = options.capture.trigger;
        options.select.where_option = "--trigger";
    }
    if (auto s = options.select.check(plan.follow); !s) return std::move(s).error();
    if (options.rotate_size) {
        auto size = parse_size("--rotate-size", *options.rotate_size);
        if (!size) return std::move(size).error();
        plan.recording.rotate_bytes = *size;
    }
    if (options.level) {
        // zstd's fast levels are negative; 0 would be zstd's own default (3).
        auto level = parse_int_in("--level", *options.level, -7, 19);
        if (!level) return std::move(level).error();
        if (*level == 0) return Error(EINVAL, "bad --level '0': zstd's levels are 1 to 19, and -1 to -7 for its fast levels");
        plan.recording.compression_level = *level;
    }
    if (options.threads) {
        auto threads = parse_int_in("--threads", *options.threads, 1, static_cast<int>(kMaxRecordingThreads));
        if (!threads) return std::move(threads).error();
        plan.recording.threads = static_cast<unsigned>(*threads);
    }
    if (options.io) {
        if (*options.io == "direct") plan.recording.io = RecordingIo::Direct;
        else if (*options.io == "buffered") plan.recording.io = RecordingIo::Buffered;
        else return Error(EINVAL, "bad --io '" + *options.io + "': buffered or direct");
    }
    plan.recording.compress = !options.no_compress;
    plan.follow.payloads = plan.capture ? PayloadRead::None : PayloadRead::Copy;
    plan.follow.stop_flag = &stop_flag();
    return plan;
}

std::string capture_ended(const FollowResult& result) {
    Recorded recorded;
    recorded.follow = result;
    return record_ended(recorded);
}

// --trigger: the follow loop tests the trigger; the captures copy (capture.hpp).
int run_captures(RecordPlan& plan, Reading& reading) {
    install_stop_handlers();
    const SourceIdentity& identity = reading.source()->identity();
    CaptureSink sink(*plan.capture, {identity.path, identity.instance, plan.recording, plan.capture->before_nanos});
    auto result = reading.run(sink);
    Status status = sink.finish();
    if (!result) return runtime_error(result.error());
    // What watching cost: descriptors read, and the payloads the trigger needed.
    fmt::print(stderr, "evring: tested {} events for the trigger, reading {} payloads; {}\n", result->counters.events,
               result->counters.payloads,
               result->end == FollowEnd::Sink && status ? "reached --max-captures" : printable(capture_ended(*result)));
    if (!status) return runtime_error(status.error());
    return kExitOk;
}

// What was taken, also when writing failed (a full disk), then the error;
// the blocks written before it stay readable (recording_writer.hpp).
int report_recorded(const Recorded& r, const RecordJob& job, const EventSource& source) {
    const RecordingTotals& t = r.totals;
    fmt::print(stderr,
               "evring: {} {} events, {} expired payloads, {} lost in {} gaps, in {} file(s) (last: {}); {}{}\n",
               r.written ? "recorded" : "took", t.events, t.expired, t.lost, t.gaps, t.files, printable(r.last_file),
               r.written ? printable(record_ended(r))
                         : "writing the recording failed: only the blocks written before the error are in it",
               r.follow.counters.late > 0 ? late_words(r.follow.counters.late) : std::string());
    if (job.named != nullptr && !job.named->redelivered_words().empty()) report_error(job.named->redelivered_words());
    if (!r.written) return runtime_error(r.written.error());
    if (r.follow.damaged)
        return damaged_error(source.identity().path, "everything readable was recorded, with a gap marker for what was lost");
    return kExitOk;
}

// The read pipeline's request: the schema when there is one (--where needs
// it), the selection, the interest, and how the reader is listed (captures;
// a recording is listed by record_source, with its output).
Result<ReadRequest> record_request(RecordOptions& options, const RecordPlan& plan) {
    auto interest = options.interest.request();
    if (!interest) return std::move(interest).error();
    ReadRequest request;
    request.location = options.ring;
    request.schema = SchemaNeed::Quiet;
    request.selection = &options.select;
    request.interest = *interest;
    request.interest_names = options.interest.names();
    if (!options.no_register)
        request.reader = ReaderInfo{"record", reader_kinds::kRecord,
                                    plan.capture ? "captures -> " + options.output : "-> " + options.output};
    return request;
}

// --name: the start is where the name's last run committed (named_reader.hpp).
// An -o that exists is refused before that, so such a run changes nothing (not even --reset).
Status resume_recorder(const RecordOptions& options, Reading& reading) {
    std::error_code ignored;
    if (options.select.name && std::filesystem::exists(std::filesystem::symlink_status(options.output, ignored)))
        return Error(EEXIST, fmt::format("creating recording '{}': it exists (a named recorder writes a new file each "
                                         "run)", printable(options.output)));
    std::vector<std::string> notices;
    const Status resumed = reading.resume_named(notices);
    for (const auto& notice : notices) report_error(notice);
    return resumed;
}

}  // namespace

int run_record(RecordOptions& options) {
    auto plan = plan_record(options);
    if (!plan) return usage_error(plan.error());
    auto request = record_request(options, *plan);
    if (!request) return usage_error(request.error());
    // --wait: a ring not created yet is waited for (follow.hpp).
    if (options.wait) {
        install_stop_handlers();
        if (!wait_for_name(options.ring, plan->follow, report_error)) return kExitOk;  // interrupted
    }
    std::unique_ptr<Reading> reading;
    if (int failed = open_selected(std::move(*request), plan->follow, reading); failed != kExitOk) return failed;
    Reading& r = *reading;
    if (plan->capture) {
        describe_recording(*r.source(), r.schema(), plan->recording);
        return run_captures(*plan, r);
    }
    if (auto s = resume_recorder(options, r); !s) return exit_code(s.error());
    install_stop_handlers();
    RecordJob job;
    job.output = options.output;
    job.follow = r.follow();
    job.recording = plan->recording;
    job.schema = r.schema();
    job.register_reader = !options.no_register;
    job.interest = r.interest();
    job.named = r.named();
    job.report = report_error;
    auto recorded = record_source(r.source(), job);
    if (!recorded) return runtime_error(recorded.error());
    return report_recorded(*recorded, job, *r.source());
}

Command add_record(CLI::App& app) {
    auto o = std::make_shared<RecordOptions>();
    auto* c = app.add_subcommand("record", "Follow a ring and write every event to disk");
    c->add_option("RING", o->ring, "Ring name or path, snapshot or recording")->required();
    c->add_option("-o,--output", o->output, "Recording file to create (with --trigger: the directory of captures)")
        ->required();
    o->select.add_range(*c, {.from = "latest (default), oldest, SEQNO, -N or a time"});
    c->add_option("--rotate-size", o->rotate_size,
                  "Start FILE.1, FILE.2, ... when a file reaches SIZE (binary units: 64K, 512M, 4G)")
        ->type_name("SIZE");
    o->select.add_filters(*c, {.type = nullptr, .flow = nullptr,
                               .where = "Record only events this expression keeps (docs/cli.md)"});
    c->add_flag("--no-compress", o->no_compress, "Write records without zstd");
    c->add_option("--level", o->level, "zstd level, 1 to 19, or -1 to -7 for its fast levels (default 1)")
        ->type_name("LEVEL");
    c->add_option("--threads", o->threads, "Threads that compress, 1 to 64 (default 1; --no-compress uses one)")
        ->type_name("N");
    c->add_option("--io", o->io,
                  "buffered (the page cache: the default) or direct (around it, where the filesystem offers it)")
        ->type_name("MODE");
    c->add_flag("--no-register", o->no_register, kNoRegisterHelp);
    c->add_flag("--wait", o->wait, kWaitHelp);
    o->select.add_name(*c);
    o->interest.add(*c, "--interest-level");
    c->add_option("--trigger", o->capture.trigger,
                  "Flight recorder: on each event this expression keeps, write a capture of the ring around it "
                  "into the -o directory (docs/cli.md, captures)")
        ->type_name("EXPR");
    c->add_option("--before", o->capture.before, "With --trigger: history before a trigger to capture (default 10s)")
        ->type_name("DURATION");
    c->add_option("--after", o->capture.after, "With --trigger: time after a trigger to capture (default 5s)")
        ->type_name("DURATION");
    c->add_option("--max-captures", o->capture.max_captures, "With --trigger: stop after N captures")->type_name("N");
    c->add_option("--cooldown", o->capture.cooldown,
                  "With --trigger: ignore triggers this long after a capture's window ends")
        ->type_name("DURATION");
    return {c, [o] { return run_record(*o); }};
}

}  // namespace evring::cli
