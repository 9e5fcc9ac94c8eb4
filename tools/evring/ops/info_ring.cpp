// evring info on a ring file or snapshot: gather the header, control words
// and end events (under the SIGBUS guard), then render them.
#include <fmt/format.h>

#include <cstdio>
#include <optional>
#include <vector>

#include "commands.hpp"
#include "output/event_format.hpp"
#include "evring/ring/iterator.hpp"
#include "registry/reader_listing.hpp"
#include "evring/ring/ring_reader.hpp"
#include "evring/ring/shared_word.hpp"
#include "ring/sigbus_guard.hpp"
#include "ring/snapshot.hpp"
#include "ops/info.hpp"
#include "schema/schema_interest.hpp"
#include "output/json.hpp"
#include "ops/ops_cmd.hpp"
#include "output/output.hpp"

namespace evring::cli {
namespace {

// What the ring's mapping says, read in one guarded step (plain values only).
struct RingFacts {
    std::uint64_t newest = 0, oldest = 0;
    std::uint64_t next_byte = 0, window = 0, in_window = 0;
    EventDescriptor first{}, last{};
    bool have_first = false, have_last = false;
};

struct WriterFacts {
    bool live_file = false;
    std::vector<pid_t> pids;
    bool alive = false;
    std::optional<ReaderListing> readers;  // the reader registry, listed without reclaiming
};

Result<RingFacts> gather_ring(const MappedRing& ring) {
    RingFacts f;
    const bool whole = guard_sigbus([&] {
        const Iterator it(ring);
        f.newest = it.newest_seqno();
        f.oldest = f.newest == 0 ? 0 : it.oldest_seqno();
        // H: relaxed reads are enough for a description; a live ring may move on meanwhile.
        f.next_byte = shared::load_relaxed(ring.header().control.next_payload_byte);
        f.window = shared::load_relaxed(ring.header().control.buffer_window_start);
        f.in_window = f.next_byte - std::min(f.window, f.next_byte);
        f.have_first = f.oldest != 0 && it.read_descriptor(f.oldest, f.first);
        f.have_last = f.newest != 0 && it.read_descriptor(f.newest, f.last);
    });
    if (!whole) return Error(EFAULT, fmt::format("bus error reading ring file '{}': the file was truncated while "
                                                 "mapped", ring.path()));
    return f;
}

std::string percent(std::uint64_t part, std::uint64_t whole) {
    return fmt::format("{:.1f}%", whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string pids_text(const std::vector<pid_t>& pids) {
    std::string text;
    for (pid_t pid : pids) text += (text.empty() ? "" : ", ") + std::to_string(pid);
    return text;
}

void render_json(const RingSource& source, const RingFacts& f, const WriterFacts& w, const ResolvedSchema& schema) {
    const MappedRing& ring = *source.ring();
    const RingHeader& h = ring.header();
    const SourceIdentity& id = source.identity();
    JsonObject o;
    o.string("typed", id.location).string("path", id.path).string("kind", describe(id.kind));
    o.number("content_type", h.content_type)
        .string("content_type_name", content_type_name(h.content_type))
        .string("schema_hash", hex_string(h.schema_hash));
    add_schema(o, schema);
    o.number("descriptor_capacity", h.size.descriptor_capacity)
        .number("payload_buf_size", h.size.payload_buf_size)
        .number("context_area_size", h.size.context_area_size)
        .number("file_size", ring.layout().file_size)
        .number("page_size", ring.backing().page_size)
        .boolean("hugetlbfs", ring.backing().hugetlbfs)
        .number("last_seqno", f.newest)
        .number("oldest_seqno", f.oldest)
        .number("next_payload_byte", f.next_byte)
        .number("buffer_window_start", f.window)
        .number("payload_bytes_in_window", f.in_window)
        .string("instance", fmt::format("{:016x}", id.instance));
    if (f.have_first) o.number("oldest_event_nanos", f.first.record_epoch_nanos);
    if (f.have_last) o.number("newest_event_nanos", f.last.record_epoch_nanos);
    if (w.live_file) {
        std::vector<std::uint64_t> p(w.pids.begin(), w.pids.end());
        o.numbers("writer_pids", p).boolean("writer_alive", w.alive);
    }
    if (w.readers) {
        o.string("readers", readers_summary(*w.readers));
        o.string("interest", describe_interest(w.readers->interest, schema.schema ? &*schema.schema : nullptr))
            .string("interest_word", fmt::format("{:016x}", w.readers->interest));
    }
    if (const LoadedSnapshot* s = source.snapshot())
        o.number("compressed_size", s->compressed_size)
            .number("decompressed_size", s->decompressed_size)
            .number("padded_bytes", s->padded_bytes);
    std::printf("%s\n", o.text().c_str());
}

void render_text(const RingSource& source, const RingFacts& f, const WriterFacts& w, const ResolvedSchema& schema) {
    const MappedRing& ring = *source.ring();
    const RingHeader& h = ring.header();
    const LoadedSnapshot* snapshot = source.snapshot();
    Lines l;
    l.add(snapshot ? "snapshot" : "ring", source.identity().path);
    if (snapshot) {
        const auto& s = *snapshot;
        l.add("compressed", fmt::format("{} ({} bytes), decompressed {} bytes{}", human_bytes(s.compressed_size),
                                        s.compressed_size, s.decompressed_size,
                                        s.padded_bytes ? fmt::format(", padded with {} zero bytes (tail of the "
                                                                     "never-written payload area)", s.padded_bytes)
                                                       : ""));
    }
    l.add("content type", fmt::format("{} ({})", h.content_type, content_type_name(h.content_type)));
    l.add("schema hash", hex_string(h.schema_hash));
    add_schema(l, schema);
    l.add("descriptors", fmt::format("{} ({})", h.size.descriptor_capacity,
                                     human_bytes(h.size.descriptor_capacity * sizeof(EventDescriptor))));
    l.add("payload buffer", human_bytes(h.size.payload_buf_size));
    l.add("context area", human_bytes(h.size.context_area_size));
    l.add("file size", fmt::format("{} bytes", ring.layout().file_size));
    l.add("pages", snapshot ? "decompressed into memory (" + human_bytes(ring.backing().page_size) + " pages)"
                            : human_bytes(ring.backing().page_size) +
                                  (ring.backing().hugetlbfs ? " huge pages (hugetlbfs)" : " pages (not hugetlbfs)"));
    l.add("newest seqno", f.newest == 0 ? "none (no event written yet)"
                                        : std::to_string(f.newest) + (f.have_last ? " at " + utc_time(f.last.record_epoch_nanos)
                                                                                  : " (not committed)"));
    l.add("oldest seqno", f.oldest == 0 ? "none"
                                        : std::to_string(f.oldest) + (f.have_first ? " at " + utc_time(f.first.record_epoch_nanos)
                                                                                   : " (not readable)"));
    l.add("events available", fmt::format("{} of {} descriptor slots", f.newest == 0 ? 0 : f.newest - f.oldest + 1,
                                          h.size.descriptor_capacity));
    l.add("next payload byte", std::to_string(f.next_byte));
    l.add("window start", std::to_string(f.window));
    l.add("payload window", fmt::format("{} of {} in use ({}), {}", human_bytes(f.in_window),
                                        human_bytes(h.size.payload_buf_size), percent(f.in_window, h.size.payload_buf_size),
                                        f.next_byte >= h.size.payload_buf_size ? "buffer has wrapped" : "not wrapped yet"));
    if (w.live_file)
        l.add("writers", w.pids.empty() ? std::string("none") + (w.alive ? " listed (but a lock is held)" : "")
                                        : pids_text(w.pids) + (w.alive ? " (alive)" : " (gone)"));
    if (w.readers) {
        l.add("readers", readers_summary(*w.readers) + " (evring readers RING)");
        l.add("interest", interest_text(w.readers->interest, schema.schema ? &*schema.schema : nullptr));
    }
    std::fputs(l.text.c_str(), stdout);
}

}  // namespace

int describe_ring(RingSource& source, bool json, const ResolvedSchema& schema) {
    auto facts = gather_ring(*source.ring());
    if (!facts) return runtime_error(facts.error());
    WriterFacts writer;
    if (const RingReader* reader = source.reader()) {
        writer.live_file = true;
        writer.pids = reader->writer_pids();
        writer.alive = reader->writer_alive();
        // info only looks: dead readers are shown, their slots left for `evring readers`.
        ListingOptions look;
        look.reclaim_dead = false;
        if (auto listing = list_readers(*reader, look)) writer.readers = std::move(*listing);
    }
    if (json)
        render_json(source, *facts, writer, schema);
    else
        render_text(source, *facts, writer, schema);
    return kExitOk;
}

}  // namespace evring::cli
