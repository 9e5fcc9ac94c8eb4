// tools/evring/digest_cmd.hpp — `evring digest SOURCE`: one SHA-256 over the
// events a source holds, so a live ring, its snapshot, its recording and a
// stream relayed from it can be checked to hold the same events.
// docs/cli.md, "evring digest" says what it covers.
//
// Thread safety: one thread.
#pragma once

#include <string>
#include <vector>

#include "digest_read.hpp"

namespace evring::cli {

struct DigestOptions {
    std::string source;
    ComparedReadOptions read;  // the selection, --name, the blanked words, --schema (digest_read.hpp)
    bool json = false;
};

// The exit code (commands.hpp); add_digest registers the command.
int run_digest(DigestOptions& options);

}  // namespace evring::cli
