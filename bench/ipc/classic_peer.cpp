// The classic RING01 peer: a writer and a reader that follow the protocol as
// the published description (../shared/seeds/002_*.txt) and docs/format.md
// lay it out for the reference implementation, written here from those facts
// so every evring figure has a same-run ratio against what users would
// otherwise pick. It shares no code with evring's Publisher or Iterator: it
// maps the file itself (one plain MAP_SHARED mapping, no double-mapped
// payload buffer, no doorbell, no membarrier) and finds the sections from
// the header fields.
//
// Writer, per event (steps K1..K7):
//   K1. now := clock_gettime(CLOCK_REALTIME)              (vDSO)
//   K2. s := last_seqno.fetch_add(1) + 1                  (lock xadd)
//   K3. o := next_payload_byte.fetch_add(aligned size)    (lock xadd)
//   K4. if o + n passes the buffer end: raise buffer_window_start by CAS, in
//       16 MiB steps, then a release fence before the payload stores
//   K5. slot.seqno := 0, relaxed, at reservation time
//   K6. the other descriptor fields with plain stores; the payload copied in
//   K7. slot.seqno := s, release
// Reader: seqno acquire; equal to the expected one: copy the descriptor,
// acquire fence, re-load the seqno (must be unchanged); copy the payload,
// acquire fence, check payload_buf_offset >= buffer_window_start.
//
// Bench code only, single-threaded per process; plain stores into shared
// memory are what the classic protocol does (the release store of K7 orders
// them), so this file is not built for ThreadSanitizer runs.
#include <vector>

#include "ipc/classic_ring.hpp"
#include "ipc/peers.hpp"

namespace evring::ipc {

int run_classic_writer(const PeerOptions& options) {
    const std::uint64_t entered = monotonic_nanos();
    ClassicRing ring;
    map_classic(options.text("path"), true, ring);
    const std::size_t size = std::max<std::size_t>(options.count("size", 64), sizeof(MessageHead));
    const std::uint64_t events = options.count("events", 1'000'000);
    const std::uint64_t batches = std::max<std::uint64_t>(options.count("batches", 1), 1);
    const double rate = options.number("rate", 0);
    const bool stamp = options.text("latency", "0") == "1";
    PageBuffer source(size, std::byte{0x5a});
    WriterLateLog late(stamp);

    std::vector<double> batch_ns;
    const double setup_ns = double(monotonic_nanos() - entered);  // map + construct
    wait_for_gate(options);
    const std::uint64_t per_batch = events / batches;
    const std::uint64_t start = monotonic_nanos();
    std::uint64_t sent = 0;
    for (std::uint64_t b = 0; b < batches; ++b) {
        const std::uint64_t batch_start = monotonic_nanos();
        const std::uint64_t batch_end = sent + per_batch;
        while (sent < batch_end) {
            const std::uint64_t allowed =
                rate > 0 ? paced_allowance(rate, monotonic_nanos() - start, std::min(batch_end, sent + 64))
                         : batch_end;
            for (; sent < allowed; ++sent) {
                // Only a latency run stamps its source: the floor's writer
                // copies an unchanged source, and writing the head just
                // before the copy reads it cost the others a failed
                // store-to-load forward per event (docs/performance.md,
                // "Issue 25, third pass").
                if (stamp) stamp_message(source.data(), sent + 1, true);
                publish_classic(ring, source.data(), size, kDataEvent, sent + 1);
                late.check(source.data());
            }
        }
        batch_ns.push_back(double(monotonic_nanos() - batch_start) / double(per_batch));
    }
    const double elapsed = double(monotonic_nanos() - start);
    stamp_message(source.data(), sent + 1, false);
    publish_classic(ring, source.data(), size, kEndEvent, sent + 1);
    ResultLine line;
    line.add("writer_ns_per_event", percentile(batch_ns, 0.5))
        .add("writer_events_per_s", double(sent) / elapsed * 1e9)
        .add("events", double(sent))
        .add("setup_ns", setup_ns);
    late.report(line);
    line.print();
    return 0;
}

int run_classic_reader(const PeerOptions& options) {
    const std::uint64_t entered = monotonic_nanos();
    ClassicRing ring;
    map_classic(options.text("path"), false, ring, options.text("double_map", "0") == "1");
    const bool latency = options.text("latency", "0") == "1";
    const std::uint64_t timeout_ns = options.count("timeout_ms", 5000) * 1'000'000;
    PageBuffer buffer(1u << 20);
    LatencyLog log(latency, options.count("events", 1'000'000));

    std::uint64_t expected = 1, received = 0, lost = 0, expired = 0, first_ns = 0, idle = 0;
    std::uint64_t last_progress = 0, not_ready = 0;
    bool ended = false;
    const double setup_ns = double(monotonic_nanos() - entered);  // map + construct
    print_ready();
    last_progress = monotonic_nanos();
    for (;;) {
        log.poll();
        const ClassicPoll poll = poll_classic(ring, expected, lost, buffer.data(), buffer.size());
        if (poll == ClassicPoll::NotReady) {
            ++not_ready;
            if ((++idle & 0xffff) == 0 && monotonic_nanos() - last_progress > timeout_ns) break;
            continue;
        }
        idle = 0;
        if (poll == ClassicPoll::End) {
            ended = true;
            break;
        }
        if (poll == ClassicPoll::Expired) ++expired;
        if (poll != ClassicPoll::Ok) continue;
        if (received++ == 0) first_ns = monotonic_nanos();
        log.record(buffer.data());
        if ((received & 0xfff) == 0) last_progress = monotonic_nanos();
    }
    const double elapsed = double(monotonic_nanos() - first_ns);
    ResultLine line;
    line.add("received", double(received))
        .add("lost", double(lost + expired))
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
