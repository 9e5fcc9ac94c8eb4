// tools/evring/digest_cmd.hpp — `evring digest SOURCE`: one SHA-256 over the
// events a source holds, so a live ring, its snapshot, its recording and a
// stream relayed from it can be checked to hold the same events.
// docs/cli.md, "evring digest" says what it covers.
//
// Thread safety: one thread.
#pragma once

#include <string>
#include <vector>

#include "event_selection.hpp"

namespace evring::cli {

struct DigestOptions {
    std::string source;
    EventSelection select{"oldest"};  // --from, --until, --count, --type, --flow, --where, --member
    bool blank_time = false;          // like Monad's digest -T
    bool blank_offset = false;        // -P
    bool blank_seqno = false;         // a mirror numbers its events itself
    std::vector<std::string> blank_flows;  // -C: flow tags by name or index
    std::string schema_file;
    bool json = false;
};

// The exit code (commands.hpp); add_digest registers the command.
int run_digest(DigestOptions& options);

}  // namespace evring::cli
