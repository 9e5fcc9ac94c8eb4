// evring watch: option handling; the loops are in watch_ring.cpp and
// watch_recording.cpp.
#include "watch.hpp"

#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "commands.hpp"
#include "follow.hpp"

namespace evring::cli {
namespace {

Status add_flow(FlowFilter& filter, const std::string& text) {
    const auto eq = text.find('=');
    std::uint64_t index = 0, value = 0;
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    bool ok = eq != std::string::npos;
    if (ok) {
        auto r1 = std::from_chars(begin, begin + eq, index);
        auto r2 = std::from_chars(begin + eq + 1, end, value);
        ok = eq > 0 && r1.ec == std::errc() && r1.ptr == begin + eq && r2.ec == std::errc() &&
             r2.ptr == end && eq + 1 < text.size();
    }
    if (!ok) return Error(EINVAL, "bad --flow '" + text + "': expected INDEX=VALUE, e.g. 1=42");
    if (index > 3) return Error(EINVAL, "bad --flow '" + text + "': INDEX is 0 to 3 (content_ext has 4 words)");
    if (!filter.require_flow(index, value))
        return Error(EINVAL, "bad --flow '" + text + "': at most 8 --flow conditions");
    return {};
}

}  // namespace

void print_summary(const WatchSummary& s, const std::string& ended) {
    std::fprintf(stderr,
                 "evring: %" PRIu64 " events printed (%" PRIu64 " read), %" PRIu64
                 " lost in %" PRIu64 " gaps, %" PRIu64 " expired payloads, %" PRIu64
                 " never-committed seqnos; %s\n",
                 s.printed, s.read, s.lost, s.gaps, s.expired, s.missing, ended.c_str());
}

int output_failure(int error) {
    if (error == EPIPE) return kExitOk;
    report_error(std::string("writing the output: ") + std::strerror(error));
    return kExitRuntime;
}

int run_watch(const WatchOptions& options) {
    WatchPlan plan;
    plan.format = *parse_format(options.format);  // CLI11 checked the value
    plan.count = options.count;
    auto from = parse_from(options.from);
    if (!from) {
        report_error(from.error().message());
        return kExitUsage;
    }
    plan.from = *from;
    if (!options.until.empty()) {
        auto until = parse_until(options.until);
        if (!until) {
            report_error(until.error().message());
            return kExitUsage;
        }
        plan.until = *until;
    }
    for (const auto& flow : options.flows) {
        if (auto s = add_flow(plan.filter, flow); !s) {
            report_error(s.error().message());
            return kExitUsage;
        }
    }
    auto input = open_input(options.ring, {options.max_snapshot_size, true});
    if (!input) {
        report_error(input.error().message());
        return kExitRuntime;
    }
    const std::uint16_t content_type = input->ring() ? input->ring()->content_type()
                                                     : input->recording->header().content_type;
    for (const auto& type : options.types) {
        auto parsed = parse_event_type(content_type, type);
        if (!parsed) {
            report_error("bad --type '" + type +
                         "': expected an event type number (0-65535) or RECORD_ERROR");
            return kExitUsage;
        }
        plan.filter.types.add(*parsed);
    }
    install_stop_handlers();
    if (input->kind == InputKind::Recording) return watch_recording(*input, plan);
    return watch_ring(*input, plan);
}

}  // namespace evring::cli
