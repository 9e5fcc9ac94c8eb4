// include/evring/source/durable_source.hpp — an event source that keeps a
// named reader's position itself, on its server, instead of in a position
// file (docs/named-readers.md, "Streams"). nats::StreamReader is one: the
// position is a JetStream durable consumer named after the reader.
// NamedReader (lib/cursor) finds it with a dynamic_cast and talks to it only
// through this interface, so lib/cursor never depends on libnats.
//
// Contract:
// - durable_open() happens once, before the first seek(): it looks the name
//   up on the server and refuses one the server refuses, or one that exists
//   and was not made by evring (the error names both). `start_over` (reset,
//   or an explicit start): an existing one is deleted and the reader starts
//   at the next seek()'s position. Else an existing one is resumed: the next
//   seek() ignores its position and starts after the durable's ack floor.
//   On success the durable exists on the server (created or re-created).
// - durable_commit(last) acknowledges, on the server, every message whose
//   events are all at or below source seqno `last` (what was handed out and
//   written); a message of several events only partly handed out is not.
//   Returns once the server has confirmed it.
//
// Thread safety: the source's (one thread).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "evring/error.hpp"

namespace evring {

struct DurableResume {
    bool existed = false;           // false: a first run (or the durable was removed)
    bool resumed = false;           // the next seek() starts after the ack floor
    std::uint64_t floor_sequence = 0;  // the ack floor: the server's sequence (0: nothing acked yet)
    std::uint64_t floor_seqno = 0;     // the source seqno the floor's message ends at (0: before any event)
    bool floor_known = false;          // false: floor_seqno could not be found (no event near the floor)
    std::uint64_t unacked = 0;         // messages the previous consumer delivered and no one acked
    std::string where;              // "durable consumer 'n' of stream 'S' on HOST"
};

class DurableSource {
public:
    virtual Result<DurableResume> durable_open(std::string_view name, bool start_over) = 0;
    virtual Status durable_commit(std::uint64_t last) = 0;

protected:
    ~DurableSource() = default;
};

}  // namespace evring
