// evring watch: options, then the read pipeline (read/reading.hpp) into
// WatchSink, or AssembleSink for whole instances.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "output/escape.hpp"
#include "registry/reader_kinds.hpp"
#include "evring/source/source_open.hpp"
#include "output/field_columns.hpp"
#include "open.hpp"
#include "source/source_renamed.hpp"
#include "ops/stop.hpp"
#include "output/values.hpp"
#include "assemble_sink.hpp"
#include "watch.hpp"

namespace evring::cli {
namespace {

struct WatchPlan {
    Format format = Format::Text;
    bool csv = false;  // --format csv: columns (field_columns.hpp)
    FollowOptions follow;
    SourceOptions source;
};

// --assemble prints whole instances: nothing may leave events out of them,
// and what is handed out is held until its instance is complete.
Status check_assemble(const WatchOptions& options, std::string_view format) {
    if (!options.assemble) {
        if (!options.stage.empty()) return Error(EINVAL, "--stage goes with --assemble SPAN");
        return {};
    }
    const char* clash = format == "csv" || format == "hex" ? "--format csv or hex (text or jsonl)"
                        : options.fields                  ? "--fields"
                        : !options.select.types.empty()   ? "--type"
                        : !options.select.flows.empty()   ? "--flow"
                        : options.select.where            ? "--where"
                        : !options.select.members.empty() ? "--member"
                        : options.select.name             ? "--name (a named reader commits events, not instances)"
                        : options.select.count            ? "--count"
                                                          : nullptr;
    if (clash != nullptr)
        return Error(EINVAL, fmt::format("--assemble prints whole instances; it does not go with {}", clash));
    return {};
}

// Everything the options say, checked before anything is opened (names of
// event types and flow tags wait for the schema: EventSelection::resolve).
Result<WatchPlan> plan_watch(const WatchOptions& options) {
    WatchPlan plan;
    auto format = parse_choice("--format", options.format, {"text", "hex", "jsonl", "csv"});
    if (!format) return std::move(format).error();
    plan.csv = *format == "csv";
    plan.format = plan.csv ? Format::Text : *parse_format(*format);
    if (options.fields && plan.format == Format::Hex)
        return Error(EINVAL, "--fields goes with --format text, jsonl or csv, not hex");
    if (auto s = check_assemble(options, *format); !s) return std::move(s).error();
    if (auto s = options.select.check(plan.follow); !s) return std::move(s).error();
    if (options.max_snapshot_size) {
        auto size = parse_size("--max-snapshot-size", *options.max_snapshot_size);
        if (!size) return std::move(size).error();
        plan.source.max_snapshot_size = *size;
    }
    plan.follow.follow_name = options.follow_name;
    plan.source.follow_recording = options.follow;
    if (auto s = options.heal.apply(plan.source, options.select.name.has_value()); !s) return std::move(s).error();
    plan.follow.reopen = plan.source;
    plan.follow.stop_flag = &stop_flag();
    return plan;
}

// The read pipeline's request: the source, its schema, the selection, the
// interest and how the reader is listed.
Result<ReadRequest> watch_request(WatchOptions& options, const WatchPlan& plan) {
    auto interest = options.interest.request();
    if (!interest) return std::move(interest).error();
    ReadRequest request;
    request.location = options.ring;
    request.source = plan.source;
    request.selection = &options.select;
    request.interest = *interest;
    request.interest_names = options.interest.names();
    if (!options.schema_file.empty()) request.schema_file = options.schema_file;
    if (!options.no_register)
        request.reader = ReaderInfo{"watch", reader_kinds::kWatch, fmt::format("--format {}", options.format)};
    return request;
}

// What only --follow-name and --follow can refuse, once the source is open.
Status check_watch_source(const WatchOptions& options, const EventSource& source) {
    if (options.follow_name && !follows_names(source)) {
        // A set that follows no name is a set snapshot.
        const std::string_view what = source.kind() == SourceKind::RingSet ? "ring set snapshot" : describe(source.kind());
        return Error(EINVAL, fmt::format("--follow-name follows a ring or ring set by name; '{}' is a {}",
                                         options.ring, what));
    }
    if (options.follow && source.kind() != SourceKind::Recording)
        return Error(EINVAL, fmt::format("--follow reads a recording as it is written; '{}' is a {} (a ring is "
                                         "followed anyway)", options.ring, describe(source.kind())));
    return {};
}

// The printer, with --fields' (or csv's) columns; what it shows decides
// whether payloads are read.
Status set_up_printer(const WatchOptions& options, const WatchPlan& plan, Reading& reading, EventPrinter& printer,
                      std::optional<FieldColumns>& columns) {
    printer.set_payload_hex(!options.no_payload);
    printer.set_span_labels(reading.follow().span_labels);
    if (options.fields || plan.csv) {
        const auto style = plan.csv ? FieldColumns::Style::Csv
                           : plan.format == Format::Jsonl ? FieldColumns::Style::Jsonl : FieldColumns::Style::Text;
        auto parsed = FieldColumns::parse(options.fields.value_or(""), reading.schema(), style);
        if (!parsed) return std::move(parsed).error();
        columns.emplace(std::move(*parsed));
        printer.set_columns(&*columns);
    }
    reading.follow().payloads = printer.reads_payloads() || columns ? PayloadRead::Copy : PayloadRead::None;
    return {};
}

Result<std::optional<SpanReader>> make_assembler(const WatchOptions& options, Reading& reading) {
    if (!options.assemble) return std::optional<SpanReader>();
    if (reading.schema() == nullptr)
        return Error(EINVAL, fmt::format("--assemble needs the source's schema; '{}' has none (give --schema FILE)",
                                         options.ring));
    auto made = SpanReader::make(*reading.schema(), *options.assemble, options.stage);
    if (!made) return Error(EINVAL, fmt::format("bad --assemble: {}", made.error().message()));
    reading.follow().payloads = PayloadRead::Copy;  // labels, ids and stages are in payloads
    return std::optional<SpanReader>(std::move(*made));
}

// The summary line on stderr, and the exit code.
int finish_watch(Reading& reading, Result<FollowResult>& result, WatchSink& sink, AssembleSink* assembling) {
    if (!result) return runtime_error(result.error());
    NamedReader* reader = reading.named();
    if (reader != nullptr) {
        if (reading.commit_error()) return runtime_error(*reading.commit_error());
        if (auto s = reader->commit(result->end == FollowEnd::End); !s) return runtime_error(s.error());
    }
    if (assembling != nullptr) report_error(fmt::format("{}; {}", assembling->summary(), ended_words(*result)));
    else print_summary(sink, *result, ended_words(*result));
    if (reader != nullptr && !reader->redelivered_words().empty()) report_error(reader->redelivered_words());
    if (result->damaged)
        return damaged_error(reading.source()->identity().path,
                             "everything readable was shown, and the lines above say what was lost");
    return kExitOk;
}

}  // namespace

int run_watch(WatchOptions& options) {
    auto plan = plan_watch(options);
    if (!plan) return usage_error(plan.error());
    auto request = watch_request(options, *plan);
    if (!request) return usage_error(request.error());
    // --wait, --follow-name: a ring not created yet is waited for (follow.hpp).
    if (options.wait || options.follow_name) {
        install_stop_handlers();
        if (!wait_for_name(options.ring, plan->follow, report_error)) return kExitOk;  // interrupted
    }
    std::unique_ptr<Reading> reading;
    const auto check = [&options](const EventSource& source) { return check_watch_source(options, source); };
    if (int failed = open_selected(std::move(*request), plan->follow, reading, check); failed != kExitOk) return failed;
    Reading& r = *reading;
    EventPrinter printer(plan->format, r.schema());
    std::optional<FieldColumns> columns;
    if (auto s = set_up_printer(options, *plan, r, printer, columns); !s) return usage_error(s.error());
    auto assembler = make_assembler(options, r);
    if (!assembler) return usage_error(assembler.error());
    std::vector<std::string> notices;
    const Status resumed = r.resume_named(notices);
    for (const auto& notice : notices) report_error(notice);
    if (!resumed) return exit_code(resumed.error());
    install_stop_handlers();
    OutputBuffer out(1);
    WatchSink sink(printer, out);
    std::optional<AssembleSink> assembling;
    if (*assembler) assembling.emplace(**assembler, sink, printer, out, plan->format, options.stage);
    if (NamedReader* reader = r.named())  // the mark says what the output holds (named_reader.hpp)
        out.on_write([reader](bool written) { written ? reader->written() : reader->writing(); });
    auto result = r.run(assembling ? static_cast<FollowSink&>(*assembling) : sink, [&out] {
        out.flush();
        return !out.failed();
    });
    if (columns) columns->finish(out);  // an empty csv result still has its header
    if (assembling) assembling->finish();
    out.flush();
    if (out.failed()) return output_failure(out.error());
    return finish_watch(r, result, sink, assembling ? &*assembling : nullptr);
}

Command add_watch(CLI::App& app) {
    auto o = std::make_shared<WatchOptions>();
    o->select.span_labels = true;  // the block column shows the block's number
    auto* c = app.add_subcommand("watch", "Print events as they arrive, or replay them");
    c->add_option("RING", o->ring, "Ring name or path, snapshot or recording")->required();
    o->select.add_range(*c, {.from = "latest (default), oldest, SEQNO, -N, a time (2026-11-22T01:45:00Z, @EPOCH, "
                                     "-5s) or block:N",
                             .count = "Stop after printing N events"});
    o->select.add_filters(*c, {.where = "Only events this expression keeps: type == TXN_LOG && address == 0x... "
                                        "(docs/cli.md)"});
    c->add_option("--format", o->format, "text (default), hex, jsonl or csv");
    c->add_option("--fields", o->fields,
                  "Only these columns: seqno,type,time,nanos,payload_size, flow tags, payload fields by path")
        ->type_name("A,B,C");
    c->add_flag("--no-payload", o->no_payload,
                "jsonl decoded by a schema: leave the raw payload hex out (the fields carry it)");
    c->add_option("--schema", o->schema_file, "Decode with this schema file when the source carries none (docs/schema.md)")
        ->type_name("FILE");
    c->add_option("--max-snapshot-size", o->max_snapshot_size, kMaxSnapshotSizeHelp)->type_name("SIZE");
    c->add_flag("--follow-name", o->follow_name,
                "Keep following the ring's name when its writer exits and a new one creates it (like tail -F); "
                "waits for the ring to be created");
    c->add_flag("--follow", o->follow,
                "A recording being written: read it as it grows (like tail -f), through its index, until its end "
                "record");
    c->add_flag("--wait", o->wait, kWaitHelp);
    o->select.add_member(*c);
    o->select.add_name(*c);
    c->add_flag("--no-register", o->no_register, kNoRegisterHelp);
    o->interest.add(*c);
    o->heal.add(*c);
    c->add_option("--assemble", o->assemble,
                  "Whole span instances instead of events: a block with its transactions and stages (jsonl: one "
                  "object each)")
        ->type_name("SPAN");
    c->add_option("--stage", o->stage, "With --assemble: print an instance once it reaches this stage (finalized)")
        ->type_name("NAME");
    return {c, [o] { return run_watch(*o); }};
}

}  // namespace evring::cli
