// The options of a selection (event_selection.hpp).
#include "event_selection.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>

#include "commands.hpp"

namespace evring::cli {

void EventSelection::add_range(CLI::App& command, const RangeHelp& help) {
    if (help.from != nullptr)
        command.add_option("--from", from, help.from)->each([this](const std::string&) { from_given = true; });
    if (help.until != nullptr) command.add_option("--until", until, help.until)->type_name("SEQNO|TIME|SPAN:N");
    if (help.count != nullptr) command.add_option("--count", count, help.count)->type_name("N");
}

void EventSelection::add_filters(CLI::App& command, const FilterHelp& help) {
    if (help.type != nullptr) command.add_option("--type", types, help.type)->allow_extra_args(false);
    if (help.flow != nullptr)
        command.add_option("--flow", flows, help.flow)->type_name("INDEX=VALUE")->allow_extra_args(false);
    if (help.where != nullptr) command.add_option("--where", where, help.where)->type_name("EXPR");
}

void EventSelection::add_member(CLI::App& command) {
    command.add_option("--member", members, "Only this member of a ring set (repeatable)");
}

void EventSelection::add_name(CLI::App& command) {
    command.add_option("--name", name,
                       "A named reader: resume after the last event this name consumed, and commit as output is "
                       "written (docs/named-readers.md)")
        ->type_name("NAME");
    command.add_flag("--reset", reset, "With --name: forget its position and start at --from");
}

Result<std::unique_ptr<NamedReader>> EventSelection::resume_named(FollowOptions& follow, EventSource& source) const {
    std::vector<std::string> notices;
    auto reader = Selection::resume_named(follow, source, notices);
    for (const auto& notice : notices) report_error(notice);
    return reader;
}

Status commit_printed(NamedReader* reader, const FollowResult& result) {
    if (reader == nullptr) return {};
    if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0)
        return Error::from_errno(errno, fmt::format("reader '{}': the output was not written, so nothing is committed",
                                                    reader->name()));
    return reader->commit(result.end == FollowEnd::End);
}

int exit_code(const Error& error) {
    return error.errno_value() == EINVAL ? usage_error(error) : runtime_error(error);
}

}  // namespace evring::cli
