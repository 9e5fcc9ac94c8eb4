// evring info: everything in a ring's header and control words, in words; or
// what a recording holds.
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "commands.hpp"
#include "event_format.hpp"
#include "evring/iterator.hpp"
#include "evring/shared_word.hpp"
#include "input.hpp"
#include "json.hpp"
#include "output.hpp"

namespace evring::cli {
namespace {

struct Lines {
    std::string text;
    void add(const char* label, const std::string& value) { text += fmt::format("{:<20} {}\n", label, value); }
};

std::string percent(std::uint64_t part, std::uint64_t whole) {
    return fmt::format("{:.1f}%", whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string pids_text(const std::vector<pid_t>& pids) {
    std::string text;
    for (pid_t pid : pids) text += (text.empty() ? "" : ", ") + std::to_string(pid);
    return text;
}

int describe_ring(const Input& input, bool json) {
    const MappedRing& ring = *input.ring();
    const RingHeader& h = ring.header();
    const RingLayout& layout = ring.layout();
    Iterator it(ring);
    const std::uint64_t newest = it.newest_seqno();
    const std::uint64_t oldest = newest == 0 ? 0 : it.oldest_seqno();
    // H: relaxed reads are enough for a description; a live ring may move on meanwhile.
    const std::uint64_t next_byte = shared::load_relaxed(h.control.next_payload_byte);
    const std::uint64_t window = shared::load_relaxed(h.control.buffer_window_start);
    const std::uint64_t in_window = next_byte - std::min(window, next_byte);
    EventDescriptor first{}, last{};
    const bool have_first = oldest != 0 && it.read_descriptor(oldest, first);
    const bool have_last = newest != 0 && it.read_descriptor(newest, last);
    std::vector<pid_t> pids;
    bool alive = false;
    if (input.live) {
        pids = input.live->writer_pids();
        alive = input.live->writer_alive();
    }

    if (json) {
        JsonObject o;
        o.string("typed", input.typed).string("path", input.path).string("kind", kind_name(input.kind));
        o.number("content_type", h.content_type)
            .string("content_type_name", content_type_name(h.content_type))
            .string("schema_hash", hex_string(h.schema_hash))
            .number("descriptor_capacity", h.size.descriptor_capacity)
            .number("payload_buf_size", h.size.payload_buf_size)
            .number("context_area_size", h.size.context_area_size)
            .number("file_size", layout.file_size)
            .number("page_size", ring.backing().page_size)
            .boolean("hugetlbfs", ring.backing().hugetlbfs)
            .number("last_seqno", newest)
            .number("oldest_seqno", oldest)
            .number("next_payload_byte", next_byte)
            .number("buffer_window_start", window)
            .number("payload_bytes_in_window", in_window);
        if (have_first) o.number("oldest_event_nanos", first.record_epoch_nanos);
        if (have_last) o.number("newest_event_nanos", last.record_epoch_nanos);
        if (input.live) {
            std::vector<std::uint64_t> p(pids.begin(), pids.end());
            o.numbers("writer_pids", p).boolean("writer_alive", alive);
        }
        if (input.snapshot)
            o.number("compressed_size", input.snapshot->compressed_size)
                .number("decompressed_size", input.snapshot->decompressed_size)
                .number("padded_bytes", input.snapshot->padded_bytes);
        std::printf("%s\n", o.text().c_str());
        return kExitOk;
    }
    Lines l;
    l.add(input.kind == InputKind::Snapshot ? "snapshot" : "ring", input.path);
    if (input.snapshot) {
        const auto& s = *input.snapshot;
        l.add("compressed", human_bytes(s.compressed_size) + " (" + std::to_string(s.compressed_size) +
                                " bytes), decompressed " + std::to_string(s.decompressed_size) +
                                " bytes" +
                                (s.padded_bytes ? ", padded with " + std::to_string(s.padded_bytes) +
                                                      " zero bytes (tail of the never-written "
                                                      "payload area)"
                                                : ""));
    }
    l.add("content type", std::to_string(h.content_type) + " (" +
                              std::string(content_type_name(h.content_type)) + ")");
    l.add("schema hash", hex_string(h.schema_hash));
    l.add("descriptors", std::to_string(h.size.descriptor_capacity) + " (" +
                             human_bytes(h.size.descriptor_capacity * sizeof(EventDescriptor)) + ")");
    l.add("payload buffer", human_bytes(h.size.payload_buf_size));
    l.add("context area", human_bytes(h.size.context_area_size));
    l.add("file size", std::to_string(layout.file_size) + " bytes");
    l.add("pages", input.snapshot ? "decompressed into memory (" + human_bytes(ring.backing().page_size) + " pages)"
                                  : human_bytes(ring.backing().page_size) +
                                        (ring.backing().hugetlbfs ? " huge pages (hugetlbfs)"
                                                                  : " pages (not hugetlbfs)"));
    l.add("newest seqno", newest == 0 ? "none (no event written yet)"
                                      : std::to_string(newest) +
                                            (have_last ? " at " + utc_time(last.record_epoch_nanos)
                                                       : " (not committed)"));
    l.add("oldest seqno", oldest == 0 ? "none"
                                      : std::to_string(oldest) +
                                            (have_first ? " at " + utc_time(first.record_epoch_nanos)
                                                        : " (not readable)"));
    l.add("events available", std::to_string(newest == 0 ? 0 : newest - oldest + 1) + " of " +
                                  std::to_string(h.size.descriptor_capacity) + " descriptor slots");
    l.add("next payload byte", std::to_string(next_byte));
    l.add("window start", std::to_string(window));
    l.add("payload window", human_bytes(in_window) + " of " + human_bytes(h.size.payload_buf_size) +
                                " in use (" + percent(in_window, h.size.payload_buf_size) + ")" +
                                (next_byte >= h.size.payload_buf_size ? ", buffer has wrapped"
                                                                      : ", not wrapped yet"));
    if (input.live)
        l.add("writers", pids.empty() ? std::string("none") + (alive ? " listed (but a lock is held)" : "")
                                      : pids_text(pids) + (alive ? " (alive)" : " (gone)"));
    std::fputs(l.text.c_str(), stdout);
    return kExitOk;
}

int describe_recording(Input& input, bool json) {
    RecordingReader& reader = *input.recording;
    const RecordingFileHeader& h = reader.header();
    std::uint64_t events = 0, expired = 0, gaps = 0, lost = 0;
    std::uint64_t first_seqno = 0, last_seqno = 0, first_nanos = 0, last_nanos = 0;
    std::string ending = "truncated";
    std::string notice;
    std::uint64_t continued = 0;
    Record record;
    for (;;) {
        auto status = reader.next(record);
        if (!status) {
            report_error(status.error().message());
            return kExitRuntime;
        }
        if (*status == ReadStatus::CleanEnd) break;
        if (*status == ReadStatus::Truncated || *status == ReadStatus::DamagedEnd) {
            if (*status == ReadStatus::DamagedEnd) ending = "damaged";
            notice = reader.notice();
            break;
        }
        switch (record.kind) {
        case RecordKind::Event:
        case RecordKind::ExpiredPayload:
            (record.kind == RecordKind::Event ? events : expired) += 1;
            if (first_seqno == 0) {
                first_seqno = record.event.seqno;
                first_nanos = record.event.record_epoch_nanos;
            }
            last_seqno = record.event.seqno;
            last_nanos = record.event.record_epoch_nanos;
            break;
        case RecordKind::Gap:
            ++gaps;
            lost += record.gap.lost_count;
            break;
        case RecordKind::End:
            ending = "clean";
            continued = record.end.flags & kEndContinued;
            break;
        case RecordKind::Damage: break;  // counted by reader.totals()
        }
    }
    const std::string next_file = next_recording_path(input.path, h.file_index);
    if (json) {
        JsonObject o;
        o.string("typed", input.typed).string("path", input.path).string("kind", "recording");
        o.number("version", h.version)
            .boolean("compressed", (h.flags & kRecordingZstd) != 0)
            .number("file_index", h.file_index)
            .number("file_size", reader.file_bytes())
            .number("content_type", h.content_type)
            .string("content_type_name", content_type_name(h.content_type))
            .string("schema_hash", hex_string(h.schema_hash))
            .number("descriptor_capacity", h.ring_size.descriptor_capacity)
            .number("payload_buf_size", h.ring_size.payload_buf_size)
            .number("start_epoch_nanos", h.start_epoch_nanos)
            .number("events", events)
            .number("expired_payloads", expired)
            .number("gaps", gaps)
            .number("lost_events", lost)
            .number("first_seqno", first_seqno)
            .number("last_seqno", last_seqno)
            .number("first_event_nanos", first_nanos)
            .number("last_event_nanos", last_nanos)
            .number("schema_bytes", reader.schema().size())
            .number("damage_reports", reader.totals().damage_reports)
            .number("records_lost_to_damage", reader.totals().lost_to_damage)
            .string("end", ending);
        if (continued) o.string("continued_in", next_file);
        std::printf("%s\n", o.text().c_str());
        return kExitOk;
    }
    Lines l;
    l.add("recording", input.path);
    l.add("format", "version " + std::to_string(h.version) +
                        ((h.flags & kRecordingZstd) ? ", zstd-compressed" : ", uncompressed") +
                        ", file " + std::to_string(h.file_index) + " of a series, " +
                        std::to_string(reader.file_bytes()) + " bytes");
    l.add("started", utc_time(h.start_epoch_nanos));
    l.add("content type", std::to_string(h.content_type) + " (" +
                              std::string(content_type_name(h.content_type)) + ")");
    l.add("schema hash", hex_string(h.schema_hash));
    l.add("source ring", std::to_string(h.ring_size.descriptor_capacity) + " descriptors, " +
                             human_bytes(h.ring_size.payload_buf_size) + " payload buffer");
    l.add("events", std::to_string(events) + (events + expired ? " (seqno " + std::to_string(first_seqno) + ".." +
                                                        std::to_string(last_seqno) + ")"
                                                  : ""));
    if (events + expired)
        l.add("time span", utc_time(first_nanos) + " .. " + utc_time(last_nanos));
    l.add("expired payloads", std::to_string(expired));
    l.add("gaps", std::to_string(gaps) + " (" + std::to_string(lost) + " events lost)");
    if (!reader.schema().empty()) l.add("schema", std::to_string(reader.schema().size()) + " bytes embedded");
    if (reader.totals().damage_reports > 0)
        l.add("damage", std::to_string(reader.totals().damage_reports) + " damaged part(s), at least " +
                            std::to_string(reader.totals().lost_to_damage) +
                            " records lost (evring watch names each)");
    l.add("end", ending == "clean" ? (continued ? "clean, continued in " + next_file : "clean")
                                   : ending + ": " + notice);
    std::fputs(l.text.c_str(), stdout);
    return kExitOk;
}

}  // namespace

int run_info(const InfoOptions& options) {
    auto input = open_input(options.ring, {options.max_snapshot_size, true});
    if (!input) {
        report_error(input.error().message());
        return kExitRuntime;
    }
    if (input->kind == InputKind::Recording) return describe_recording(*input, options.json);
    return describe_ring(*input, options.json);
}

}  // namespace evring::cli
