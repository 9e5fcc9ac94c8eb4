// evring record: the library's follow loop with a sink that writes every
// event, and a gap marker with its reason for every sequence number it did
// not capture, into a recording (record_sink.hpp). With --trigger, captures
// of the ring around the events an expression keeps instead (capture/).
#include <filesystem>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "capture/capture.hpp"
#include "cursor/named_reader.hpp"
#include "commands.hpp"
#include "registry/reader_kinds.hpp"
#include "evring/schema/schema_resolve.hpp"
#include "output/escape.hpp"
#include "evring/source/follow.hpp"
#include "query/recording_span_marks.hpp"
#include "recording/recording_writer.hpp"
#include "record_sink.hpp"
#include "open.hpp"
#include "sink/registering_sink.hpp"
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
        auto level = parse_int_in("--level", *options.level, 1, 19);
        if (!level) return std::move(level).error();
        plan.recording.compression_level = *level;
    }
    plan.recording.compress = !options.no_compress;
    plan.follow.payloads = plan.capture ? PayloadRead::None : PayloadRead::Copy;
    plan.follow.stop_flag = &stop_flag();
    return plan;
}

std::string record_ended(const FollowResult& result) {
    switch (result.end) {
    case FollowEnd::Count: return "reached --count";
    case FollowEnd::Stop: return "reached --until";
    case FollowEnd::Stopped: return "interrupted";
    case FollowEnd::Sink: return "writing the recording failed";
    case FollowEnd::End: break;
    }
    return result.why;
}

// --trigger: the follow loop tests the trigger; the captures copy (capture.hpp).
int run_captures(const RecordOptions& options, RecordPlan& plan, std::unique_ptr<EventSource>& source) {
    install_stop_handlers();
    CaptureSink sink(*plan.capture, {source->identity().path, source->identity().instance, plan.recording,
                                     plan.capture->before_nanos});
    RegisteringSink seen(sink, {"record", reader_kinds::kRecord, "captures -> " + options.output},
                         !options.no_register);
    auto result = follow(source, plan.follow, seen);
    Status status = sink.finish();
    if (!result) return runtime_error(result.error());
    // What watching cost: descriptors read, and the payloads the trigger needed.
    fmt::print(stderr, "evring: tested {} events for the trigger, reading {} payloads; {}\n", result->counters.events,
               result->counters.payloads,
               result->end == FollowEnd::Sink && status ? "reached --max-captures" : printable(record_ended(*result)));
    if (!status) return runtime_error(status.error());
    return kExitOk;
}

// A named recorder's mark says what its file holds, as the recording's
// worker writes it (RecordingOptions::on_block, NamedReader::output_written).
std::function<void(const BlockProgress&)> mark_blocks(NamedReader& reader, bool ring_set) {
    return [&reader, ring_set](const BlockProgress& block) {
        if (!ring_set) {
            block.written ? reader.output_written(block.last_seqno) : reader.output_writing(block.last_seqno);
            return;
        }
        for (const BlockProgress::MemberLast& m : block.members)
            block.written ? reader.output_member_written(m.member, m.seqno)
                          : reader.output_member_writing(m.member, m.seqno);
    };
}

}  // namespace

