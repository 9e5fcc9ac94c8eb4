// evring watch: options, the schema (schema_resolve.hpp), then the library's
// follow loop with WatchSink.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>

#include "commands.hpp"
#include "escape.hpp"
#include "evring/schema_resolve.hpp"
#include "evring/source_open.hpp"
#include "evring/span_seek.hpp"
#include "field_columns.hpp"
#include "open.hpp"
#include "evring/registering_sink.hpp"
#include "stop.hpp"
#include "values.hpp"
#include "watch.hpp"

namespace evring::cli {
namespace {

struct WatchPlan {
    Format format = Format::Text;
    bool csv = false;  // --format csv: columns (field_columns.hpp)
    FollowOptions follow;
    SourceOptions source;
    // --type and --flow values that name things: resolved once the schema is known.
    std::vector<std::string> type_names;
    std::vector<std::string> flow_names;
};

bool starts_with_digit(std::string_view text) { return !text.empty() && text[0] >= '0' && text[0] <= '9'; }

// Everything the options say, checked before anything is opened (names of
// event types and flow tags wait for the schema).
Result<WatchPlan> plan_watch(const WatchOptions& options) {
    WatchPlan plan;
    auto format = parse_choice("--format", options.format, {"text", "hex", "jsonl", "csv"});
    if (!format) return std::move(format).error();
    plan.csv = *format == "csv";
    plan.format = plan.csv ? Format::Text : *parse_format(*format);
    if (options.fields && plan.format == Format::Hex)
        return Error(EINVAL, "--fields goes with --format text, jsonl or csv, not hex");
    if (auto range = parse_follow_range(plan.follow, options.from, options.until, options.count); !range)
        return std::move(range).error();
    for (const auto& flow : options.flows) {
        if (!starts_with_digit(flow) && flow.find('=') != 0 && flow.find('=') != std::string::npos) {
            plan.flow_names.push_back(flow);
            continue;
        }
        if (auto s = add_flow(plan.follow.filter, flow); !s) return std::move(s).error();
    }
    for (const auto& type : options.types) {
        if (!starts_with_digit(type)) {
            plan.type_names.push_back(type);
            continue;
        }
        auto parsed = parse_type_option(nullptr, type);
        if (!parsed) return std::move(parsed).error();
        plan.follow.filter.types.add(*parsed);
    }
    if (options.max_snapshot_size) {
        auto size = parse_size("--max-snapshot-size", *options.max_snapshot_size);
        if (!size) return std::move(size).error();
        plan.source.max_snapshot_size = *size;
    }
    plan.follow.follow_name = options.follow_name;
    plan.follow.reopen = plan.source;
    plan.follow.stop_flag = &stop_flag();
    return plan;
}

// --flow NAME=LABEL where NAME is the flow tag a span's events point back to
// its opening event with (`opener`, docs/schema.md): the user means the
// span's label (block=15000009), and the tag holds the opening event's seqno,
// which span_seek finds. nullopt when NAME is no such tag.
std::optional<Result<std::uint64_t>> span_label_flow(const std::string& flow, const Schema* schema,
                                                     EventSource& source) {
    if (schema == nullptr) return std::nullopt;
    const auto eq = flow.find('=');
    const auto index = schema->flow_tag(std::string_view(flow).substr(0, eq));
    if (!index) return std::nullopt;
    for (const SchemaSpan& span : schema->spans()) {
        if (span.opener != index || span.label.empty()) continue;
        SpanRef ref;
        ref.span = span.name;
        ref.text = "--flow " + flow;
        const std::string value = flow.substr(eq + 1);
        auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ref.label);
        if (ec != std::errc() || end != value.data() + value.size() || value.empty())
            return Result<std::uint64_t>(Error(EINVAL, fmt::format("bad --flow '{}': expected {}=NUMBER (a {} label)",
                                                                   flow, flow.substr(0, eq), span.name)));
        return resolve_span(source, ref, *schema);
    }
    return std::nullopt;
}

// The names in --type and --flow, by the schema (or refused without one).
// Returns the exit code of a failure (usage or, for a label no event carries, runtime).
std::optional<int> resolve_names(WatchPlan& plan, const Schema* schema, EventSource& source) {
    for (const auto& type : plan.type_names) {
        auto parsed = parse_type_option(schema, type);
        if (!parsed) return usage_error(parsed.error());
        plan.follow.filter.types.add(*parsed);
    }
    for (const auto& flow : plan.flow_names) {
        if (auto seqno = span_label_flow(flow, schema, source)) {
            if (!*seqno) return seqno->error().errno_value() == EINVAL ? usage_error(seqno->error()) : runtime_error(seqno->error());
            const auto index = *schema->flow_tag(std::string_view(flow).substr(0, flow.find('=')));
            if (!plan.follow.filter.require_flow(index, **seqno))
                return usage_error(Error(EINVAL, fmt::format("bad --flow '{}': at most 8 --flow conditions", flow)));
            continue;
        }
        if (auto s = add_flow(plan.follow.filter, flow, schema); !s) return usage_error(s.error());
    }
    return std::nullopt;
}

}  // namespace

