// Writes the small seed corpus of every fuzz target into fuzz/corpus/<target>/
// (run by `scripts/fuzz --seeds`; the output is committed). Seeds are real
// rings, snapshots and recordings made with the library, cut down to what the
// targets need: a ring file's header section start (the target pads the rest
// with zeros), or the compact layout of reader_fuzz.cpp.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "evring/ring/iterator.hpp"
#include "evring/ring/publisher.hpp"
#include "recording/recording.hpp"
#include "evring/ring/ring.hpp"
#include "evring/ring/ring_extension.hpp"
#include "ring/snapshot.hpp"

namespace {

using Bytes = std::vector<unsigned char>;

void save(const std::string& dir, const std::string& name, const Bytes& bytes) {
    const std::string path = dir + "/" + name;
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
        std::perror(path.c_str());
        std::exit(1);
    }
    std::fclose(f);
}

void append(Bytes& out, const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    out.insert(out.end(), b, b + n);
}

struct Ring {
    int fd;
    evring::MappedRing ring;
};

Ring make_ring(unsigned dshift, unsigned pshift, int events, std::uint32_t payload_size) {
    const int fd = ::memfd_create("seed", MFD_CLOEXEC);
    evring::RingParams params;
    params.content.content_type = 1;
    params.descriptor_shift = dshift;
    params.payload_buf_shift = pshift;
    if (!evring::initialize_ring_file(fd, params, "seed").ok()) std::exit(1);
    auto ring = evring::MappedRing::map(fd, evring::Access::ReadWrite, "seed");
    if (!ring) std::exit(1);
    evring::Publisher publisher(*ring);
    for (int i = 0; i < events; ++i) {
        auto r = publisher.reserve(payload_size + static_cast<std::uint32_t>(i % 3));
        r.descriptor().event_type = static_cast<std::uint16_t>(2 + i % 5);
        std::memset(r.payload(), i & 0xff, r.descriptor().payload_size);
        publisher.commit(r);
    }
    return Ring{fd, std::move(ring).value()};
}

// The file's first bytes: the RING01 header, then the script bytes the target reads.
Bytes header_seed(const evring::MappedRing& ring, const Bytes& script) {
    Bytes out(256, 0);
    std::memcpy(out.data(), &ring.header(), sizeof(evring::RingHeader));
    out.insert(out.end(), script.begin(), script.end());
    return out;
}

Bytes reader_seed(const evring::MappedRing& ring, const Bytes& script) {
    Bytes out;
    const auto& c = ring.header().control;
    append(out, &c.last_seqno, 8);
    append(out, &c.next_payload_byte, 8);
    append(out, &c.buffer_window_start, 8);
    append(out, evring::extension_in(&ring.header()), 64);
    append(out, ring.descriptors(), ring.layout().size.descriptor_capacity * 64);
    append(out, ring.payload_buffer(), ring.layout().size.payload_buf_size);
    out.insert(out.end(), script.begin(), script.end());
    return out;
}

