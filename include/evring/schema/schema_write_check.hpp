// lib/schema/schema_write_check.hpp — refusing an event its schema rules out, before it is published.
//
// How a writer checks an event:
//
//     evring::DecodeError e = evring::check_payload(schema, type, payload);   // schema_decode.hpp
//     if (!e.ok()) return fail(evring::describe_write_refusal(schema, e));
//     // "QUOTE (event type 2): a payload of 2 bytes, but its layout is exactly 48 bytes"
//
// Readers and writers apply one rule (check_payload): a payload is exactly the
// fixed part of its event type's layout plus each trailing array, the element
// count read from its count field. The typed writers of the C ABI
// (evring_writer_record with a schema), of Python (Writer.record) and the
// generated headers' check_payload_size refuse what it refuses; raw
// publishing (Publisher::reserve/commit, evring_writer_reserve/commit,
// Writer.record_raw) is unchecked unless asked to check.
//
// Contract: describe_write_refusal names the event type (name and number),
// the payload's size and the rule it breaks; for an unknown type it lists the
// schema's types (at most 8 of them, then how many more).
//
// Thread safety: free functions.
#pragma once

#include <string>

#include "evring/schema/schema.hpp"
#include "evring/schema/schema_decode.hpp"

namespace evring {

// The refusal in words; `error` comes from check_payload and is not ok().
std::string describe_write_refusal(const Schema& schema, const DecodeError& error);

// The layout rule of an event type in words: "exactly 48 bytes", or
// "a 32-byte fixed part, then name[name_length] of 1-byte elements".
std::string describe_payload_rule(const Schema& schema, const SchemaEvent& event);

}  // namespace evring
