// evring watch: options, the schema (schema_resolve.hpp), then the library's
// follow loop with WatchSink.
#include <fmt/format.h>

#include "commands.hpp"
#include "escape.hpp"
#include "evring/schema_resolve.hpp"
#include "evring/source_open.hpp"
#include "open.hpp"
#include "evring/registering_sink.hpp"
#include "stop.hpp"
#include "values.hpp"
#include "watch.hpp"

namespace evring::cli {
namespace {

struct WatchPlan {
    Format format = Format::Text;
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
    auto format = parse_choice("--format", options.format, {"text", "hex", "jsonl"});
    if (!format) return std::move(format).error();
    plan.format = *parse_format(*format);
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

// The names in --type and --flow, by the schema (or refused without one).
Status resolve_names(WatchPlan& plan, const Schema* schema) {
    for (const auto& type : plan.type_names) {
        auto parsed = parse_type_option(schema, type);
        if (!parsed) return std::move(parsed).error();
        plan.follow.filter.types.add(*parsed);
    }
    for (const auto& flow : plan.flow_names)
        if (auto s = add_flow(plan.follow.filter, flow, schema); !s) return s;
    return {};
}

}  // namespace

int run_watch(const WatchOptions& options) {
    auto plan = plan_watch(options);
    if (!plan) return usage_error(plan.error());
    auto source = open_for_command(options.ring, plan->source);
    if (!source) return runtime_error(source.error());
    if (options.follow_name && (*source)->kind() != SourceKind::Ring)
        return usage_error(Error(EINVAL, fmt::format("--follow-name follows a ring by name; '{}' is a {}",
                                                     options.ring, describe((*source)->kind()))));
    auto found = resolve_schema(**source, {.schema_file = options.schema_file});
    if (!found) return runtime_error(found.error());
    if (!found->warning.empty()) report_error(found->warning);
    const Schema* schema = found->schema ? &*found->schema : nullptr;
    if (auto s = resolve_names(*plan, schema); !s) return usage_error(s.error());
    plan->follow.schema = schema;
    std::unique_ptr<EventPredicate> where;
    if (auto s = compile_where_option(plan->follow, options.where, schema, where); !s) return usage_error(s.error());
    EventPrinter printer(plan->format, schema);
    plan->follow.payloads = printer.reads_payloads() ? PayloadRead::Copy : PayloadRead::None;
    install_stop_handlers();
    OutputBuffer out(1);
    WatchSink sink(printer, out);
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

}  // namespace evring::cli
