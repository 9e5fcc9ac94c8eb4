// recording_index_corpus — writes a large indexed recording for
// scripts/bench-recording-index (docs/recording-format.md, "Indexes").
//
//   recording_index_corpus SNAPSHOT OUT.evrec GIGABYTES
//   recording_index_corpus --time FILE POSITION...
//
// Replays the events of SNAPSHOT (a real Monad snapshot) over and over into
// one uncompressed version 3 recording until it holds GIGABYTES: each pass
// shifts sequence numbers, times, the block flow tag and the span labels of
// the schema (block numbers) past the previous pass, and the span ids (read
// as a big-endian number in their last 8 bytes: the snapshots' block ids are
// the block numbers, zero-padded) by the same step, so the file reads like
// one long feed whose blocks count up, each with its own id. The schema is the snapshot's (built
// in), so `evring watch OUT --from block:N` works on it. Prints the events,
// blocks and bytes written, and the seqno and block number ranges.
//
// With --time, for each POSITION (as --from takes it): drops the page cache
// (as root; this process's code is loaded by then, so only the recording is
// cold), opens FILE, positions it with seek_source (the index) and reads the
// first event; then, cold again, reads FILE from its start up to that event
// (a scan). Prints both times in milliseconds.
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "query/recording_span_marks.hpp"
#include "recording/recording_index.hpp"
#include "recording/recording_writer.hpp"
#include "evring/schema/schema.hpp"
#include "evring/schema/schema_resolve.hpp"
#include "evring/source/source_open.hpp"
#include "query/span_seek.hpp"

#include <fcntl.h>
#include <unistd.h>

