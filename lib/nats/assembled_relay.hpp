// lib/nats/assembled_relay.hpp — `evring relay SRC --assemble SPAN [--stage
// S]`: whole span instances (Monad's blocks, query/span_assembler.hpp) into a
// JetStream stream as JSON, one message per instance, for any NATS client.
//
//     evring::nats::AssembledRelayOptions options;
//     options.url = *evring::nats::parse_url("nats://127.0.0.1:4222");
//     options.stream = "BLOCKS";
//     options.span = "block";
//     options.stage = "finalized";
//     auto result = evring::nats::run_assembled_relay(options, std::move(source), schema);
//
// Contract (docs/distributed.md, "Assembled blocks"):
// - Each message's body is the instance's object of query/assembled_json.hpp,
//   byte for byte what `watch --assemble SPAN --format jsonl` prints (without
//   the newline); its subject is PREFIX.SPAN.STATE (STATE the stage reached,
//   "ended", "abandoned" or "broken"); its Nats-Msg-Id is
//   SPAN:LABEL:ID:STATE (assembled_name()), so the stream's duplicate window
//   drops a message published twice. Abandoned and broken instances go out
//   too, as watch prints them.
// - The stream is marked (its description names the span: StreamInfo::
//   assembled_span) when the relay creates it; an existing stream must carry
//   this span's instances. evring's stream readers refuse such a stream by
//   name, and a relay of events refuses to write into it.
// - Resume: when the stream already holds instances, the relay reads back
//   from its newest message the names of the instances with the newest label
//   L, then skips every instance labelled below L and those of L already
//   there; the rest are published. Labels are taken to grow along the source
//   (Monad's block numbers do), so a restart publishes nothing twice and
//   skips nothing new.
// - A message larger than the server or stream accepts ends the relay with
//   an error naming the instance and its size (raise the server's
//   max_payload, or relay with payload_hex off). A server that does not
//   answer is asked again (the same message id: no duplicate) until it does
//   or the stop flag is set.
// - Returns when the stop flag is set, when a finished source (snapshot,
//   recording) ends (instances still open then are counted, not published),
//   or with an error.
//
// Thread safety: runs on the calling thread; the stop flag may be set from
// any thread or a signal handler; `log` is called on that thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "evring/error.hpp"
#include "evring/nats/nats_connection.hpp"
#include "evring/schema/schema.hpp"
#include "evring/source/follow.hpp"
#include "evring/source/position.hpp"
#include "query/assembled_json.hpp"

namespace evring::nats {

struct AssembledRelayOptions {
    Url url;  // the server (its stream part is ignored)
    ConnectOptions connect;
    std::string stream;
    std::string prefix;  // subject prefix; empty: "evring.STREAM"
    std::string span;    // a span of the schema with a label (Monad: "block")
    std::string stage;   // hand out at this stage ("" or "ended": when ended)
    AssembledJsonOptions json;
    Position start = Position::oldest();
    SourceOptions source_options;  // how a ring re-created under its name is opened again
    StreamSpec stream_spec;        // replicas and limits; name, prefix and span are filled in
    const std::atomic<bool>* stop_flag = nullptr;
    std::function<void(std::string_view)> log;  // people's lines (nothing when empty)
    bool register_reader = true;  // a live ring lists the relay as its reader "relay"
};

struct AssembledRelayResult {
    std::uint64_t published = 0;     // messages the stream took
    std::uint64_t duplicates = 0;    // messages the stream already had (its duplicate window)
    std::uint64_t skipped = 0;       // instances already in the stream (resume)
    std::uint64_t largest = 0;       // the largest message's size in bytes
    AssemblerCounts counts;          // what the assembler handed out, abandoned, broke, left unfinished
    FollowResult follow;
};

// `schema`: the source's (resolved by the caller); it must name `span`.
Result<AssembledRelayResult> run_assembled_relay(const AssembledRelayOptions& options,
                                                 std::unique_ptr<EventSource> source, const Schema& schema);

}  // namespace evring::nats
