// lib/record/mirror_source.hpp — mirroring a source into a new local ring:
// the pipeline behind `evring mirror`, so local programs read a relayed
// stream (or any source) with the ordinary reader API and CLI. The caller
// opens the source and says what to read (the follow options: start, count,
// filter, --where, stop flag) and which ring to create; this does the rest:
//
//     evring::MirrorJob job;
//     job.ring = evring::parse_ring_config("copy").value();
//     job.follow.start = evring::Position::oldest();
//     auto mirrored = evring::mirror_source(source, job);
//     if (mirrored) ... mirrored->events ...
//
// Contract:
// - The mirror ring gets the source ring's sizes (unless job.sizes_given),
//   its content type, schema hash and, when it embeds cleanly, its schema
//   blob; a schema that does not embed leaves the ring without one, and
//   says so. The ring file is removed when the mirror ends unless job.keep.
// - Every event the follow loop keeps is published into it with its
//   descriptor's type, time, content_ext (the source seqno in
//   content_ext[job.seqno_tag] when that is 0 to 3) and payload; the mirror
//   numbers its events itself (mirror_sink.hpp), and each change of the
//   mapping, each gap and each of the source's notices is reported.
// - The reader is registered in a live source ring's reader registry (kind
//   "mirror", detail "-> RING_PATH") unless job.register_reader is false;
//   job.interest is registered with it.
// - Ends as the follow loop does (count, the source's end, the stop flag),
//   or when an event does not fit the mirror ring.
// - Errors: the ring could not be created, the source failed, an event did
//   not fit (EFBIG, naming the sizes to give).
//
// Progress lines ("mirroring SOURCE into ring file PATH", the mapping, gaps)
// go to job.report, one line each without a prefix; null keeps quiet.
//
// Thread safety: one thread runs a mirror; job.follow.stop_flag may be set
// from any thread or a signal handler.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "evring/config.hpp"
#include "evring/error.hpp"
#include "evring/source/follow.hpp"
#include "sink/mirror_sink.hpp"

namespace evring {

struct MirrorJob {
    RingConfig ring;                  // the ring to create: its name and sizes
    bool sizes_given = false;         // false: the source ring's sizes, when it has them
    bool keep = false;                // leave the ring file when the mirror ends
    int seqno_tag = -1;               // content_ext index for the source seqno; -1: none
    FollowOptions follow;             // payloads are copied whatever it says
    std::string reader_name = "mirror";  // as the registry lists it
    bool register_reader = true;
    std::optional<std::uint64_t> interest;
    MirrorSink::Report report;        // progress, mapping and gap lines; null: quiet
};

struct Mirrored {
    FollowResult follow;
    std::uint64_t events = 0;  // published into the mirror ring
    std::string ring_path;     // the mirror ring's file
};

Result<Mirrored> mirror_source(std::unique_ptr<EventSource>& source, MirrorJob& job);

}  // namespace evring
