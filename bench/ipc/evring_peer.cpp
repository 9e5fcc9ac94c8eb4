// The evring peers of the harness: a writer that records events at a given
// rate (or flat out) and a spinning reader that copies every payload out and
// counts what it received, what it lost, and how late each event arrived.
#include "ipc/peers.hpp"

#include <immintrin.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_extension.hpp"
#include "evring/ring/ring_writer.hpp"
#include "support/bench_ring.hpp"

namespace evring::ipc {

namespace {

// Experiment (--compare-variant ntcopy): the payload written with streaming
// stores, which skip the read-for-ownership of each destination line (the
// ring's lines were last written a whole buffer ago and are in memory, not
// in any cache) and leave the line in memory for the reader instead of in
// the writer's cache. Streaming stores are not ordered by the release store
// of commit (W8), so an sfence orders them first. The reservation's space is
// the size rounded up to 16 bytes, and 16-byte aligned.
void copy_streaming(std::byte* to, const std::byte* from, std::size_t size) {
    for (std::size_t i = 0; i < size; i += 16)
        _mm_stream_si128(reinterpret_cast<__m128i*>(to + i),
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i)));
    _mm_sfence();
}

void publish_one(Publisher& publisher, const std::byte* source, std::size_t size, std::uint16_t type,
                std::uint64_t sequence, bool streaming) {
    Reservation r = publisher.reserve(size);
    r.descriptor().event_type = type;
    r.descriptor().content_ext[0] = sequence;
    // The source starts with the message head (stamped before reserve()).
    if (streaming)
        copy_streaming(r.payload(), source, size);
    else
        std::memcpy(r.payload(), source, size);
    publisher.commit(r);
}

// Events [first, first + n) as one batch of the array form (an array of n
// payloads of `size` bytes back to back: publish_many's path for typed
// events), each with its own flow tag, as publish_one sets one.
void publish_batch_of(Publisher& publisher, const std::byte* payloads, std::size_t size, std::uint64_t first,
                      std::size_t n, std::array<std::uint64_t, 4>* flows) {
    for (std::size_t i = 0; i < n; ++i) flows[i][0] = first + i;
    const std::uint64_t seqno = publisher.publish_batch(kDataEvent, payloads, static_cast<std::uint32_t>(size), n,
                                                        std::span<const std::array<std::uint64_t, 4>>(flows, n));
    if (seqno == 0) bench::die("evring-ipc writer: publish_batch refused a batch");
}

WriterSharing sharing_of(const std::string& word) {
    if (word == "exclusive") return WriterSharing::Exclusive;
    if (word == "auto") return WriterSharing::Auto;
    return WriterSharing::Shared;
}

// An owning writer (owned=1) creates its ring as an application does.
RingWriter create_writer_ring(const PeerOptions& options) {
    RingWriter writer = bench::create_owned_ring(options.text("path"), 20, 28);
    if (options.text("doorbell", "1") == "0") write_ring_extension(&writer.ring().header(), 0);
    return writer;
}

}  // namespace