Bytes read_file(const std::string& path) {
    Bytes out;
    FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) std::exit(1);
    unsigned char buf[65536];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.insert(out.end(), buf, buf + n);
    std::fclose(f);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <fuzz/corpus directory>\n", argv[0]);
        return 2;
    }
    const std::string root = argv[1];
    // Scripts: try_next many times; seek to 1 then read; read_descriptor; reset.
    const Bytes walk = {3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    const Bytes mixed = {0, 4, 0, 5, 2, 0, 0, 0, 0, 0, 0, 0, 6, 7, 3, 60, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2};

    Ring small = make_ring(6, 12, 10, 40);
    Ring lapped = make_ring(6, 12, 150, 100);  // descriptors lapped, payload buffer wrapped
    Ring larger = make_ring(10, 16, 3, 8);

    const std::string map_dir = root + "/map_ring";
    save(map_dir, "min_ring_walk", header_seed(small.ring, walk));
    save(map_dir, "lapped_ring_mixed", header_seed(lapped.ring, mixed));
    save(map_dir, "shift_10_16", header_seed(larger.ring, walk));
    Bytes bad_magic = header_seed(small.ring, {});
    bad_magic[0] = 'X';
    save(map_dir, "bad_magic", bad_magic);
    save(map_dir, "short_header", Bytes(bad_magic.begin() + 0, bad_magic.begin() + 100));

    const std::string reader_dir = root + "/reader";
    save(reader_dir, "ten_events_walk", reader_seed(small.ring, walk));
    save(reader_dir, "lapped_mixed", reader_seed(lapped.ring, mixed));

    // A snapshot (the whole tiny ring as one zstd frame: a few KiB).
    const std::string snap_dir = root + "/snapshot";
    const std::string tmp_snap = "/tmp/evring-seed-snapshot.zst";
    {
        const int out = ::open(tmp_snap.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        auto stats = evring::write_snapshot(small.ring, out, tmp_snap, {19});
        ::close(out);
        if (!stats) {
            std::fprintf(stderr, "%s\n", stats.error().message().c_str());
            return 1;
        }
        save(snap_dir, "ten_events", read_file(tmp_snap));
        ::unlink(tmp_snap.c_str());
    }

    // Recordings of version 2 (the version 1 seeds four_events_raw and
    // four_events_zstd were written by the version 1 writer and are kept):
    // three blocks of records (two flushes), gaps with reasons, an expired
    // payload, and in the compressed one a schema block.
    const std::string rec_dir = root + "/recording";
    const std::string schema = "content_type = 1  # an opaque schema blob for the seed";
    for (bool compress : {true, false}) {
        const std::string tmp_rec = "/tmp/evring-seed-recording.evrec";
        ::unlink(tmp_rec.c_str());
        evring::RecordingOptions options;
        options.compress = compress;
        options.index = false;  // version 2 seeds
        if (compress) options.schema = std::as_bytes(std::span(schema));
        auto writer = evring::RecordingWriter::create(tmp_rec, small.ring.header(), options);
        if (!writer) {
            std::fprintf(stderr, "%s\n", writer.error().message().c_str());
            return 1;
        }
        for (std::uint64_t s = 1; s <= 6; ++s) {
            evring::EventDescriptor event{};
            evring::Iterator it(small.ring);
            if (!it.read_descriptor(s, event)) return 1;
            std::byte* dst = writer->begin_event(event);
            std::memcpy(dst, small.ring.payload_buffer() + (event.payload_buf_offset & small.ring.payload_mask()),
                        event.payload_size);
            if (!writer->end_event(s != 5).ok()) return 1;
            if ((s == 2 || s == 4) && !writer->flush().ok()) return 1;
        }
        if (!writer->append_gap(7, 2, evring::GapReason::FellBehind).ok() ||
            !writer->append_gap(9, 1, evring::GapReason::NeverCommitted).ok() || !writer->finish().ok())
            return 1;
        save(rec_dir, compress ? "v2_blocks_schema_zstd" : "v2_blocks_raw", read_file(tmp_rec));
        ::unlink(tmp_rec.c_str());
    }
    // 70 one-event blocks of the small ring's first event, 1 us apart, each
    // numbered by `number(i, event)` (its seqno, its member), into `path`.
    const auto record_70 = [&](const std::string& path, const evring::RecordingOptions& options,
                               auto number) -> bool {
        auto writer = evring::RecordingWriter::create(path, small.ring.header(), options);
        if (!writer) return false;
        evring::EventDescriptor event{};
        evring::Iterator it(small.ring);
        if (!it.read_descriptor(1, event)) return false;
        for (std::uint64_t i = 0; i < 70; ++i) {
            number(i, event);
            event.record_epoch_nanos += 1000;
            std::byte* dst = writer->begin_event(event);
            std::memcpy(dst, small.ring.payload_buffer() + (event.payload_buf_offset & small.ring.payload_mask()),
                        event.payload_size);
            if (!writer->end_event(true).ok() || !writer->flush().ok()) return false;
        }
        return writer->finish().ok();
    };
    // Recordings of version 3: 70 one-event blocks, so an index block after
    // the 64th and the last one before the end block, with span marks (every
    // third event opens a "block" labelled by its seqno).
    for (bool compress : {true, false}) {
        const std::string tmp_rec = "/tmp/evring-seed-recording.evrec";
        ::unlink(tmp_rec.c_str());
        evring::RecordingOptions options;
        options.compress = compress;
        options.span_marker = [](const evring::EventDescriptor& e, std::span<const std::byte>,
                                 std::span<evring::SpanMark> out) -> std::size_t {
            if (e.seqno % 3 != 0) return 0;
            out[0] = evring::SpanMark{evring::span_index_key("block"), 0, 1000 + e.seqno, e.seqno};
            return 1;
        };
        if (!record_70(tmp_rec, options, [](std::uint64_t i, evring::EventDescriptor& e) { e.seqno = i + 1; }))
            return 1;
        save(rec_dir, compress ? "v3_indexed_zstd" : "v3_indexed_raw", read_file(tmp_rec));
        ::unlink(tmp_rec.c_str());
    }
    // A ring set recording of version 3 (kRecordingRingSet): members 0 and 1
    // take turns, each counting from 1, in 70 one-event blocks, so its index
    // blocks carry member rows (kIndexMembers) for IndexQuery::member_seqno.
    {
        const std::string tmp_rec = "/tmp/evring-seed-recording.evrec";
        ::unlink(tmp_rec.c_str());
        evring::RecordingOptions options;
        options.compress = false;
        options.ring_set = true;
        const bool recorded = record_70(tmp_rec, options, [](std::uint64_t i, evring::EventDescriptor& e) {
            e.seqno = i / 2 + 1;
            e.reserved = static_cast<std::uint16_t>(i % 2);  // the member
        });
        if (!recorded) return 1;
        save(rec_dir, "v3_set_indexed_raw", read_file(tmp_rec));
        ::unlink(tmp_rec.c_str());
    }
    std::printf("seed corpus written under %s\n", root.c_str());
    return 0;
}
