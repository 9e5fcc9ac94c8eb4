// evring/nats_source.hpp — a relayed JetStream stream as an evring::EventSource.
//
//     evring::nats::register_nats_source_scheme();                  // once, at start-up
//     auto source = evring::open_source("nats://127.0.0.1:4222/DEMO", {});
//     // ... then exactly as for a ring: follow.hpp, schema_resolve.hpp
//
// Wraps StreamReader (nats_reader.hpp), so `evring watch nats://HOST:PORT/STREAM`
// takes the same options and prints the same formats as for a ring.
//
// Contract (event_source.hpp's, with these specifics):
// - Identity: kind Stream; path is the URL without credentials; content type,
//   schema hash, ring sizes and instance come from the stream's newest
//   announcement (the instance is the relay's 16 hex digits read back). A
//   stream without any announcement is refused ("holds no relayed ring").
// - schema(): the blob the relay published (the stream's newest schema
//   message, read at open, or a newer one the reader met), so
//   resolve_schema (schema_resolve.hpp) decodes the events on this host.
// - Events carry the source ring's descriptors unchanged: seqno, type, flow
//   tags, timestamp, payload. Gaps are exact (the relay's gap messages, and
//   sequence numbers the stream does not hold, as LostToDamage with a detail).
// - Messages that are not evring's (or do not decode) are skipped, counted in
//   counters().foreign, and the first of each kind is a Notice.
// - seek(): oldest -> the stream's first message; latest -> the newest event;
//   SEQNO -> the first event at or after it (bisecting the stream); -N -> N
//   events back from the newest; TIME -> the server's store time (relative
//   times from the wall clock). Reading without seek starts at the oldest.
// - narrow(): a single --type on a stream of unbatched messages with numeric
//   subjects becomes the consumer's subject filter (the server then sends
//   only those events); anything else is filtered here, by the follow loop.
// - live() is true: a stream never ends; NotReady then wait() blocks on the
//   subscription (no spin). A server outage is waited for; a stream deleted
//   or re-created under the reader is Failed, naming it.
//
// Thread safety: as EventSource (one thread at a time).
#pragma once

#include <memory>
#include <string_view>

#include "evring/error.hpp"
#include "evring/event_source.hpp"
#include "evring/nats_connection.hpp"
#include "evring/source_open.hpp"

namespace evring::nats {

// Opens `location` ("nats://[CREDENTIALS@]HOST[:PORT]/STREAM").
Result<std::unique_ptr<EventSource>> open_stream_source(std::string_view location, const ConnectOptions& connect = {});

// Registers open_stream_source for "nats://" with open_source (source_open.hpp).
void register_nats_source_scheme();

}  // namespace evring::nats