int run_watch(const WatchOptions& options) {
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
    if (options.follow_name && (*source)->kind() != SourceKind::Ring)
        return usage_error(Error(EINVAL, fmt::format("--follow-name follows a ring by name; '{}' is a {}",
                                                     options.ring, describe((*source)->kind()))));
    if (!options.members.empty() && !(*source)->identity().members)
        return usage_error(Error(EINVAL, fmt::format("--member picks members of a ring set; '{}' is a {}",
                                                     options.ring, describe((*source)->kind()))));
    auto found = resolve_schema(**source, {.schema_file = options.schema_file});
    if (!found) return runtime_error(found.error());
    if (!found->warning.empty()) report_error(found->warning);
    const Schema* schema = found->schema ? &*found->schema : nullptr;
    if (auto failed = resolve_names(*plan, schema, **source)) return *failed;
    plan->follow.schema = schema;
    std::unique_ptr<EventPredicate> where;
    if (auto s = compile_where_option(plan->follow, options.where, schema, where); !s) return usage_error(s.error());
    EventPrinter printer(plan->format, schema);
    printer.set_payload_hex(!options.no_payload);
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
    install_stop_handlers();
    OutputBuffer out(1);
    WatchSink sink(printer, out);
    sink.only_members(options.members);
    RegisteringSink seen(sink, {"watch", ReaderKind::Watch, fmt::format("--format {}", options.format)},
                         !options.no_register);
    auto result = follow(*source, plan->follow, seen);
    out.flush();
    if (out.failed()) return output_failure(out.error());
    if (!result) return runtime_error(result.error());
    print_summary(sink, *result, ended_words(*result));
    if (result->damaged) {
        report_error(fmt::format("'{}' is damaged: everything readable was shown, and the lines above say what "
                                 "was lost", (*source)->identity().path));
        return kExitRuntime;
    }
    return kExitOk;
}

Command add_watch(CLI::App& app) {
    auto o = std::make_shared<WatchOptions>();
    auto* c = app.add_subcommand("watch", "Print events as they arrive, or replay them");
    c->add_option("RING", o->ring, "Ring name or path, snapshot or recording")->required();
    c->add_option("--from", o->from,
                  "latest (default), oldest, SEQNO, -N, a time (2026-11-22T01:45:00Z, @EPOCH, -5s) or block:N");
    c->add_option("--until", o->until, "Stop after this SEQNO or TIME")->type_name("SEQNO|TIME");
    c->add_option("--count", o->count, "Stop after printing N events")->type_name("N");
    c->add_option("--type", o->types, "Only this event type (name or number; repeatable)")->allow_extra_args(false);
    c->add_option("--flow", o->flows,
                  "Only events with content_ext[INDEX] == VALUE; INDEX may be a flow tag's name (repeatable)")
        ->type_name("INDEX=VALUE")
        ->allow_extra_args(false);
    c->add_option("--where", o->where,
                  "Only events this expression keeps: type == TXN_LOG && address == 0x... (docs/cli.md)")
        ->type_name("EXPR");
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
    c->add_flag("--wait", o->wait, kWaitHelp);
    c->add_option("--member", o->members, "Only this member of a ring set (repeatable)");
    c->add_flag("--no-register", o->no_register, kNoRegisterHelp);
    return {c, [o] { return run_watch(*o); }};
}

}  // namespace evring::cli
