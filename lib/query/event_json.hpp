// lib/query/event_json.hpp — one event as a JSON object, decoded with its
// schema: the object `evring watch --format jsonl` prints for a source with a
// schema, and each event inside an assembled span's object
// (assembled_json.hpp), so both spell an event one way.
//
// The keys, in order: seqno, member (a ring set's, when given), event_type,
// type_name (null for a type the schema lacks), payload_size,
// record_epoch_nanos, time (util/utc_time.hpp), content_ext (4 numbers), flow
// (the named flow tags, zeros included, when the schema names any), then
// fields (an object), or decode_error (the reason) when the payload does not
// decode or was lost; then payload (lower-case hex, null when lost) unless
// payload_hex is false. docs/cli.md shows examples.
//
// Thread safety: pure function; `out` is the caller's.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "evring/format.hpp"
#include "evring/schema/schema.hpp"

namespace evring {

struct EventJsonOptions {
    std::int64_t member = -1;  // a ring set's member to show, or -1 for none
    bool payload_hex = true;   // false: no "payload" key (watch --no-payload)
};

// What is known of the payload: its bytes, or that it was lost (expired,
// invalid) or not read, which decode_error then says.
enum class EventJsonPayload : std::uint8_t { Ok, Expired, NotRead };

// Appends the object, without a newline. Once `out` has grown to the longest
// event it allocates nothing (watch's printer reuses one string).
void append_event_json(std::string& out, const Schema& schema, const EventDescriptor& event,
                       EventJsonPayload state, std::span<const std::byte> payload,
                       const EventJsonOptions& options = {});

}  // namespace evring