int run_record(RecordOptions& options) {
    auto plan = plan_record(options);
    if (!plan) return usage_error(plan.error());
    // --wait: a ring not created yet is waited for (follow.hpp).
    if (options.wait) {
        install_stop_handlers();
        if (!wait_for_name(options.ring, plan->follow, report_error)) return kExitOk;  // interrupted
    }
    auto source = open_for_command(options.ring, {});
    if (!source) return runtime_error(source.error());
    // --where needs the source's schema; compiled before anything is written.
    std::optional<ResolvedSchema> found;
    if (options.select.where) {
        auto resolved = resolve_schema(**source);
        if (!resolved) return runtime_error(resolved.error());
        found = std::move(*resolved);
        if (auto s = options.select.resolve(plan->follow, found->schema ? &*found->schema : nullptr, **source); !s)
            return exit_code(s.error());
    }
    // The schema blob the source carries goes into every file of the recording,
    // and its span labels make the recording's span index (recording_index.hpp).
    plan->recording.schema = (*source)->schema();
    if (!found) {
        if (auto resolved = resolve_schema(**source)) found = std::move(*resolved);
    }
    if (found && found->schema) plan->recording.span_marker = span_marker(*found->schema);
    const Schema* schema = found && found->schema ? &*found->schema : nullptr;
    auto interest = options.interest.resolve(schema, **source, options.ring, options.no_register);
    if (!interest) return usage_error(interest.error());
    // Record what we asked for, whoever else listens (other readers' interest may bring more).
    if (*interest) InterestOption::narrow(**interest, schema, plan->follow.filter.types);
    plan->recording.ring_set = (*source)->identity().members;  // member ids in every record
    // Lapped readers of this ring heal from recordings of its instance only (healer.hpp).
    if (const SourceKind kind = (*source)->kind(); kind == SourceKind::Ring || kind == SourceKind::RingSet)
        plan->recording.origin_instance = (*source)->identity().instance;
    if (plan->capture) return run_captures(options, *plan, *source);
    // --name: the start is where the name's last run committed (named_reader.hpp).
    // An -o that exists is refused before that, so such a run changes nothing (not even --reset).
    std::error_code ignored;
    if (options.select.name && std::filesystem::exists(std::filesystem::symlink_status(options.output, ignored)))
        return runtime_error(Error(EEXIST, fmt::format("creating recording '{}': it exists (a named recorder writes a "
                                                       "new file each run)", printable(options.output))));
    auto named = options.select.resume_named(plan->follow, **source);
    if (!named) return exit_code(named.error());
    NamedReader* reader = named->get();
    // The writer (and its worker, which calls on_block) goes before the reader: declared after it.
    if (reader != nullptr) plan->recording.on_block = mark_blocks(*reader, plan->recording.ring_set);
    auto writer = RecordingWriter::create(options.output, source_header((*source)->identity()), plan->recording);
    if (!writer) return runtime_error(writer.error());
    install_stop_handlers();
    RecordSink sink(*writer, options.output);
    if (plan->follow.start.kind == Position::Kind::Seqno && plan->follow.start.member == Position::kAnyMember)
        sink.asked_from(plan->follow.start.value);
    // The absolute path: lapped readers find this recording through the registry (--heal, healer.hpp).
    std::error_code absolute_failed;
    const auto output = std::filesystem::absolute(options.output, absolute_failed);
    RegisteringSink seen(sink, {"record", reader_kinds::kRecord, "-> " + (absolute_failed ? options.output : output.string())},
                         !options.no_register);
    if (*interest) seen.set_interest(**interest);
    // A commit covers only what is written and synced: each one waits for the
    // recording's worker and the disk, so they come at most once a second.
    std::optional<Error> sync_failed;
    std::optional<CommitSink> committing;
    if (reader != nullptr)
        committing.emplace(seen, *reader, [&] {
            auto synced = writer->sync();
            if (!synced) sync_failed = std::move(synced).error();
            return !sync_failed;
        }, std::chrono::seconds(1));
    auto result = follow(*source, plan->follow, committing ? static_cast<FollowSink&>(*committing) : seen);
    Status status = sink.status();
    if (status && sync_failed) status = *sync_failed;
    if (status) status = writer->finish();
    if (!result) return runtime_error(result.error());
    if (reader != nullptr && status) {
        if (committing->error()) return runtime_error(*committing->error());
        if (auto s = reader->commit(result->end == FollowEnd::End); !s) return runtime_error(s.error());
    }
    const RecordingTotals& t = writer->totals();
    // Also when writing failed (a full disk): what was taken, then the error;
    // the blocks written before it stay readable (recording_writer.hpp).
    fmt::print(stderr,
               "evring: {} {} events, {} expired payloads, {} lost in {} gaps, in {} file(s) (last: {}); {}{}\n",
               status ? "recorded" : "took", t.events, t.expired, t.lost, t.gaps, t.files,
               printable(writer->current_path()),
               status ? printable(record_ended(*result))
                      : "writing the recording failed: only the blocks written before the error are in it",
               result->counters.late > 0 ? late_words(result->counters.late) : std::string());
    if (reader != nullptr && !reader->redelivered_words().empty()) report_error(reader->redelivered_words());
    if (!status) return runtime_error(status.error());
    if (result->damaged)
        return damaged_error((*source)->identity().path,
                             "everything readable was recorded, with a gap marker for what was lost");
    return kExitOk;
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
    c->add_option("--level", o->level, "zstd level, 1 to 19 (default 1)")->type_name("LEVEL");
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
