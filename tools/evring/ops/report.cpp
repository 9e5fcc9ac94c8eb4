// Errors on stderr and opening RING arguments (commands.hpp, open.hpp).
#include <fmt/format.h>

#include "commands.hpp"
#include "output/escape.hpp"
#include "open.hpp"
#include "event_selection.hpp"  // exit_code

namespace evring::cli {

void report_error(std::string_view message) { fmt::print(stderr, "evring: {}\n", printable(message)); }

int usage_error(const Error& error) {
    report_error(error.message());
    return kExitUsage;
}

int runtime_error(const Error& error) {
    report_error(error.message());
    return kExitRuntime;
}

int damaged_error(std::string_view path, std::string_view what_the_output_holds) {
    // Exit 1 alone would not say why: the output holds what could be read.
    report_error(fmt::format("'{}' is damaged: {}", path, what_the_output_holds));
    return kExitRuntime;
}

Result<std::unique_ptr<EventSource>> open_for_command(std::string_view ring, const SourceOptions& options) {
    auto source = open_source(ring, options);
    if (!source && source.error().errno_value() == EFBIG)
        return Error(EFBIG, source.error().message() + " (raise it with --max-snapshot-size)");
    return source;
}

Result<std::unique_ptr<Reading>> open_reading(ReadRequest request, FollowOptions follow) {
    auto reading = Reading::open(std::move(request), std::move(follow));
    if (!reading && reading.error().errno_value() == EFBIG)
        return Error(EFBIG, reading.error().message() + " (raise it with --max-snapshot-size)");
    return reading;
}

int open_selected(ReadRequest request, FollowOptions follow, std::unique_ptr<Reading>& out,
                  const std::function<Status(const EventSource&)>& check) {
    auto reading = open_reading(std::move(request), std::move(follow));
    if (!reading) return runtime_error(reading.error());
    Reading& r = **reading;
    if (check)
        if (auto s = check(*r.source()); !s) return usage_error(s.error());
    if (auto s = r.find_schema(); !s) return runtime_error(s.error());
    if (!r.schema_warning().empty()) report_error(r.schema_warning());
    if (auto s = r.select(); !s) return exit_code(s.error());
    out = std::move(*reading);
    return kExitOk;
}

}  // namespace evring::cli
