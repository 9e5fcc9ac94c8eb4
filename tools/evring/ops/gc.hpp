// tools/evring/ops/gc.hpp — `evring gc` and the debris section of `evring ls
// --all` (docs/cli.md, docs/hugepages.md).
//
// gc lists what killed processes left in a ring directory and its ring sets
// (temporary files of dead writers, a set member's included; reader
// registries of rings that are gone; rings and sets whose writers were
// killed) and, only with --delete, removes it; each removal is checked again
// under the file's lock (lib/files/ring_debris.hpp,
// lib/set/ring_set_debris.hpp). Exit 0, or 1 when a removal failed.
//
// Thread safety: one thread.
#pragma once

#include <string>

#include "evring/error.hpp"
#include "output/output.hpp"

namespace evring::cli {

struct GcOptions {
    std::string directory;  // empty: the default ring directory
    bool remove = false;    // --delete; otherwise a dry run
    bool json = false;
};

int run_gc(const GcOptions& options);

// `directory`, or the default ring directory when it is empty.
Result<std::string> ring_directory_or(const std::string& directory);

// The debris of `directory` for `ls --all`: a table (or one JSON object per
// file, each with a "debris" key naming its kind).
Status print_debris(OutputBuffer& out, const std::string& directory, bool json);
// One line saying how much debris there is and how to see it, or nothing.
void print_debris_hint(OutputBuffer& out, const std::string& directory);

}  // namespace evring::cli
