// tools/evring/commands.hpp — the subcommands of `evring` and their options.
//
// Each run_* returns the process exit code: 0 success, 1 runtime error
// (missing ring, unreadable or damaged input: everything readable is still
// shown; a failed write), 2 usage error (bad option values). Errors go to
// stderr as one line starting with "evring: " (report_error), naming the
// option or file, the value and the reason; names are shown through
// printable() (escape.hpp). Option values arrive as the text typed and are
// checked by values.hpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "evring/error.hpp"

namespace evring::cli {

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
    std::string from = "latest";
    std::optional<std::string> until;
    std::optional<std::string> count;
    std::vector<std::string> types;
    std::vector<std::string> flows;
    std::optional<std::string> where;  // --where EXPR (evring/query/where.hpp)
    bool no_payload = false;           // --no-payload: decoded jsonl without the payload hex
    std::optional<std::string> fields;  // --fields a,b,c (field_columns.hpp)
    std::string format = "text";
    std::optional<std::string> max_snapshot_size;
    bool follow_name = false;
    bool wait = false;        // --wait: wait for the ring to be created (implied by --follow-name)
    std::string schema_file;  // --schema FILE; empty: none
    bool no_register = false;  // stay out of the ring's reader registry
    std::vector<std::uint32_t> members;  // --member: only these ring set members (empty: all)
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
    std::string from = "latest";
    std::optional<std::string> until;
    std::optional<std::string> count;
    std::optional<std::string> rotate_size;
    std::optional<std::string> where;  // --where EXPR: record only the events it keeps
    bool no_compress = false;
    std::optional<std::string> level;
    bool no_register = false;
    bool wait = false;  // --wait: wait for the ring to be created
};

int run_ls(const LsOptions& options);
int run_info(const InfoOptions& options);
int run_watch(const WatchOptions& options);
int run_snapshot(const SnapshotOptions& options);
int run_record(const RecordOptions& options);

// Prints "evring: <message>" to stderr, control characters escaped.
void report_error(std::string_view message);
// A usage error (exit 2) or a runtime error (exit 1), reported.
int usage_error(const Error& error);
int runtime_error(const Error& error);

}  // namespace evring::cli
