// tools/evring/commands.hpp — the subcommands of `evring` and their options.
//
// Each run_* returns the process exit code: 0 success, 1 runtime error
// (missing ring, unreadable file, write failure), 2 usage error (bad option
// values). Errors go to stderr as one line starting with "evring: ".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "evring/snapshot.hpp"

namespace evring::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;
inline constexpr int kExitUsage = 2;

struct LsOptions {
    std::string directory;  // empty: the default ring directory
    bool json = false;
};

struct InfoOptions {
    std::string ring;
    bool json = false;
    std::uint64_t max_snapshot_size = kDefaultMaxSnapshotSize;
};

struct WatchOptions {
    std::string ring;
    std::string from = "latest";
    std::string until;
    std::uint64_t count = 0;  // 0: no limit
    std::vector<std::string> types;
    std::vector<std::string> flows;
    std::string format = "text";
    std::uint64_t max_snapshot_size = kDefaultMaxSnapshotSize;
};

struct SnapshotOptions {
    std::string ring;
    std::string output;
    int level = 3;
    bool force = false;
};

struct RecordOptions {
    std::string ring;
    std::string output;
    std::string from = "latest";
    std::uint64_t count = 0;
    std::uint64_t rotate_size = 0;
    bool no_compress = false;
    int level = 1;
};

int run_ls(const LsOptions& options);
int run_info(const InfoOptions& options);
int run_watch(const WatchOptions& options);
int run_snapshot(const SnapshotOptions& options);
int run_record(const RecordOptions& options);

// Prints "evring: <message>" to stderr.
void report_error(const std::string& message);

}  // namespace evring::cli
