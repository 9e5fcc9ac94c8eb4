// lib/record/record_source.hpp — recording a source: the one pipeline behind
// `evring record`, the C ABI's evring_source_record and Python's
// evring.record. The caller opens the source and says what to read (the
// follow options: start, stop, count, filter, --where, stop flag); this does
// the rest, the same for every caller:
//
//     evring::RecordJob job;
//     job.output = "out.evrec";
//     job.follow.start = evring::Position::oldest();
//     job.follow.count = 1000;
//     auto recorded = evring::record_source(source, job);
//     if (recorded && recorded->written) ... recorded->totals.events ...
//
// Contract:
// - The recording gets the source's schema blob in every file, its span
//   index from the schema's labels (found with the source's schema when
//   job.schema is null), the member id of every event of a ring set, and a
//   live ring's instance (healing readers take only a recording of theirs,
//   healer.hpp). The output must not exist (EEXIST names it).
// - Every event the follow loop keeps is recorded with its payload, and
//   every sequence number it did not capture as a gap marker with its
//   reason (record_sink.hpp); a --from N the ring no longer holds starts with
//   a gap marker for what it lacks.
// - The reader is registered in the ring's reader registry (kind "record",
//   detail "-> ABSOLUTE_PATH": lapped readers find the recording there to
//   heal from) unless job.register_reader is false, or fed to an existing
//   registration (job.registration: a binding's reader handle, already
//   registered), which is listed with that kind and detail while the
//   recording runs and as before afterwards. job.interest is registered
//   with a new registration.
// - A named reader (job.named, already resumed by the caller) commits only
//   what the recording's worker wrote and fdatasync'ed, at most once a
//   second and at the end (named_reader.hpp).
// - Ends as the follow loop does (count, stop position, the source's end,
//   the stop flag), or when job.keep_going says false (Recorded::stopped),
//   or when writing fails. The end record is written whenever writing has
//   not failed; when it has, Recorded::written says why, and every block
//   written before the failure stays readable (recording_writer.hpp).
// - Errors: the writer could not be created, the source failed, a named
//   reader could not commit.
//
// Thread safety: one thread runs a recording; job.follow.stop_flag may be
// set from any thread or a signal handler.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cursor/named_reader.hpp"
#include "evring/error.hpp"
#include "evring/schema/schema.hpp"
#include "evring/source/follow.hpp"
#include "recording/recording_writer.hpp"
#include "registry/reader_registration.hpp"
#include "sink/record_sink.hpp"
#include "sink/registering_sink.hpp"

namespace evring {

struct RecordJob {
    std::string output;
    FollowOptions follow;               // payloads are read whatever it says
    RecordingOptions recording;         // compress, level, rotation; the rest is set here
    const Schema* schema = nullptr;     // for the span index; null: the source's
    std::string reader_name = "record";  // as the registry lists it
    bool register_reader = true;
    RegisteringSink* registration = nullptr;  // an existing one to keep informed instead
    std::optional<std::uint64_t> interest;
    NamedReader* named = nullptr;
    RecordSink::Report report;           // progress and gap lines; null: quiet
    std::function<bool()> keep_going;    // asked every 50 ms or so; null: always
};

struct Recorded {
    FollowResult follow;
    RecordingTotals totals;
    std::string last_file;   // the file written last (rotation: FILE.N)
    Status written;          // why writing failed; ok otherwise
    bool stopped = false;    // job.keep_going said stop
    // Recorded by the direct path: a plain ring copied straight into the
    // recording, once per payload (record_run_sink.hpp says when it applies).
    bool direct = false;
};

Result<Recorded> record_source(std::unique_ptr<EventSource>& source, RecordJob& job);

// What a recording of `source` says beyond its events (the first point of
// the contract): its schema blob, span index (none when `schema` is null),
// member ids and origin instance. record_source calls it; so do the CLI's
// flight-recorder captures, whose files are recordings of the same source.
void describe_recording(const EventSource& source, const Schema* schema, RecordingOptions& options);

// How a recording ended: the one reading of Recorded that the CLI's words,
// the C ABI's EVRING_RECORD_* and Python's "ended" all come from.
enum class RecordEnd : std::uint8_t { End, Count, Until, Stopped, Failed };
RecordEnd record_end(const Recorded& recorded) noexcept;

// How a recording ended, in words: "reached --count", "interrupted", ...
std::string record_ended(const Recorded& recorded);

}  // namespace evring
