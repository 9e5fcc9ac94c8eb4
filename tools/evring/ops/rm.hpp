// tools/evring/ops/rm.hpp — `evring rm RING...`: remove rings and ring sets
// that no live writer holds (docs/cli.md).
//
// A ring: its file and its reader registry (left for its last reader when one
// still uses it), and the debris of its name; refused, naming the writer's
// pid, while a writer holds it (lib/files/dead_ring.hpp). A ring set: its
// whole directory (members, registries, temporary files, manifest); refused
// while a set writer holds it (lib/set/ring_set_debris.hpp). Anything else at
// the name is refused and left. Exit 0 when every name was removed, else 1.
//
// Thread safety: one thread.
#pragma once

#include <string>
#include <vector>

#include "commands.hpp"

namespace evring::cli {

struct RmOptions {
    std::vector<std::string> rings;  // names or paths, of rings or ring sets
};

int run_rm(const RmOptions& options);
Command add_rm(CLI::App& app);

}  // namespace evring::cli