int run_evring_writer(const PeerOptions& options) {
    const std::uint64_t entered = monotonic_nanos();
    std::optional<RingWriter> owner;
    std::optional<MappedRing> mapped;
    if (options.text("owned", "0") == "1")
        owner.emplace(create_writer_ring(options));
    else
        mapped.emplace(bench::map_ring(options.text("path"), Access::ReadWrite));
    const MappedRing& ring = owner ? owner->ring() : *mapped;
    Publisher publisher(ring, sharing_of(options.text("sharing")));
    const std::size_t size = std::max<std::size_t>(options.count("size", 64), sizeof(MessageHead));
    const std::uint64_t events = options.count("events", 1'000'000);
    const std::uint64_t batches = std::max<std::uint64_t>(options.count("batches", 1), 1);
    const double rate = options.number("rate", 0);
    const bool stamp = options.text("latency", "0") == "1";
    const bool streaming = options.text("copy", "memcpy") == "stream";
    // batch > 1: events published batch by batch (Publisher::publish_batch),
    // from `batch` payloads back to back; only flat-out runs without a
    // latency stamp (the writer figure).
    const std::size_t batch = std::clamp<std::size_t>(options.count("batch", 1), 1, Publisher::kMaxBatchEvents);
    if (batch > 1 && (stamp || rate > 0)) bench::die("evring-ipc writer: batch= is for flat-out runs without latency");
    // Room for the copy's last 16 bytes, which may run past `size`.
    PageBuffer source(size * batch + 16, std::byte{0x5a});
    std::vector<std::array<std::uint64_t, 4>> flows(batch);
    WriterLateLog late(stamp);

    std::vector<double> batch_ns;
    const double setup_ns = double(monotonic_nanos() - entered);  // map + construct
    wait_for_gate(options);
    const std::uint64_t per_batch = events / batches;
    const std::uint64_t start = wall_clock_nanos();
    std::uint64_t sent = 0;
    for (std::uint64_t b = 0; b < batches; ++b) {
        const std::uint64_t batch_start = wall_clock_nanos();
        const std::uint64_t batch_end = sent + per_batch;
        while (sent < batch_end) {
            // Paced senders check the clock once per 64 events at most.
            const std::uint64_t allowed =
                rate > 0 ? paced_allowance(rate, wall_clock_nanos() - start, std::min(batch_end, sent + 64))
                         : batch_end;
            for (; batch > 1 && sent + batch <= allowed; sent += batch)
                publish_batch_of(publisher, source.data(), size, sent + 1, batch, flows.data());
            for (; sent < allowed; ++sent) {
                // Only a latency run stamps its source: the floor's writer
                // copies an unchanged source, and writing the head just
                // before the copy reads it cost the others a failed
                // store-to-load forward per event (docs/performance.md,
                // "Issue 25, third pass").
                if (stamp) stamp_message(source.data(), sent + 1, true);
                publish_one(publisher, source.data(), size, kDataEvent, sent + 1, streaming);
                late.check(source.data());
            }
        }
        batch_ns.push_back(double(wall_clock_nanos() - batch_start) / double(per_batch));
    }
    const double elapsed = double(wall_clock_nanos() - start);
    stamp_message(source.data(), sent + 1, false);
    publish_one(publisher, source.data(), size, kEndEvent, sent + 1, streaming);
    ResultLine line;
    line.add("writer_ns_per_event", percentile(batch_ns, 0.5))
        .add("writer_events_per_s", double(sent) / elapsed * 1e9)
        .add("events", double(sent))
        .add("setup_ns", setup_ns)
        .add("claimed", publisher.holds_claim() ? 1 : 0);  // still on the plain path at the end
    late.report(line);
    line.print();
    return 0;
}

int run_evring_reader(const PeerOptions& options) {
    const std::uint64_t entered = monotonic_nanos();
    const MappedRing ring = bench::map_ring(options.text("path"), Access::ReadOnly);
    Iterator it(ring);
    it.seek(1);
    const bool latency = options.text("latency", "0") == "1";
    const std::uint64_t timeout_ns = options.count("timeout_ms", 5000) * 1'000'000;
    // Pause instructions after each NotReady: a reader that re-polls at once
    // keeps the slot the writer is about to write shared in its cache.
    const std::uint64_t backoff = options.count("backoff", 0);
    // As large as the largest payload of a run, like the classic reader's (a
    // buffer the size of the whole payload ring cost 0.9 s of page faults at
    // start, which under SCHED_FIFO used up the real-time budget mid-run).
    PageBuffer buffer(std::max<std::size_t>(options.count("size", 64), 1u << 20));
    LatencyLog log(latency, options.count("events", 1'000'000));

    std::uint64_t received = 0, expired = 0, first_ns = 0, last_progress = 0;
    bool ended = false;
    const double setup_ns = double(monotonic_nanos() - entered);  // map + construct
    print_ready();
    last_progress = wall_clock_nanos();
    EventDescriptor event{};
    std::uint64_t idle = 0, not_ready = 0;
    for (;;) {
        log.poll();
        const NextResult result = it.try_next(event);
        if (result == NextResult::NotReady) [[unlikely]] {
            ++not_ready;
            if ((++idle & 0xffff) == 0 && wall_clock_nanos() - last_progress > timeout_ns) break;
            for (std::uint64_t i = 0; i < backoff; ++i) _mm_pause();
            continue;
        }
        idle = 0;
        if (result != NextResult::Success) continue;  // Gap (counted by the iterator) or Abandoned
        if (event.event_type == kEndEvent) {
            ended = true;
            break;
        }
        const PayloadResult copied = copy_payload(ring, event, buffer.data(), buffer.size());
        if (copied != PayloadResult::Ok) {
            ++expired;
            continue;
        }
        if (received++ == 0) first_ns = wall_clock_nanos();
        log.record(buffer.data());
        if ((received & 0xfff) == 0) last_progress = wall_clock_nanos();
    }
    const double elapsed = double(wall_clock_nanos() - first_ns);
    ResultLine line;
    line.add("received", double(received))
        .add("lost", double(it.total_lost() + expired))
        .add("gap_lost", double(it.total_lost()))
        .add("abandoned", double(it.total_abandoned()))
        .add("expired", double(expired))
        .add("ended", ended ? 1 : 0)
        .add("reader_events_per_s", received > 1 ? double(received) / elapsed * 1e9 : 0)
        .add("not_ready_per_event", received > 0 ? double(not_ready) / double(received) : 0);
    line.add("setup_ns", setup_ns);
    log.report(line);
    line.print();
    return 0;
}

}  // namespace evring::ipc
