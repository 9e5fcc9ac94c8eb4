// evring — see what is in an event ring, follow it, go back in time, keep
// what matters. docs/cli.md describes every command.
//
// CLI11 splits the command line; values are checked by each command
// (values.hpp) so every usage error is one line naming the option, the value
// and the reason, and CLI11's own errors (an unknown option, a missing
// argument) are reformatted to the same one-line shape.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "commands.hpp"
#include "output/escape.hpp"
#include "export/export_cmd.hpp"
#include "ops/gc.hpp"
#include "stats_cmd.hpp"
#include "digest_cmd.hpp"
#include "ops/ops_cmd.hpp"
#include "schema_cmd.hpp"

#ifdef EVRING_HAVE_NATS
#include "evring/nats/nats_source.hpp"
#include "nats_cmd.hpp"
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

template <class T>
void add_value(CLI::App* app, const std::string& name, std::optional<T>& target, const std::string& help,
               const std::string& type) {
    app->add_option(name, target, help)->type_name(type);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"evring: inspect, follow, snapshot and record event rings", "evring"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("evring ") + EVRING_VERSION_STRING);
    app.failure_message(one_line_failure);

    LsOptions ls;
    auto* ls_cmd = app.add_subcommand("ls", "List the rings in the default ring directory");
    ls_cmd->add_option("--dir", ls.directory, "List this directory instead");
    ls_cmd->add_flag("--json", ls.json, "One JSON object per ring");
    ls_cmd->add_flag("--all", ls.all, "Also list debris: temporary files of dead processes, orphan reader registries");

    GcOptions gc;
    auto* gc_cmd = app.add_subcommand("gc", "List (or, with --delete, remove) debris in the ring directory");
    gc_cmd->add_option("--dir", gc.directory, "Clean this directory instead");
    gc_cmd->add_flag("--delete", gc.remove, "Remove the debris (without it: a dry run)");
    gc_cmd->add_flag("--json", gc.json, "One JSON object per file");

    InfoOptions info;
    auto* info_cmd = app.add_subcommand("info", "Describe a ring, snapshot or recording");
    info_cmd->add_option("RING", info.ring, "Ring name or path, snapshot or recording")->required();
    info_cmd->add_flag("--json", info.json, "Print one JSON object");
    info_cmd->add_option("--schema", info.schema_file,
                         "Schema file describing the source, when it carries none (docs/schema.md)")
        ->type_name("FILE");
    add_value(info_cmd, "--max-snapshot-size", info.max_snapshot_size,
              "Refuse snapshots whose ring is larger (default 4G; binary units: 64K, 512M, 4G)", "SIZE");

    WatchOptions watch;
    auto* watch_cmd = app.add_subcommand("watch", "Print events as they arrive, or replay them");
    watch_cmd->add_option("RING", watch.ring, "Ring name or path, snapshot or recording")->required();
    watch_cmd->add_option("--from", watch.from,
                          "latest (default), oldest, SEQNO, -N, a time (2026-11-22T01:45:00Z, @EPOCH, -5s) or block:N");
    add_value(watch_cmd, "--until", watch.until, "Stop after this SEQNO or TIME", "SEQNO|TIME");
    add_value(watch_cmd, "--count", watch.count, "Stop after printing N events", "N");
    watch_cmd->add_option("--type", watch.types, "Only this event type (name or number; repeatable)")
        ->allow_extra_args(false);
    watch_cmd->add_option("--flow", watch.flows, "Only events with content_ext[INDEX] == VALUE; INDEX may be a flow tag's name (repeatable)")
        ->type_name("INDEX=VALUE")
        ->allow_extra_args(false);
    add_value(watch_cmd, "--where", watch.where,
              "Only events this expression keeps: type == TXN_LOG && address == 0x... (docs/cli.md)", "EXPR");
    watch_cmd->add_option("--format", watch.format, "text (default), hex, jsonl or csv");
    add_value(watch_cmd, "--fields", watch.fields,
              "Only these columns: seqno,type,time,nanos,payload_size, flow tags, payload fields by path", "A,B,C");
    watch_cmd->add_flag("--no-payload", watch.no_payload,
                        "jsonl decoded by a schema: leave the raw payload hex out (the fields carry it)");
    watch_cmd->add_option("--schema", watch.schema_file,
                          "Decode with this schema file when the source carries none (docs/schema.md)")
        ->type_name("FILE");
    add_value(watch_cmd, "--max-snapshot-size", watch.max_snapshot_size,
              "Refuse snapshots whose ring is larger (default 4G; binary units: 64K, 512M, 4G)", "SIZE");
    watch_cmd->add_flag("--follow-name", watch.follow_name,
                        "Keep following the ring's name when its writer exits and a new one "
                        "creates it (like tail -F); waits for the ring to be created");
    watch_cmd->add_flag("--wait", watch.wait,
                        "Wait for the ring to be created when it does not exist yet");
    watch_cmd->add_option("--member", watch.members, "Only this member of a ring set (repeatable)");
    watch_cmd->add_flag("--no-register", watch.no_register, "Do not announce this reader in the ring's reader registry");

    SnapshotOptions snapshot;
    auto* snapshot_cmd = app.add_subcommand("snapshot", "Write a zstd-compressed copy of a ring");
    snapshot_cmd->add_option("RING", snapshot.ring, "Ring name or path (or a snapshot)")->required();
    snapshot_cmd->add_option("-o,--output", snapshot.output, "Snapshot file to write")->required();
    add_value(snapshot_cmd, "--level", snapshot.level, "zstd level, 1 to 19 (default 3)", "LEVEL");
    snapshot_cmd->add_flag("--force", snapshot.force, "Replace an existing file (never the ring being copied)");

    RecordOptions record;
    auto* record_cmd = app.add_subcommand("record", "Follow a ring and write every event to disk");
    record_cmd->add_option("RING", record.ring, "Ring name or path, snapshot or recording")->required();
    record_cmd->add_option("-o,--output", record.output, "Recording file to create")->required();
    record_cmd->add_option("--from", record.from, "latest (default), oldest, SEQNO, -N or a time");
    add_value(record_cmd, "--until", record.until, "Stop after this SEQNO or TIME", "SEQNO|TIME");
    add_value(record_cmd, "--count", record.count, "Stop after N events", "N");
    add_value(record_cmd, "--rotate-size", record.rotate_size,
              "Start FILE.1, FILE.2, ... when a file reaches SIZE (binary units: 64K, 512M, 4G)", "SIZE");
    add_value(record_cmd, "--where", record.where, "Record only events this expression keeps (docs/cli.md)", "EXPR");
    record_cmd->add_flag("--no-compress", record.no_compress, "Write records without zstd");
    add_value(record_cmd, "--level", record.level, "zstd level, 1 to 19 (default 1)", "LEVEL");
    record_cmd->add_flag("--no-register", record.no_register, "Do not announce this reader in the ring's reader registry");
    record_cmd->add_flag("--wait", record.wait,
                         "Wait for the ring to be created when it does not exist yet");

    auto schema = add_schema_command(app);
    auto export_cmd = add_export_command(app);
    auto stats_cmd = add_stats_command(app);
    auto digest_cmd = add_digest_command(app);
