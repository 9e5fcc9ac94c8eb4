// tools/evring/event_selection.hpp — the options of a selection
// (lib/read/selection.hpp): --from, --until, --count, --type, --flow,
// --where, --member, --name and --reset, registered in the same words on
// every command that reads events. What they mean, and how they are checked
// and resolved, is the library's Selection; this only adds them to a command.
//
// Thread safety: one thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "evring/error.hpp"
#include "evring/source/follow.hpp"
#include "read/selection.hpp"

namespace CLI {
class App;
}

namespace evring::cli {

// The --help texts of the range; a null text leaves that option out.
struct RangeHelp {
    const char* from = "oldest (default), latest, SEQNO, -N, a time or block:N";
    const char* until = "Stop after this SEQNO or TIME, or at the end of block:N (block.STAGE:N: its stage event)";
    const char* count = "Stop after N events";
};

// The --help texts of the filters; a null text leaves that option out.
struct FilterHelp {
    const char* type = "Only this event type (name or number; repeatable)";
    const char* flow = "Only events with content_ext[INDEX] == VALUE; INDEX may be a flow tag's name (repeatable)";
    const char* where = "Only events this expression keeps (docs/cli.md)";
};

struct EventSelection : Selection {
    using Selection::Selection;

    // Registration, in the order a command's --help lists them; each command
    // calls the groups it offers where its options belong.
    void add_range(CLI::App& command, const RangeHelp& help = {});
    void add_filters(CLI::App& command, const FilterHelp& help = {});
    void add_member(CLI::App& command);
    void add_name(CLI::App& command);

    // Selection::resume_named, its notices reported on stderr.
    Result<std::unique_ptr<NamedReader>> resume_named(FollowOptions& follow, EventSource& source) const;
};

// --name of a command that prints its result at the end (digest, stats):
// stdout flushed, then the position committed; nothing without a reader.
Status commit_printed(NamedReader* reader, const FollowResult& result);

// The exit code of a failed check or resolve: 2 for EINVAL (usage), else 1;
// the error is reported.
int exit_code(const Error& error);

}  // namespace evring::cli
