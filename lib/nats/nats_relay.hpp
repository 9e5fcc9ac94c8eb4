// lib/nats/nats_relay.hpp — a ring (or any event source) into a JetStream stream.
//
//     evring::nats::RelayOptions options;
//     options.source = "demo";                                   // open_source location
//     options.url = *evring::nats::parse_url("nats://127.0.0.1:4222");
//     options.stream = "DEMO";
//     options.stop_flag = &g_stop;                               // set by a signal handler
//     auto result = evring::nats::run_relay(options);            // returns when stopped
//
// What `evring relay` runs; the Python package and other programs call it too.
//
// Contract:
// - Drives the library's follow loop (follow.hpp): the relay sleeps on the
//   ring's doorbell when caught up and never spins. Each event goes to a
//   StreamPublisher (nats_publisher.hpp); while its window is full or the
//   server is away the relay waits in the publisher (back-off) and keeps its
//   ring position, so the ring absorbs the delay; what the ring overwrites
//   meanwhile comes out of the follow loop as a gap and is published as one
//   gap message with the exact range.
// - Resume: when the stream already ends with this ring instance, the relay
//   starts at the next sequence number the stream lacks (options.start is
//   then ignored, so a restart never duplicates nor skips); when that event
//   has left the ring, a gap message covers exactly the missing range.
//   Otherwise the relay announces the ring instance and publishes its schema
//   blob (when the ring carries one), then starts at options.start.
//   Messages that are not evring's (another client's) at the stream's end are
//   passed over, logged once; a stream holding them and no relayed ring is
//   refused.
// - A ring re-created under the same name (a new writer) is followed by name
//   and announced as a new instance, with its schema (live rings and live
//   ring sets; a set its writer removed is waited for likewise). What the new
//   writer overwrote before it was opened is a RingReplaced gap, per member
//   for a set, each published with its member.
// - An event whose payload was overwritten before it could be copied
//   (PayloadState::Expired) or cannot fit the ring (Invalid) is published as a
//   one-event gap (FellBehind, LostToDamage); contiguous ones are merged.
// - Batching: events_per_message (default 64) events travel per message,
//   which is what makes small events fast (docs/distributed.md, "Figures");
//   1 gives one message per event, with subjects the server can filter.
// - Seen: on a live ring the relay is a registered reader (register_reader),
//   so `evring readers` shows how far behind the ring it is; waiting in the
//   publisher (a full window, an outage) it keeps its heartbeat, so it is
//   listed alive however long the server is away.
// - Durability: once the stream is open, logs one warning when the stream
//   cannot promise that what the server acknowledged survives (memory
//   storage; file storage not said to be synced at every write:
//   relay_durability.hpp).
// - Returns when the stop flag is set (after flushing, at most flush_timeout),
//   when a non-live source (snapshot, recording) ends, or with an error when
//   the publisher fails for good (stream deleted or re-created, refused
//   message) or the source fails.
//
// Thread safety: run_relay runs on the calling thread; the stop flag may be
// set from any thread or a signal handler. `log` is called on that thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "evring/ring/interest.hpp"
#include "evring/error.hpp"
#include "evring/source/flow_filter.hpp"
#include "evring/source/follow.hpp"
#include "evring/nats/nats_connection.hpp"
#include "nats/nats_publisher.hpp"
#include "evring/source/position.hpp"

namespace evring::nats {

inline constexpr std::uint32_t kDefaultEventsPerMessage = 64;

struct RelayOptions {
    std::string source;  // what open_source opens: a ring name or path, a snapshot, a recording
    SourceOptions source_options;
    Url url;             // the server (its stream part is ignored)
    ConnectOptions connect;
    std::string stream;
    std::string prefix;  // subject prefix; empty: "evring.STREAM"
    int flow_token = -1; // 0..3: subjects carry content_ext[flow_token]
    Position start = Position::oldest();  // for a stream not yet holding this ring instance
    FlowFilter filter;   // relay only these events (announced as filtered)
    // Then only the events this keeps (`--where`, where.hpp; announced as
    // filtered); null: none. Must outlive run_relay.
    const EventPredicate* where = nullptr;
    std::uint32_t events_per_message = kDefaultEventsPerMessage;
    bool allow_other_ring = false;
    // The operator's word that the server syncs every write to disk
    // (`jetstream { sync_interval: always }`): the relay cannot see it, and
    // otherwise warns once that acknowledged events on file storage can be
    // lost to a crash of their host (relay_durability.hpp).
    bool server_syncs_writes = false;
    StreamSpec stream_spec;  // name and prefix are filled in from the above
    const std::atomic<bool>* stop_flag = nullptr;
    std::chrono::milliseconds flush_timeout{5000};
    // Progress and warnings for people, one line each (nothing when empty).
    std::function<void(std::string_view)> log;
    // A live ring's relay announces itself in the ring's reader registry
    // (registering_sink.hpp) under this name, kind Relay, with the server and
    // stream as its detail; false stays out of it (`evring relay --no-register`).
    bool register_reader = true;
    std::string reader_name = "relay";
    // What the registered relay wants (interest.hpp, docs/interest.md):
    // writers skip what no registered reader wants. Everything by default.
    std::uint64_t interest = kInterestEverything;
};

struct RelayResult {
    PublisherStats publisher;
    FollowResult follow;
    std::uint64_t first_seqno = 0;   // where relaying started (0: nothing to relay)
    bool resumed = false;            // the stream already held this ring instance
    std::uint64_t resume_gap = 0;    // sequence numbers lost between the stream's end and the ring
    std::uint64_t outages = 0;       // times the server was found unavailable
};

// The prefix a relay uses for `stream` when none is given: "evring.STREAM".
std::string default_prefix(std::string_view stream);

// The ring identity published for a source: its location as the name, its
// instance id in 16 hex digits, content type, schema hash and sizes.
RingIdentity ring_identity(const EventSource& source, std::string_view name);

Result<RelayResult> run_relay(const RelayOptions& options);
// The same, over `source` already opened from options.source (a caller that
// looked names up in it first opens it once); it is positioned afresh.
Result<RelayResult> run_relay(const RelayOptions& options, std::unique_ptr<EventSource> source);

}  // namespace evring::nats
