// evring-record-cost: the follow side of `evring record`, counted per event
// under callgrind by scripts/bench-record-counts (issue 35 item 2: within 2x
// of the reader's copy_payload path).
//
//   evring-record-cost MODE WRITE READ DIR
//     MODE   record | record_raw | copy; READ <= WRITE; DIR for the ring and
//            the recording
//
// Writes WRITE 64 B events into a fresh ring with evring's default
// publisher, then follows the first READ of them in read_events, never
// inlined, which the script alone counts (--toggle-collect): so the writer,
// set-up and the recording writer's worker thread (compression, checksums,
// write(2): its own thread, which never enters read_events) are left out.
// - record: what the recorder's follow thread does per event: Iterator::try_next,
//   RecordingWriter::begin_event, copy_payload into the space it gives,
//   end_event (zstd on the worker); record_raw: the same, --no-compress;
// - copy: the reader's path it is measured against: try_next + copy_payload
//   into a buffer (bench-counts' instructions_per_event_reader_64b).
// The follow loop of the CLI (FollowSink, tools/evring/record_sink.cpp) adds
// its own calls on top; this counts what the library does for it.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/publisher.hpp"
#include "recording/recording_writer.hpp"
#include "support/bench_ring.hpp"

namespace {

using namespace evring;

constexpr unsigned kDescriptorShift = 17;
constexpr unsigned kPayloadShift = 26;
constexpr std::size_t kSize = 64;
constexpr std::uint16_t kDataEvent = 7;

[[gnu::noinline]] void write_events(Publisher& publisher, std::uint64_t events) {
    std::byte source[kSize];
    for (std::size_t i = 0; i < kSize; ++i) source[i] = std::byte(i * 7);
    for (std::uint64_t seq = 1; seq <= events; ++seq) {
        Reservation r = publisher.reserve(kSize);
        r.descriptor().event_type = kDataEvent;
        r.descriptor().content_ext[0] = seq;
        std::memcpy(r.payload(), source, kSize);
        std::memcpy(r.payload(), &seq, sizeof seq);
        publisher.commit(r);
    }
}

// The counted loop: into the recording, or (writer null) into a buffer.
[[gnu::noinline]] std::uint64_t read_events(const MappedRing& ring, RecordingWriter* writer, std::byte* buffer,
                                            std::uint64_t events) {
    Iterator it(ring);
    it.seek(1);
    EventDescriptor event{};
    std::uint64_t ok = 0;
    for (std::uint64_t i = 0; i < events; ++i) {
        if (it.try_next(event) != NextResult::Success) break;
        if (writer == nullptr) {
            ok += copy_payload(ring, event, buffer, kSize) == PayloadResult::Ok;
            continue;
        }
        std::byte* dst = writer->begin_event(event);
        const bool intact = copy_payload(ring, event, dst, event.payload_size) == PayloadResult::Ok;
        if (!writer->end_event(intact)) break;
        ok += intact;
    }
    return ok;
}

int usage(const char* why) {
    std::fprintf(stderr, "evring-record-cost: %s\nusage: evring-record-cost record|record_raw|copy WRITE READ DIR\n", why);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) return usage("expected 4 arguments");
    const std::string mode = argv[1];
    const std::uint64_t events = std::strtoull(argv[2], nullptr, 10);
    const std::uint64_t to_read = std::strtoull(argv[3], nullptr, 10);
    if (mode != "record" && mode != "record_raw" && mode != "copy") return usage(("unknown mode " + mode).c_str());
    if (events == 0 || events >= (1u << kDescriptorShift) || events * kSize >= (1u << kPayloadShift) || to_read > events)
        return usage("WRITE must fit the ring without lapping it, READ <= WRITE");
    const std::string base = std::string(argv[4]) + "/evring-record-cost-" + std::to_string(::getpid());
    RingWriter owner = bench::create_owned_ring(base, kDescriptorShift, kPayloadShift);
    {
        Publisher publisher(owner.ring());
        write_events(publisher, events);
    }
    std::vector<std::byte> buffer(kSize);
    std::uint64_t read = 0;
    if (mode == "copy") {
        read = read_events(owner.ring(), nullptr, buffer.data(), to_read);
    } else {
        RecordingOptions options;
        options.compress = mode == "record";
        const std::string path = base + ".evrec";
        auto writer = RecordingWriter::create(path, owner.ring().header(), options);
        if (!writer) bench::die(writer.error().message());
        read = read_events(owner.ring(), &*writer, buffer.data(), to_read);
        if (auto s = writer->finish(); !s) bench::die(s.error().message());
        if (writer->totals().events != read) bench::die("the recording lost events");
        ::unlink(path.c_str());
    }
    std::printf("mode %s written %llu read %llu\n", mode.c_str(), static_cast<unsigned long long>(events),
                static_cast<unsigned long long>(read));
    return read == to_read ? 0 : 1;
}
