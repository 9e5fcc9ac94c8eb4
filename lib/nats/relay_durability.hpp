// lib/nats/relay_durability.hpp — what a relay's "nothing lost" holds under,
// said once when the stream cannot promise it (docs/distributed.md, "What
// 'nothing lost' holds under").
//
// A relay forgets an event once the server acknowledged it. JetStream
// acknowledges a message once it holds it (a majority of the stream's
// replicas holds it) in memory, before it is on disk: nats-server syncs its
// file store only every so often (every 2 minutes by default since 2.10; in
// 2.9, Debian 12's, every 60 s, not configurable), unless the server is
// configured with `jetstream { sync_interval: always }` (2.10 and later).
// The relay cannot see that setting: the server reports it on its HTTP
// monitoring port (/varz and /jsz: jetstream.config.sync_interval and
// sync_always, 2.10 and later) and to the system account, never on a
// client connection, where a stream's info says only its storage and its
// replicas. So the relay says, once, when it starts:
// - memory storage: a restart of the server loses everything in it;
// - file storage: an acknowledged event can be lost when the host(s) holding
//   it crash or lose power before the next sync, unless the operator says
//   the server syncs every write (RelayOptions::server_syncs_writes,
//   `evring relay --server-syncs`), which it takes on trust.
//
// Thread safety: a pure function.
#pragma once

#include <optional>
#include <string>

#include "evring/nats/nats_connection.hpp"

namespace evring::nats {

// The warning for `stream`, or nothing when it can promise what the relay
// says (file storage on a server said to sync every write).
std::optional<std::string> durability_warning(const StreamInfo& stream, bool server_syncs_writes);

}  // namespace evring::nats