#ifdef EVRING_HAVE_NATS
    // nats://HOST:PORT/STREAM is a source for watch and info (evring/nats/nats_source.hpp).
    evring::nats::register_nats_source_scheme();
    NatsCommands nats_commands;
    add_nats_commands(app, nats_commands);
#endif
    auto ops = add_ops_commands(app);

    std::vector<std::string> args = join_negative_values(argc, argv);
    std::reverse(args.begin(), args.end());  // CLI11 takes the vector in reverse order
    try {
        app.parse(args);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? kExitOk : kExitUsage;
    }
    if (*ls_cmd) return run_ls(ls);
    if (*gc_cmd) return run_gc(gc);
    if (*info_cmd) return run_info(info);
    if (*watch_cmd) return run_watch(watch);
    if (*snapshot_cmd) return run_snapshot(snapshot);
    if (*record_cmd) return run_record(record);
    if (schema->chosen()) return run_schema_command(*schema);
    if (export_cmd->chosen()) return run_export(*export_cmd);
    if (stats_cmd->chosen()) return run_stats(*stats_cmd);
    if (digest_cmd->chosen()) return run_digest(*digest_cmd);
#ifdef EVRING_HAVE_NATS
    if (*nats_commands.relay) return run_relay_command(nats_commands.relay_options);
    if (*nats_commands.mirror) return run_mirror(nats_commands.mirror_options);
#endif
    if (ops->chosen()) return run_ops_command(*ops);
    return kExitUsage;
}
