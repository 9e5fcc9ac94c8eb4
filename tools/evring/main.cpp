// evring — see what is in an event ring, follow it, go back in time, keep
// what matters. docs/cli.md describes every command.
//
// CLI11 splits the command line; values are checked by each command
// (values.hpp) so every usage error is one line naming the option, the value
// and the reason, and CLI11's own errors (an unknown option, a missing
// argument) are reformatted to the same one-line shape. Each subcommand is
// one add_X (commands.hpp); this file is their table and the parse.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "commands.hpp"
#include "ops/rm.hpp"
#include "output/escape.hpp"

#ifdef EVRING_HAVE_NATS
#include "evring/nats/nats_source.hpp"
#endif

namespace {

using namespace evring::cli;

// CLI11 takes "--from -5" for two options; join such pairs into "--from=-5"
// (also for counts, so "--count -5" is refused as negative, not as unknown).
std::vector<std::string> join_negative_values(int argc, char** argv) {
    static const std::vector<std::string> kTakesValue = {"--from", "--until", "--count", "--level",
                                                         "--rotate-size", "--max-snapshot-size"};
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        const bool takes_value = std::find(kTakesValue.begin(), kTakesValue.end(), arg) != kTakesValue.end();
        if (takes_value && i + 1 < argc && argv[i + 1][0] == '-' && argv[i + 1][1] != '-') {
            args.push_back(arg + "=" + argv[++i]);
            continue;
        }
        args.push_back(std::move(arg));
    }
    return args;
}

// One line, "evring: ...", for CLI11's own errors; help and version go to stdout as usual.
std::string one_line_failure(const CLI::App* app, const CLI::Error& e) {
    std::string command = app->get_name();
    for (const CLI::App* parent = app->get_parent(); parent != nullptr; parent = parent->get_parent())
        command = parent->get_name() + " " + command;
    std::string what = printable(e.what());
    return "evring: " + what + " (see '" + command + " --help')\n";
}

// Every subcommand, in the order `evring --help` lists them (docs/cli.md).
using AddCommand = Command (*)(CLI::App&);
constexpr AddCommand kCommands[] = {
    add_ls, add_gc, add_rm, add_info, add_watch, add_snapshot, add_record, add_schema, add_export, add_stats, add_digest,
    add_diff,
#ifdef EVRING_HAVE_NATS
    add_relay, add_mirror,
#endif
    add_readers, add_top, add_metrics,
};

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"evring: inspect, follow, snapshot and record event rings", "evring"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("evring ") + EVRING_VERSION_STRING);
    app.failure_message(one_line_failure);

#ifdef EVRING_HAVE_NATS
    // nats://HOST:PORT/STREAM is a source for watch and info (evring/nats/nats_source.hpp).
    evring::nats::register_nats_source_scheme();
#endif
    std::vector<Command> commands;
    for (AddCommand add : kCommands) commands.push_back(add(app));

    std::vector<std::string> args = join_negative_values(argc, argv);
    std::reverse(args.begin(), args.end());  // CLI11 takes the vector in reverse order
    try {
        app.parse(args);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? kExitOk : kExitUsage;
    }
    for (const Command& command : commands)
        if (command.app->parsed()) return command.run();
    return kExitUsage;
}
