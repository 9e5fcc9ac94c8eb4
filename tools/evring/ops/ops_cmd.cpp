// Registering `readers`, `top` and `metrics` with CLI11.
#include "ops/ops_cmd.hpp"

#include <CLI/CLI.hpp>

#include "commands.hpp"

namespace evring::cli {

bool OpsCommands::chosen() const { return *readers_cmd || *top_cmd || *metrics_cmd; }

std::unique_ptr<OpsCommands> add_ops_commands(CLI::App& app) {
    auto ops = std::make_unique<OpsCommands>();
    ops->readers_cmd = app.add_subcommand("readers", "List a ring's registered readers: lag, losses, liveness");
    ops->readers_cmd->add_option("RING", ops->readers.ring, "Ring name or path")->required();
    ops->readers_cmd->add_flag("--json", ops->readers.json, "One JSON object per reader");
    ops->readers_cmd->add_flag("--no-reclaim", ops->readers.no_reclaim,
                               "Show dead readers but leave their slots for the next registrant");

    ops->top_cmd = app.add_subcommand("top", "A live view of a ring: rates by event type, window, writers, readers");
    ops->top_cmd->add_option("RING", ops->top.ring, "Ring name or path")->required();
    ops->top_cmd->add_option("--interval", ops->top.interval, "Seconds between refreshes (default 1)")
        ->type_name("SECONDS");
    ops->top_cmd->add_option("--count", ops->top.count, "Stop after N refreshes")->type_name("N");
    ops->top_cmd->add_option("--where", ops->top.where, "Count only events this expression keeps (docs/cli.md)")
        ->type_name("EXPR");

    ops->metrics_cmd = app.add_subcommand("metrics", "Prometheus metrics of rings, once or served over HTTP");
    ops->metrics_cmd->add_option("RING", ops->metrics.rings, "Ring names or paths")->required();
    ops->metrics_cmd->add_option("--listen", ops->metrics.listen, "Serve GET /metrics on this address")
        ->type_name("HOST:PORT");
    return ops;
}

int run_ops_command(const OpsCommands& commands) {
    if (*commands.readers_cmd) return run_readers(commands.readers);
    if (*commands.top_cmd) return run_top(commands.top);
    if (*commands.metrics_cmd) return run_metrics(commands.metrics);
    return kExitUsage;
}

}  // namespace evring::cli
