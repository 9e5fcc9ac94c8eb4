// tools/evring/commands.hpp — the subcommands of `evring` and their options.
//
// Every subcommand has one shape: `Command add_X(CLI::App& app)` adds the
// subcommand and its options to `app` and returns it with the function that
// runs it; main.cpp is a table of these and runs the one CLI11 chose. The
// options live in the run function's closure, filled in by CLI11's parse.
//
// Each run returns the process exit code: 0 success, 1 runtime error
// (missing ring, unreadable or damaged input: everything readable is still
// shown; a failed write), 2 usage error (bad option values). Errors go to
// stderr as one line starting with "evring: " (report_error), naming the
// option or file, the value and the reason; names are shown through
// printable() (escape.hpp). Option values arrive as the text typed and are
// checked by values.hpp.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "capture/capture_options.hpp"
#include "event_selection.hpp"
#include "heal_option.hpp"
#include "interest_option.hpp"
#include "evring/error.hpp"

namespace CLI {
class App;
}

namespace evring::cli {

// One subcommand: `app` is what CLI11 parsed into (chosen when app->parsed());
// `run` runs it once, after parsing, and returns the exit code.
struct Command {
    CLI::App* app = nullptr;
    std::function<int()> run;
};

// Each adds one subcommand to `app`; main.cpp's table lists them in the
// order `evring --help` shows.
Command add_ls(CLI::App& app);               // ls.cpp
Command add_gc(CLI::App& app);               // gc.cpp
Command add_info(CLI::App& app);             // info.cpp
Command add_watch(CLI::App& app);            // watch.cpp
Command add_snapshot(CLI::App& app);         // snapshot.cpp
Command add_record(CLI::App& app);           // record.cpp
Command add_schema(CLI::App& app);           // schema_cmd.cpp: check, show, compile
Command add_export(CLI::App& app);           // export.cpp
Command add_stats(CLI::App& app);            // stats/stats.cpp
Command add_digest(CLI::App& app);           // digest.cpp
Command add_diff(CLI::App& app);             // diff/diff.cpp
Command add_relay(CLI::App& app);            // relay_cmd.cpp (with NATS)
Command add_mirror(CLI::App& app);           // mirror.cpp (with NATS)
Command add_readers(CLI::App& app);          // readers.cpp
Command add_top(CLI::App& app);              // top.cpp
Command add_metrics(CLI::App& app);          // metrics.cpp

inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;
inline constexpr int kExitUsage = 2;

struct LsOptions {
    std::string directory;  // empty: the default ring directory
    bool json = false;
    bool all = false;  // also the debris (gc.hpp)
};

struct InfoOptions {
    std::string ring;
    bool json = false;
    std::string schema_file;  // --schema FILE; empty: none
    std::optional<std::string> max_snapshot_size;
};

struct WatchOptions {
    std::string ring;
    EventSelection select{"latest"};  // --from ... --where, --member
    bool no_payload = false;           // --no-payload: decoded jsonl without the payload hex
    std::optional<std::string> fields;  // --fields a,b,c (field_columns.hpp)
    std::string format = "text";
    std::optional<std::string> max_snapshot_size;
    bool follow_name = false;
    bool follow = false;  // a recording being written: read it as it grows
    bool wait = false;        // --wait: wait for the ring to be created (implied by --follow-name)
    std::string schema_file;  // --schema FILE; empty: none
    bool no_register = false;  // stay out of the ring's reader registry
    InterestOption interest;   // --keywords K1,K2 --level N: register interest (docs/interest.md)
    HealOption heal;           // --heal, --heal-from: lapped gaps read from a recording (docs/healing.md)
    std::optional<std::string> assemble;  // --assemble SPAN: whole instances (assemble_sink.hpp)
    std::string stage;                    // --stage NAME: handed out once they reach it
};

struct SnapshotOptions {
    std::string ring;
    std::string output;
    std::optional<std::string> level;
    bool force = false;
};

struct RecordOptions {
    std::string ring;
    std::string output;
    EventSelection select{"latest"};  // --from, --until, --count, --where
    std::optional<std::string> rotate_size;
    bool no_compress = false;
    std::optional<std::string> level;
    std::optional<std::string> threads;  // --threads: compressing threads
    std::optional<std::string> io;       // --io auto|direct|buffered
    bool no_register = false;
    bool wait = false;  // --wait: wait for the ring to be created
    InterestOption interest;  // --keywords K1,K2 --interest-level N (--level is zstd's)
    CaptureOptions capture;   // --trigger, --before, --after, --cooldown, --max-captures (capture/)
};

int run_ls(const LsOptions& options);
int run_info(const InfoOptions& options);
int run_watch(WatchOptions& options);
int run_snapshot(const SnapshotOptions& options);
int run_record(RecordOptions& options);

// The texts several commands share in their --help.
inline constexpr const char* kMaxSnapshotSizeHelp =
    "Refuse snapshots whose ring is larger (default 4G; binary units: 64K, 512M, 4G)";
inline constexpr const char* kNoRegisterHelp = "Do not announce this reader in the ring's reader registry";
inline constexpr const char* kWaitHelp = "Wait for the ring to be created when it does not exist yet";

// Prints "evring: <message>" to stderr, control characters escaped.
void report_error(std::string_view message);
// A usage error (exit 2) or a runtime error (exit 1), reported.
int usage_error(const Error& error);
int runtime_error(const Error& error);
// A source read to its end that was damaged on the way (FollowResult::damaged):
// "'PATH' is damaged: <what the output holds>", then exit 1.
int damaged_error(std::string_view path, std::string_view what_the_output_holds);

}  // namespace evring::cli
