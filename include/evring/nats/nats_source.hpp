// evring/nats/nats_source.hpp — a relayed JetStream stream as an evring::EventSource.
//
//     evring::nats::register_nats_source_scheme();                  // once, at start-up
//     auto source = evring::open_source("nats://127.0.0.1:4222/DEMO", {});
//     // ... then exactly as for a ring: follow.hpp, schema_resolve.hpp
//
// The source is a StreamReader (nats_reader.hpp, whose contract it follows)
// on a connection of its own, so `evring watch nats://HOST:PORT/STREAM`
// takes the same options and prints the same formats as for a ring.
//
// Specifics of opening by URL:
// - Identity: location as given; path the URL without credentials. A stream
//   without any announcement is refused ("holds no relayed ring").
// - schema(): the blob the relay published (the stream's newest schema
//   message, read at open, or a newer one the reader met), so
//   resolve_schema (schema_resolve.hpp) decodes the events on this host.
// - Nothing is subscribed until seek() (or the first read, at the oldest).
//
// Thread safety: as EventSource (one thread at a time).
#pragma once

#include <memory>
#include <string_view>

#include "evring/error.hpp"
#include "evring/source/event_source.hpp"
#include "evring/nats/nats_connection.hpp"
#include "evring/source/source_open.hpp"

namespace evring::nats {

// Opens `location` ("nats://[CREDENTIALS@]HOST[:PORT]/STREAM").
Result<std::unique_ptr<EventSource>> open_stream_source(std::string_view location, const ConnectOptions& connect = {});

// Registers open_stream_source for "nats://" with open_source (source_open.hpp).
void register_nats_source_scheme();

}  // namespace evring::nats
