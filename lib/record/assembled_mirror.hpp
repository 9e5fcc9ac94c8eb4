// lib/record/assembled_mirror.hpp — `evring mirror SOURCE --to RING
// --assemble SPAN [--stage S]`: whole span instances (query/span_assembler.hpp)
// into a new local ring, one ASSEMBLED_SPAN event each, whose `json` is the
// object `watch --assemble` prints (assembled_schema.hpp has the content).
//
//     evring::AssembledMirror assemble{.span = "block", .stage = "finalized"};
//     auto mirrored = evring::mirror_assembled(source, job, source_schema, assemble);
//
// Contract:
// - The ring embeds the evring_assembled schema (content type 0x4153), not
//   the source's. Unless job.sizes_given, it gets 2^15 descriptors and the
//   library's default payload buffer, 256 MiB (2^28: an instance of up to
//   about 240 MiB, and some 30 blocks of Monad's mainnet before the oldest is
//   overwritten), never the source's sizes.
// - Each instance the assembler hands out (complete at the stage, abandoned,
//   broken by a gap) is one event, stamped with the time of the event that
//   completed it; the mirror numbers its events from 1. Instances still open
//   when the source ends are counted, not written.
// - An instance larger than the ring's payload limit ends the mirror with
//   EFBIG naming it (SPAN:LABEL:ID:STATE) and its size.
// - Registration, interest, the stop flag and the ring's removal unless
//   job.keep: as mirror_source (mirror_source.hpp).
//
// Thread safety: one thread runs it; job.follow.stop_flag may be set from any
// thread or a signal handler.
#pragma once

#include <memory>
#include <string>

#include "evring/error.hpp"
#include "evring/schema/schema.hpp"
#include "query/assembled_json.hpp"
#include "record/mirror_source.hpp"

namespace evring {

inline constexpr unsigned kAssembledDescriptorShift = 15;  // 2 MiB of descriptors
inline constexpr unsigned kAssembledPayloadBufShift = kDefaultPayloadBufShift;  // 256 MiB

struct AssembledMirror {
    std::string span;   // a span of the source's schema with a label
    std::string stage;  // "" or "ended": when ended; else that stage
    AssembledJsonOptions json;
};

struct AssembledMirrored {
    Mirrored mirrored;      // events: instances written
    AssemblerCounts counts; // handed out, abandoned, broken, unfinished
};

// `schema`: the source's; it must outlive the call.
Result<AssembledMirrored> mirror_assembled(std::unique_ptr<EventSource>& source, MirrorJob& job, const Schema& schema,
                                           const AssembledMirror& assemble);

}  // namespace evring
