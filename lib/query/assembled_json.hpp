// lib/query/assembled_json.hpp — one assembled span instance
// (span_assembler.hpp) as one JSON object: what `evring watch --assemble SPAN
// --format jsonl` prints per line, what `evring relay --assemble` publishes
// per message and what `evring mirror --assemble` writes per event, byte for
// byte the same (docs/cli.md, "Assembled blocks").
//
// The keys, in order: span, label, state (complete, abandoned, broken), id
// (0x and hex, when the span names one), first_seqno, last_seqno,
// event_count, stages ([{stage, seqno, time}] in the order reached),
// reassembly_error ({lost_first, lost_last, lost}, broken only), begin (its
// first event), end (its end event, or null when it did not end), then each
// nested span's instances under the span's name ([{key, events}], nested
// spans by name, instances in the order they began) and other_events. Each
// event is an object of event_json.hpp; no member key, no newline.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "evring/schema/schema.hpp"
#include "query/span_assembler.hpp"

namespace evring {

struct AssembledJsonOptions {
    bool payload_hex = true;  // false: events without "payload" (watch --no-payload)
};

std::string assembled_json(const AssembledSpan& span, const Schema& schema, const AssembledJsonOptions& options = {});

// The instance's state in one word: its stage when complete (`stage`, the
// stage it was handed out at; "ended" when that is empty), else
// "abandoned" or "broken".
std::string_view assembled_state_word(const AssembledSpan& span, std::string_view stage);

// "SPAN:LABEL:ID:STATE" (ID in hex without 0x, empty when the span names
// none; STATE as assembled_state_word): one instance's name, the same
// whenever it is assembled again (the relay's Nats-Msg-Id).
std::string assembled_name(const AssembledSpan& span, std::string_view stage);

}  // namespace evring
