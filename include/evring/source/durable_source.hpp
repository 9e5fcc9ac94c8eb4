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
// - durable_commit(last, member) acknowledges, on the server, every message
//   handed out up to the event `last` of `member` (its ring set member; 0
//   for a ring) and written: the message holding that event when it is that
//   message's last, and every message before it in the stream. A message of
//   several events only partly handed out is not. Returns once the server
//   has confirmed it.
// - A ring set's stream (SourceIdentity::members): every member counts its
//   own seqnos, so the resume says each member's at the ack floor
//   (DurableResume::floor_members).
//
// Thread safety: the source's (one thread).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"

namespace evring {

struct DurableResume {
    bool existed = false;           // false: a first run (or the durable was removed)
    bool resumed = false;           // the next seek() starts after the ack floor
    std::uint64_t floor_sequence = 0;  // the ack floor: the server's sequence (0: nothing acked yet)
    std::uint64_t floor_seqno = 0;     // the source seqno the floor's message ends at (0: before any event)
    bool floor_known = false;          // false: floor_seqno could not be found (no event near the floor)
    std::uint64_t unacked = 0;         // messages the previous consumer delivered and no one acked
    // A ring set's stream: by member, the last seqno of that member's newest
    // event at or below the floor; 0 when none is within reach of the floor
    // (before any event of it, or a member quiet for long). Empty for a ring.
    std::vector<std::uint64_t> floor_members;
    std::string where;              // "durable consumer 'n' of stream 'S' on HOST"
};

class DurableSource {
public:
    virtual Result<DurableResume> durable_open(std::string_view name, bool start_over) = 0;
    virtual Status durable_commit(std::uint64_t last, std::uint32_t member) = 0;

protected:
    ~DurableSource() = default;
};

}  // namespace evring
