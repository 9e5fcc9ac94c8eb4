// evring watch: options, then the library's follow loop with WatchSink.
#include <fmt/format.h>

#include "commands.hpp"
#include "escape.hpp"
#include "evring/source_open.hpp"
#include "open.hpp"
#include "register_sink.hpp"
#include "stop.hpp"
#include "values.hpp"
#include "watch.hpp"

namespace evring::cli {
namespace {

struct WatchPlan {
    Format format = Format::Text;
    FollowOptions follow;
    SourceOptions source;
};

// Everything the options say, checked before anything is opened.
Result<WatchPlan> plan_watch(const WatchOptions& options) {
    WatchPlan plan;
    auto format = parse_choice("--format", options.format, {"text", "hex", "jsonl"});
    if (!format) return std::move(format).error();
    plan.format = *parse_format(*format);
    auto start = parse_start(options.from, "--from");
    if (!start) return std::move(start).error();
    plan.follow.start = *start;
    if (options.until) {
        auto stop = parse_stop(*options.until, "--until");
        if (!stop) return std::move(stop).error();
        plan.follow.stop = *stop;
    }
    if (options.count) {
        auto count = parse_count("--count", *options.count);
        if (!count) return std::move(count).error();
        plan.follow.count = *count;
    }
    for (const auto& flow : options.flows)
        if (auto s = add_flow(plan.follow.filter, flow); !s) return std::move(s).error();
    for (const auto& type : options.types) {
        auto parsed = parse_event_type(0, type);
        if (!parsed)
            return Error(EINVAL, fmt::format("bad --type '{}': expected an event type number (0-65535) or "
                                             "RECORD_ERROR", printable(type)));
        plan.follow.filter.types.add(*parsed);
    }
    if (options.max_snapshot_size) {
        auto size = parse_size("--max-snapshot-size", *options.max_snapshot_size);
        if (!size) return std::move(size).error();
        plan.source.max_snapshot_size = *size;
    }
    plan.follow.payloads = format_reads_payloads(plan.format) ? PayloadRead::Copy : PayloadRead::None;
    plan.follow.follow_name = options.follow_name;
    plan.follow.reopen = plan.source;
    plan.follow.stop_flag = &stop_flag();
    return plan;
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
    install_stop_handlers();
    OutputBuffer out(1);
    WatchSink sink(plan->format, out);
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
