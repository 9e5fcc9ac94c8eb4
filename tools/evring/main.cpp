// evring — see what is in an event ring, follow it, go back in time, keep
// what matters. docs/cli.md describes every command.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "schema_cmd.hpp"

namespace {

using namespace evring::cli;

// "4G", "512M", "64KiB", "1000": bytes, binary units (CLI11's own parser,
// which refuses unknown units and sizes past 2^64).
void add_size_option(CLI::App* app, const std::string& name, std::uint64_t& target,
                     const std::string& help) {
    // CLI11 reads "-5" as 2^64 - 5: refuse a sign first.
    const CLI::Validator unsigned_size(
        [](std::string& text) {
            return text.find('-') == std::string::npos ? std::string() : "a size cannot be negative";
        },
        "");
    CLI::AsSizeValue binary_units(false);
    binary_units.description("");  // the help text says it
    app->add_option(name, target, help + " (binary units: 64K, 512M, 4G)")
        ->check(unsigned_size)
        ->transform(binary_units)
        ->type_name("SIZE");
}

// CLI11 takes "--from -5" for two options; join such pairs into "--from=-5".
std::vector<std::string> join_negative_values(int argc, char** argv) {
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        const bool takes_value = arg == "--from" || arg == "--until";
        if (takes_value && i + 1 < argc && argv[i + 1][0] == '-' && argv[i + 1][1] != '-') {
            args.push_back(arg + "=" + argv[++i]);
            continue;
        }
        args.push_back(std::move(arg));
    }
    return args;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"evring: inspect, follow, snapshot and record event rings", "evring"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "evring 0.1.0");

    LsOptions ls;
    auto* ls_cmd = app.add_subcommand("ls", "List the rings in the default ring directory");
    ls_cmd->add_option("--dir", ls.directory, "List this directory instead");
    ls_cmd->add_flag("--json", ls.json, "One JSON object per ring");

    InfoOptions info;
    auto* info_cmd = app.add_subcommand("info", "Describe a ring, snapshot or recording");
    info_cmd->add_option("RING", info.ring, "Ring name or path, snapshot or recording")->required();
    info_cmd->add_flag("--json", info.json, "Print one JSON object");
    add_size_option(info_cmd, "--max-snapshot-size", info.max_snapshot_size,
                    "Refuse snapshots whose ring is larger (default 4G)");

    WatchOptions watch;
    auto* watch_cmd = app.add_subcommand("watch", "Print events as they arrive, or replay them");
    watch_cmd->add_option("RING", watch.ring, "Ring name or path, snapshot or recording")->required();
    watch_cmd->add_option("--from", watch.from,
                          "latest (default), oldest, SEQNO, -N, or a time (2026-11-22T01:45:00Z, "
                          "@EPOCH, -5s)");
    watch_cmd->add_option("--until", watch.until, "Stop after this SEQNO or TIME");
    watch_cmd->add_option("--count", watch.count, "Stop after printing N events");
    watch_cmd->add_option("--type", watch.types, "Only this event type (name or number; repeatable)")
        ->allow_extra_args(false);
    watch_cmd->add_option("--flow", watch.flows, "Only events with content_ext[INDEX] == VALUE (repeatable)")
        ->type_name("INDEX=VALUE")
        ->allow_extra_args(false);
    watch_cmd->add_option("--format", watch.format, "text (default), hex or jsonl")
        ->check(CLI::IsMember({"text", "hex", "jsonl"}));
    add_size_option(watch_cmd, "--max-snapshot-size", watch.max_snapshot_size,
                    "Refuse snapshots whose ring is larger (default 4G)");

    SnapshotOptions snapshot;
    auto* snapshot_cmd = app.add_subcommand("snapshot", "Write a zstd-compressed copy of a ring");
    snapshot_cmd->add_option("RING", snapshot.ring, "Ring name or path")->required();
    snapshot_cmd->add_option("-o,--output", snapshot.output, "Snapshot file to write")->required();
    snapshot_cmd->add_option("--level", snapshot.level, "zstd level (default 3)")
        ->check(CLI::Range(1, 19));
    snapshot_cmd->add_flag("--force", snapshot.force, "Replace an existing file");

    RecordOptions record;
    auto* record_cmd = app.add_subcommand("record", "Follow a ring and write every event to disk");
    record_cmd->add_option("RING", record.ring, "Ring name or path")->required();
    record_cmd->add_option("-o,--output", record.output, "Recording file to create")->required();
    record_cmd->add_option("--from", record.from, "latest (default), oldest or SEQNO");
    record_cmd->add_option("--count", record.count, "Stop after N events");
    add_size_option(record_cmd, "--rotate-size", record.rotate_size,
                    "Start FILE.1, FILE.2, ... when a file reaches SIZE");
    record_cmd->add_flag("--no-compress", record.no_compress, "Write records without zstd");
    record_cmd->add_option("--level", record.level, "zstd level (default 1)")
        ->check(CLI::Range(1, 19));

    auto schema = add_schema_command(app);

    std::vector<std::string> args = join_negative_values(argc, argv);
    std::reverse(args.begin(), args.end());  // CLI11 takes the vector in reverse order
    try {
        app.parse(args);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? kExitOk : kExitUsage;
    }
    if (*ls_cmd) return run_ls(ls);
    if (*info_cmd) return run_info(info);
    if (*watch_cmd) return run_watch(watch);
    if (*snapshot_cmd) return run_snapshot(snapshot);
    if (*record_cmd) return run_record(record);
    if (schema->chosen()) return run_schema_command(*schema);
    return kExitUsage;
}
