// evring watch: options, the schema (schema_resolve.hpp), then the library's
// follow loop with WatchSink.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "output/escape.hpp"
#include "registry/reader_kinds.hpp"
#include "evring/schema/schema_resolve.hpp"
#include "evring/source/source_open.hpp"
#include "output/field_columns.hpp"
#include "open.hpp"
#include "sink/registering_sink.hpp"
#include "source/source_renamed.hpp"
#include "schema/schema_interest.hpp"
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

}  // namespace

int run_watch(WatchOptions& options) {
    auto plan = plan_watch(options);
    if (!plan) return usage_error(plan.error());
    // --wait, --follow-name: a ring not created yet is waited for (follow.hpp).
    if (options.wait || options.follow_name) {
        install_stop_handlers();
        if (!wait_for_name(options.ring, plan->follow, report_error))
            return kExitOk;  // interrupted
    }
    auto source = open_for_command(options.ring, plan->source);
    if (!source) return runtime_error(source.error());
    if (options.follow_name && !follows_names(**source)) {
        // A set that follows no name is a set snapshot.
        const std::string_view what =
            (*source)->kind() == SourceKind::RingSet ? "ring set snapshot" : describe((*source)->kind());
        return usage_error(Error(EINVAL, fmt::format("--follow-name follows a ring or ring set by name; '{}' is a {}",
                                                     options.ring, what)));
    }
    if (options.follow && (*source)->kind() != SourceKind::Recording)
        return usage_error(Error(EINVAL, fmt::format("--follow reads a recording as it is written; '{}' is a {} "
                                                     "(a ring is followed anyway)",
                                                     options.ring, describe((*source)->kind()))));
    auto found = resolve_schema(**source, {.schema_file = options.schema_file});
    if (!found) return runtime_error(found.error());
    if (!found->warning.empty()) report_error(found->warning);
    const Schema* schema = found->schema ? &*found->schema : nullptr;
    if (auto s = options.select.resolve(plan->follow, schema, **source); !s) return exit_code(s.error());
    auto interest = options.interest.resolve(schema, **source, options.ring, options.no_register);
    if (!interest) return usage_error(interest.error());
    // Without --type, show what we asked for: the types our interest admits
    // (others' interest may bring more into the ring).
    if (*interest) InterestOption::narrow(**interest, schema, plan->follow.filter.types);
    EventPrinter printer(plan->format, schema);
    printer.set_payload_hex(!options.no_payload);
    printer.set_span_labels(plan->follow.span_labels);
    std::optional<FieldColumns> columns;
    if (options.fields || plan->csv) {
        const auto style = plan->csv ? FieldColumns::Style::Csv
                           : plan->format == Format::Jsonl ? FieldColumns::Style::Jsonl : FieldColumns::Style::Text;
        auto parsed = FieldColumns::parse(options.fields.value_or(""), schema, style);
        if (!parsed) return usage_error(parsed.error());
        columns.emplace(std::move(*parsed));
        printer.set_columns(&*columns);
    }
    plan->follow.payloads = printer.reads_payloads() || columns ? PayloadRead::Copy : PayloadRead::None;
    std::optional<SpanAssembler> assembler;
    if (options.assemble) {
        if (schema == nullptr)
            return usage_error(Error(EINVAL, fmt::format("--assemble needs the source's schema; '{}' has none (give "
                                                         "--schema FILE)",
                                                         options.ring)));
        auto made = SpanAssembler::make(*schema, *options.assemble, options.stage);
        if (!made) return usage_error(Error(EINVAL, fmt::format("bad --assemble: {}", made.error().message())));
        assembler.emplace(std::move(*made));
        plan->follow.payloads = PayloadRead::Copy;  // labels, ids and stages are in payloads
    }
    auto named = options.select.resume_named(plan->follow, **source);
    if (!named) return exit_code(named.error());
    install_stop_handlers();
    OutputBuffer out(1);
    WatchSink sink(printer, out);
    std::optional<AssembleSink> assembling;
    if (assembler) assembling.emplace(*assembler, sink, printer, out, plan->format, options.stage);
    RegisteringSink seen(assembling ? static_cast<FollowSink&>(*assembling) : sink,
                         {"watch", reader_kinds::kWatch, fmt::format("--format {}", options.format)},
                         !options.no_register);
    if (*interest) seen.set_interest(**interest);
    NamedReader* reader = named->get();
    std::optional<CommitSink> committing;
    if (reader != nullptr) {
        // The mark says what the output holds (named_reader.hpp); commits follow a flush.
        out.on_write([reader](bool written) { written ? reader->written() : reader->writing(); });
        committing.emplace(seen, *reader, [&out] {
            out.flush();
            return !out.failed();
        });
    }
    auto result = follow(*source, plan->follow, committing ? static_cast<FollowSink&>(*committing) : seen);
    if (columns) columns->finish(out);  // an empty csv result still has its header
    if (assembling) assembling->finish();
    out.flush();
    if (out.failed()) return output_failure(out.error());
    if (!result) return runtime_error(result.error());
    if (reader != nullptr) {
        if (committing->error()) return runtime_error(*committing->error());
        if (auto s = reader->commit(result->end == FollowEnd::End); !s) return runtime_error(s.error());
    }
    if (assembling) report_error(fmt::format("{}; {}", assembling->summary(), ended_words(*result)));
    else print_summary(sink, *result, ended_words(*result));
    if (reader != nullptr && !reader->redelivered_words().empty()) report_error(reader->redelivered_words());
    if (result->damaged)
        return damaged_error((*source)->identity().path,
                             "everything readable was shown, and the lines above say what was lost");
    return kExitOk;
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
