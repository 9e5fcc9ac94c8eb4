// tools/evring/nats_cmd.hpp — `evring relay` and `evring mirror`: rings
// through NATS JetStream (docs/distributed.md, docs/cli.md). Built when the
// NATS library is (EVRING_HAVE_NATS); `evring watch nats://...` needs only
// register_nats_source_scheme() at start-up (evring/nats/nats_source.hpp).
//
// Exit codes and error lines as commands.hpp.
//
// Thread safety: one thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "event_selection.hpp"
#include "heal_option.hpp"
#include "interest_option.hpp"
#include "read/reading.hpp"
#include "record/mirror_source.hpp"

namespace evring::cli {

struct RelayCommandOptions {
    std::string ring;
    std::string to;
    std::string stream;
    std::optional<std::string> subject;
    EventSelection select{"oldest"};  // --from (oldest, latest or SEQNO), --type, --flow, --where
    std::optional<std::string> flow_subject;
    std::optional<std::string> batch;
    std::optional<std::string> replicas;  // of the stream, when the relay creates it
    bool allow_other_ring = false;
    bool server_syncs = false;  // the server syncs every write: no durability warning
    bool no_register = false;  // stay out of the ring's reader registry
    bool wait = false;         // wait for the ring to be created (follow.hpp's wait_for_name)
    std::string schema_file;
    InterestOption interest;  // --keywords K1,K2 --level N (docs/interest.md)
    HealOption heal;          // --heal, --heal-from, --heal-wait (docs/healing.md)
    std::optional<std::string> assemble;  // --assemble SPAN: instances as JSON (relay_assemble.cpp)
    std::string stage;                    // --stage NAME, with --assemble
    bool no_payload = false;              // --no-payload, with --assemble
};

struct MirrorOptions {
    std::string stream;
    std::string to;
    EventSelection select{"oldest"};  // --from, --count, --where
    std::optional<std::string> seqno_tag;
    bool keep = false;
    bool no_register = false;
    std::string schema_file;
    InterestOption interest;  // --keywords K1,K2 --level N (docs/interest.md)
    std::optional<std::string> assemble;  // --assemble SPAN: instances as JSON events (mirror_assemble.cpp)
    std::string stage;                    // --stage NAME, with --assemble
    bool no_payload = false;              // --no-payload, with --assemble
};

// What a relay of events and a relay of assembled instances take alike: the
// server, the stream, the subject prefix, --heal, --from (oldest, latest or a
// SEQNO), --replicas, registration, the stop flag and the log. `Relay` is
// nats::RelayOptions or nats::AssembledRelayOptions.
template <class Relay>
Status plan_relay_target(const RelayCommandOptions& options, Relay& relay);

// The read pipeline's request of relay and mirror: the schema only when the
// filters or the interest name something, and the filters alone (their
// loops are the library's, which register the reader `reader_name` themselves).
Result<ReadRequest> filters_request(const std::string& location, const std::string& schema_file,
                                    const EventSelection& select, const InterestOption& interest, bool no_register,
                                    const char* reader_name);
// The stop handlers, then --wait: false when interrupted while waiting.
bool wait_to_relay(const RelayCommandOptions& options);

// add_relay and add_mirror (commands.hpp) register them.
int run_relay_command(RelayCommandOptions& options);
// relay --assemble SPAN (relay_assemble.cpp): lib/nats/assembled_relay.hpp.
int run_assembled_relay_command(RelayCommandOptions& options);
int run_mirror(const MirrorOptions& options);
// The job the options say (ring, sizes, --from, --count, --seqno-tag, --keep, registration).
Result<MirrorJob> plan_mirror(const MirrorOptions& options);
// mirror --assemble SPAN (mirror_assemble.cpp): lib/record/assembled_mirror.hpp.
int run_assembled_mirror(const MirrorOptions& options);

}  // namespace evring::cli
