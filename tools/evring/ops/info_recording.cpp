// evring info on a recording: one pass of the event source over the file to
// gather its counts and end, then the rendering. A damaged file is described
// too, and the exit code is then 1 (stderr names the damage).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>

#include "capture/capture.hpp"
#include "commands.hpp"
#include "output/escape.hpp"
#include "output/event_format.hpp"
#include "evring/ring/ring.hpp"
#include "ops/info.hpp"
#include "output/json.hpp"
#include "output/output.hpp"

namespace evring::cli {
namespace {

struct RecordingFacts {
    std::uint64_t events = 0, expired = 0, gaps = 0, lost = 0;
    std::uint64_t first_seqno = 0, last_seqno = 0, first_nanos = 0, last_nanos = 0;
    // FellBehind gaps before the first event: what a capture's ring (each
    // member's, in a set) had already overwritten of its window.
    std::vector<std::string> lapped_first;
    std::string ending = "clean";  // clean, truncated, damaged
    std::string notice;            // why, when not clean
    std::vector<std::string> damage;
};

Result<RecordingFacts> gather_recording(RecordingSource& source) {
    RecordingFacts f;
    SourceItem item;
    if (auto s = source.seek(Position::oldest()); !s) return std::move(s).error();
    for (;;) {
        switch (source.next(item)) {
        case SourceStep::Event: {
            const EventDescriptor& e = item.event.descriptor;
            (item.event.payload_state == PayloadState::Expired ? f.expired : f.events) += 1;
            if (f.first_seqno == 0) {
                f.first_seqno = e.seqno;
                f.first_nanos = e.record_epoch_nanos;
            }
            f.last_seqno = e.seqno;
            f.last_nanos = e.record_epoch_nanos;
            break;
        }
        case SourceStep::Gap:
            if (item.gap.reason == GapReason::LostToDamage) {
                f.damage.emplace_back(item.gap.detail);
                break;
            }
            if (f.first_seqno == 0 && item.gap.reason == GapReason::FellBehind)
                f.lapped_first.push_back(
                    fmt::format("{}seqno {}..{}", source.identity().members ? fmt::format("member {} ", item.gap.member)
                                                                            : std::string(),
                                item.gap.first_seqno, item.gap.last_seqno()));
            ++f.gaps;
            f.lost += item.gap.count;
            break;
        case SourceStep::Notice: f.damage.emplace_back(item.notice); break;
        case SourceStep::NotReady: break;
        case SourceStep::Failed: return source.error();
        case SourceStep::End: {
            const auto status = source.file_status();
            if (status == ReadStatus::Truncated) f.ending = "truncated";
            if (status == ReadStatus::DamagedEnd) f.ending = "damaged";
            if (f.ending != "clean") f.notice = source.reader().notice();
            return f;
        }
        }
    }
}

// How much of a capture's "before" window the file holds: from its first
// event to the trigger, at most what was asked for.
std::uint64_t held_before(const RecordingFileHeader& h, const RecordingFacts& f) {
    if (f.events + f.expired == 0 || f.first_nanos >= h.capture_trigger_nanos) return 0;
    return std::min(h.capture_trigger_nanos - f.first_nanos, h.capture_before_nanos);
}

// "trigger at T; asked for 0.500 s before it; holds events from 0.102 s
// before it; the ring had overwritten seqno 1..870" - what a capture file
// says of its window.
std::string capture_words(const RecordingFileHeader& h, const RecordingFacts& f) {
    std::string words = fmt::format("trigger at {}; asked for {} before it; holds events from {} before it",
                                    utc_time(h.capture_trigger_nanos), capture_seconds(h.capture_before_nanos),
                                    capture_seconds(held_before(h, f)));
    if (!f.lapped_first.empty())
        words += fmt::format("; the ring had overwritten {}", fmt::join(f.lapped_first, ", "));
    return words;
}

void render_json(const RecordingSource& source, const RecordingFacts& f, const std::string& next_file,
                 const ResolvedSchema& schema) {
    const RecordingReader& reader = source.reader();
    const RecordingFileHeader& h = reader.header();
    const SourceIdentity& id = source.identity();
    JsonObject o;
    o.string("typed", id.location).string("path", id.path).string("kind", to_string(SourceKind::Recording));
    o.number("version", h.version)
        .boolean("compressed", (h.flags & kRecordingZstd) != 0)
        .number("file_index", h.file_index)
        .number("file_size", reader.file_bytes())
        .number("content_type", h.content_type)
        .string("content_type_name", content_type_name(h.content_type))
        .string("schema_hash", hex_string(h.schema_hash));
    add_schema(o, schema);
    o.number("descriptor_capacity", h.ring_size.descriptor_capacity)
        .number("payload_buf_size", h.ring_size.payload_buf_size)
        .number("start_epoch_nanos", h.start_epoch_nanos)
        .number("events", f.events)
        .number("expired_payloads", f.expired)
        .number("gaps", f.gaps)
        .number("lost_events", f.lost)
        .number("first_seqno", f.first_seqno)
        .number("last_seqno", f.last_seqno)
        .number("first_event_nanos", f.first_nanos)
        .number("last_event_nanos", f.last_nanos)
        .number("schema_bytes", reader.schema().size())
        .number("damage_reports", reader.totals().damage_reports)
        .number("records_lost_to_damage", reader.totals().lost_to_damage)
        .string("end", f.ending);
    if (source.continued()) o.string("continued_in", next_file);
    if (h.capture_trigger_nanos != 0)
        o.number("capture_trigger_nanos", h.capture_trigger_nanos)
            .number("capture_before_nanos", h.capture_before_nanos)
            .number("capture_held_nanos", held_before(h, f));
    std::printf("%s\n", o.text().c_str());
}

void render_text(const RecordingSource& source, const RecordingFacts& f, const std::string& next_file,
                 const ResolvedSchema& schema) {
    const RecordingReader& reader = source.reader();
    const RecordingFileHeader& h = reader.header();
    Lines l;
    l.add("recording", source.identity().path);
    l.add("format", fmt::format("version {}, {}, file {} of a series, {} bytes", h.version,
                                (h.flags & kRecordingZstd) ? "zstd-compressed" : "uncompressed", h.file_index,
                                reader.file_bytes()));
    l.add("started", utc_time(h.start_epoch_nanos));
    l.add("content type", fmt::format("{} ({})", h.content_type, content_type_name(h.content_type)));
    l.add("schema hash", hex_string(h.schema_hash));
    add_schema(l, schema);
    if (!reader.schema().empty()) l.add("schema block", fmt::format("{} bytes", reader.schema().size()));
    l.add("source ring", fmt::format("{} descriptors, {} payload buffer", h.ring_size.descriptor_capacity,
                                     human_bytes(h.ring_size.payload_buf_size)));
    l.add("events", std::to_string(f.events) +
                        (f.events + f.expired ? fmt::format(" (seqno {}..{})", f.first_seqno, f.last_seqno) : ""));
    if (f.events + f.expired) l.add("time span", utc_time(f.first_nanos) + " .. " + utc_time(f.last_nanos));
    l.add("expired payloads", std::to_string(f.expired));
    l.add("gaps", fmt::format("{} ({} events lost)", f.gaps, f.lost));
    if (reader.totals().damage_reports > 0)
        l.add("damage", fmt::format("{} damaged part(s), at least {} records lost (evring watch names each)",
                                    reader.totals().damage_reports, reader.totals().lost_to_damage));
    if (h.capture_trigger_nanos != 0) l.add("capture", capture_words(h, f));
    l.add("end", f.ending == "clean" ? (source.continued() ? "clean, continued in " + next_file : "clean")
                                     : f.ending + ": " + f.notice);
    std::fputs(l.text.c_str(), stdout);
}

}  // namespace

int describe_recording(RecordingSource& source, bool json, const ResolvedSchema& schema) {
    auto facts = gather_recording(source);
    if (!facts) return runtime_error(facts.error());
    const std::string next_file = next_recording_path(source.identity().path, source.reader().header().file_index);
    if (json)
        render_json(source, *facts, next_file, schema);
    else
        render_text(source, *facts, next_file, schema);
    if (!source.damaged()) return kExitOk;
    std::fflush(stdout);
    for (const std::string& line : facts->damage) report_error(line);
    return kExitRuntime;
}

}  // namespace evring::cli
