// evring watch: options, the schema (schema_resolve.hpp), then the library's
// follow loop with WatchSink.
#include <fmt/format.h>

#include <charconv>

#include "commands.hpp"
#include "output/escape.hpp"
#include "evring/source/source_renamed.hpp"
#include "evring/schema/schema_resolve.hpp"
#include "evring/source/source_open.hpp"
#include "evring/query/span_seek.hpp"
#include "output/field_columns.hpp"
#include "open.hpp"
#include "evring/registry/registering_sink.hpp"
#include "evring/schema/schema_interest.hpp"
#include "ops/stop.hpp"
#include "output/values.hpp"
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
    plan.source.follow_recording = options.follow;
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

// --keywords and --level: the interest word to register (docs/interest.md),
// or nullopt when neither was given. An Error for a usage error.
Result<std::optional<std::uint64_t>> interest_option(const WatchOptions& options, const Schema* schema,
                                                     const EventSource& source) {
    if (!options.keywords && !options.level) return std::optional<std::uint64_t>();
    const char* option = options.keywords ? "--keywords" : "--level";
    if (options.no_register)
        return Error(EINVAL, fmt::format("{} registers this reader's interest; it cannot go with --no-register", option));
    if (source.kind() != SourceKind::Ring)
        return Error(EINVAL, fmt::format("{} registers interest with a live ring's writers; '{}' is a {}", option,
                                         options.ring, describe(source.kind())));
    unsigned level = kMaxInterestLevel;
    if (options.level) {
        auto parsed = parse_count("--level", *options.level);
        if (!parsed) return std::move(parsed).error();
        if (*parsed > kMaxInterestLevel)
            return Error(EINVAL, fmt::format("bad --level '{}': levels go from 0 to {}", *options.level,
                                             kMaxInterestLevel));
        level = static_cast<unsigned>(*parsed);
    }
    if (!options.keywords) return std::optional<std::uint64_t>(interest_word(kInterestKeywordMask, level));
    if (schema == nullptr)
        return Error(EINVAL, fmt::format("--keywords names keywords of the ring's schema, and '{}' carries none; "
                                         "give --schema FILE",
                                         options.ring));
    if (options.keywords->empty())
        return Error(EINVAL, "bad --keywords '': name at least one keyword (K1,K2)");
    auto word = interest_from_keywords(*schema, *options.keywords, level);
    if (!word) return Error(EINVAL, fmt::format("bad --keywords '{}': {}", *options.keywords, word.error().message()));
    return std::optional<std::uint64_t>(*word);
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
    if (!options.members.empty() && !(*source)->identity().members)
        return usage_error(Error(EINVAL, fmt::format("--member picks members of a ring set; '{}' is a {}",
                                                     options.ring, describe((*source)->kind()))));
    auto found = resolve_schema(**source, {.schema_file = options.schema_file});
    if (!found) return runtime_error(found.error());
    if (!found->warning.empty()) report_error(found->warning);
    const Schema* schema = found->schema ? &*found->schema : nullptr;
    if (auto failed = resolve_names(*plan, schema, **source)) return *failed;
    auto interest = interest_option(options, schema, **source);
    if (!interest) return usage_error(interest.error());
    // Without --type, show what we asked for: the types our interest admits
    // (others' interest may bring more into the ring).
    if (*interest && schema != nullptr && options.types.empty())
        for (const auto& e : schema->events())
            if (interest_admits(**interest, e.interest())) plan->follow.filter.types.add(e.number);
    plan->follow.schema = schema;
    std::unique_ptr<EventPredicate> where;
    if (auto s = compile_where_option(plan->follow, options.where, schema, where, source->get()); !s) return usage_error(s.error());
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
    if (*interest) seen.set_interest(**interest);
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

}  // namespace evring::cli