namespace {

struct Held {
    evring::EventDescriptor d;
    std::size_t at = 0;  // in the payload store
};

struct LabelAt {
    std::uint32_t offset = 0;
    std::uint32_t size = 0;
};

[[noreturn]] void die(const std::string& why) {
    fmt::print(stderr, "recording_index_corpus: {}\n", why);
    std::exit(1);
}

// EVRING_NO_DROP=1 (the script's --warm): never, on a shared machine.
bool drop_page_cache() {
    if (const char* no = std::getenv("EVRING_NO_DROP"); no != nullptr && std::string(no) == "1") return false;
    ::sync();
    const int fd = ::open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool ok = ::write(fd, "3", 1) == 1;
    ::close(fd);
    return ok;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The first event of `file` from `text`: its seqno, and the seek's notice.
std::uint64_t first_event(const std::string& file, const evring::Position& from, std::string& notice) {
    auto source = evring::open_source(file, {});
    if (!source) die(source.error().message());
    auto seek = evring::seek_source(**source, from);
    if (!seek) die(seek.error().message());
    notice = *seek;
    evring::SourceItem item;
    for (;;) {
        const auto step = (*source)->next(item, evring::PayloadRead::Copy);
        if (step == evring::SourceStep::Event) return item.event.descriptor.seqno;
        if (step == evring::SourceStep::End || step == evring::SourceStep::Failed) return 0;
    }
}

int time_positions(int argc, char** argv) {
    const std::string file = argv[2];
    bool cold = true;
    for (int i = 3; i < argc; ++i) {
        auto from = evring::parse_start(argv[i]);
        if (!from) die(from.error().message());
        cold = drop_page_cache() && cold;
        auto t0 = std::chrono::steady_clock::now();
        std::string notice;
        const std::uint64_t seqno = first_event(file, *from, notice);
        const double indexed = ms_since(t0);
        // The same event by a scan from the start.
        cold = drop_page_cache() && cold;
        t0 = std::chrono::steady_clock::now();
        std::string ignored;
        auto source = evring::open_source(file, {});
        if (!source) die(source.error().message());
        evring::SourceItem item;
        std::uint64_t read = 0;
        for (;;) {
            const auto step = (*source)->next(item, evring::PayloadRead::Copy);
            if (step == evring::SourceStep::End || step == evring::SourceStep::Failed) break;
            if (step == evring::SourceStep::Event && (++read, item.event.descriptor.seqno >= seqno)) break;
        }
        const double scan = ms_since(t0);
        fmt::print("{:<28} seqno {:>10}: index {:8.1f} ms, scan {:9.1f} ms ({} events read){}\n", argv[i], seqno,
                   indexed, scan, read, notice.empty() ? "" : " [" + notice + "]");
    }
    fmt::print("page cache: {}\n", cold ? "dropped before each lookup and each scan (cold)"
                                         : "NOT dropped (not root, or EVRING_NO_DROP=1): warm figures");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 4 && std::string(argv[1]) == "--time") return time_positions(argc, argv);
    if (argc != 4) die("usage: recording_index_corpus SNAPSHOT OUT.evrec GIGABYTES");
    const std::string out_path = argv[2];
    const std::uint64_t target = static_cast<std::uint64_t>(std::strtod(argv[3], nullptr) * 1e9);
    auto source = evring::open_source(argv[1], {});
    if (!source) die(source.error().message());
    auto resolved = evring::resolve_schema(**source);
    if (!resolved || !resolved->schema) die("the snapshot's schema is not known");
    const evring::Schema& schema = *resolved->schema;

    // Where each event type carries a span label (block numbers), to shift them per pass.
    std::vector<std::vector<LabelAt>> labels, ids;
    auto add = [&](std::vector<std::vector<LabelAt>>& to, std::uint16_t type, const std::string& path) {
        const evring::SchemaEvent* event = schema.event(type);
        if (event == nullptr || path.empty()) return;
        auto field = schema.find_field(*event, path);
        if (!field) return;
        if (to.size() <= type) to.resize(std::size_t{type} + 1);
        const std::uint32_t size = static_cast<std::uint32_t>(std::min<std::size_t>(schema.type(field->type).size, 8));
        // An id: its last 8 bytes (or fewer).
        const std::uint32_t at = &to == &ids ? field->offset + static_cast<std::uint32_t>(schema.type(field->type).size) - size
                                             : field->offset;
        to[type].push_back({at, size});
    };
    for (const auto& span : schema.spans()) {
        for (auto type : span.begin) add(labels, type, span.label), add(ids, type, span.id);
        for (const auto& stage : span.stages) add(labels, stage.event, stage.label), add(ids, stage.event, stage.id);
    }

    std::vector<Held> events;
    std::vector<std::byte> store;
    std::uint64_t low_label = ~std::uint64_t{0}, high_label = 0;
    if (auto s = (*source)->seek(evring::Position::oldest()); !s) die(s.error().message());
    evring::SourceItem item;
    for (;;) {
        const auto step = (*source)->next(item, evring::PayloadRead::Copy);
        if (step == evring::SourceStep::End) break;
        if (step == evring::SourceStep::Failed) die((*source)->error().message());
        if (step != evring::SourceStep::Event || item.event.payload_state != evring::PayloadState::Ok) continue;
        events.push_back({item.event.descriptor, store.size()});
        store.insert(store.end(), item.event.payload.begin(), item.event.payload.end());
        const auto type = item.event.descriptor.event_type;
        if (type < labels.size())
            for (const LabelAt& l : labels[type]) {
                std::uint64_t v = 0;
                std::memcpy(&v, item.event.payload.data() + l.offset, l.size);
                low_label = std::min(low_label, v);
                high_label = std::max(high_label, v);
            }
    }
    if (events.empty()) die("the snapshot holds no events");
    const std::uint64_t first_seqno = events.front().d.seqno;
    const std::uint64_t seqno_step = events.back().d.seqno - first_seqno + 1;
    const std::uint64_t nanos_step = events.back().d.record_epoch_nanos - events.front().d.record_epoch_nanos + 1'000'000;
    const std::uint64_t label_step = high_label >= low_label ? high_label - low_label + 1 : 0;

    evring::RingHeader header{};
    header.magic = evring::kRingMagic;
    header.content_type = (*source)->identity().content_type;
    header.schema_hash = (*source)->identity().schema_hash;
    header.size = (*source)->identity().ring_size;
    evring::RecordingOptions options;
    options.compress = false;  // the file's size on disk is what the benchmark is about
    options.schema = (*source)->schema();
    options.span_marker = evring::span_marker(schema);
    auto writer = evring::RecordingWriter::create(out_path, header, options);
    if (!writer) die(writer.error().message());

    const auto began = std::chrono::steady_clock::now();
    std::uint64_t passes = 0, written = 0;
    std::vector<std::byte> payload;
    while (writer->current_file_bytes() < target) {
        for (const Held& h : events) {
            evring::EventDescriptor d = h.d;
            d.seqno += passes * seqno_step;
            d.record_epoch_nanos += passes * nanos_step;
            if (d.content_ext[0] != 0) d.content_ext[0] += passes * seqno_step;  // the block flow tag
            std::byte* dst = writer->begin_event(d);
            std::memcpy(dst, store.data() + h.at, d.payload_size);
            if (d.event_type < labels.size())
                for (const LabelAt& l : labels[d.event_type]) {
                    std::uint64_t v = 0;
                    std::memcpy(&v, dst + l.offset, l.size);
                    v += passes * label_step;
                    std::memcpy(dst + l.offset, &v, l.size);
                }
            if (d.event_type < ids.size() && passes > 0)
                for (const LabelAt& l : ids[d.event_type]) {
                    if (std::size_t{l.offset} + l.size > d.payload_size) continue;
                    std::uint64_t v = 0;  // big-endian
                    for (std::uint32_t i = 0; i < l.size; ++i) v = (v << 8) | std::to_integer<std::uint64_t>(dst[l.offset + i]);
                    v += passes * label_step;
                    for (std::uint32_t i = l.size; i-- > 0; v >>= 8) dst[l.offset + i] = static_cast<std::byte>(v & 0xff);
                }
            if (auto s = writer->end_event(true); !s) die(s.error().message());
            ++written;
        }
        ++passes;
    }
    if (auto s = writer->finish(); !s) die(s.error().message());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    fmt::print("wrote {} events ({} passes of {}) in {:.1f} s, {:.2f} GB before compression (raw: the same on disk)\n",
               written, passes, events.size(), seconds, static_cast<double>(writer->current_file_bytes()) / 1e9);
    fmt::print("seqno {}..{}\n", first_seqno, first_seqno + passes * seqno_step - 1);
    fmt::print("block {}..{}\n", low_label, high_label + (passes - 1) * label_step);
    return 0;
}
