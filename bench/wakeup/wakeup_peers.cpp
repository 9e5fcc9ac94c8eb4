// The writer and reader of one wake-up run (wakeup_peers.hpp).
#include "wakeup/wakeup_peers.hpp"

#include <time.h>

#include <algorithm>
#include <cerrno>

#include <cstdio>
#include <cstring>
#include <vector>

#include "evring/ring/payload.hpp"
#include "evring/ring/publisher.hpp"
#include "support/bench_ring.hpp"
#include "wakeup/wake_channel.hpp"

namespace evring::wakeup {

namespace {

constexpr std::uint16_t kDataEvent = 7;
constexpr std::uint16_t kEndEvent = 8;

// The payload: the writer's CLOCK_MONOTONIC just before commit.
struct Stamp {
    std::uint64_t committed_ns;
    std::uint64_t sequence;
};

void publish_stamped(Publisher& publisher, std::uint16_t type, std::uint64_t sequence) {
    Reservation r = publisher.reserve(sizeof(Stamp));
    r.descriptor().event_type = type;
    const Stamp stamp{ipc::monotonic_nanos(), sequence};
    std::memcpy(r.payload(), &stamp, sizeof stamp);
    publisher.commit(r);
}

void sleep_until(std::uint64_t monotonic_ns) {
    const timespec due{static_cast<time_t>(monotonic_ns / 1'000'000'000),
                       static_cast<long>(monotonic_ns % 1'000'000'000)};
    while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, nullptr) == EINTR) {
    }
}

}  // namespace

int run_wakeup_writer(const ipc::PeerOptions& options) {
    const WakeVariant& variant = wake_variant(options.text("variant"));
    // Owned, as an application's: the default publisher claims it; a ring
    // much larger than a run, so no reader is ever lapped.
    RingWriter owner = bench::create_owned_ring(options.text("path"), 18, 24);
    Publisher publisher(owner.ring());
    const std::unique_ptr<WakeWriter> wake = variant.writer(options);
    const std::uint64_t events = options.count("events", 10'000);
    const double period_ns = 1e9 / std::max(options.number("rate", 10'000), 1.0);
    ipc::wait_for_gate(options);  // the reader has mapped the ring and sleeps
    const std::uint64_t start = ipc::monotonic_nanos() + 1'000'000;
    std::uint64_t late = 0;  // events the writer could not publish on time (> 1 period late)
    for (std::uint64_t i = 0; i < events; ++i) {
        const std::uint64_t due = start + static_cast<std::uint64_t>(double(i) * period_ns);
        sleep_until(due);
        if (ipc::monotonic_nanos() - due > static_cast<std::uint64_t>(period_ns)) ++late;
        publish_stamped(publisher, kDataEvent, i + 1);
        wake->after_commit();
    }
    publish_stamped(publisher, kEndEvent, events + 1);
    wake->after_commit();
    ipc::ResultLine line;
    line.add("events", double(events)).add("writer_late_events", double(late));
    line.print();
    return 0;
}

int run_wakeup_reader(const ipc::PeerOptions& options) {
    const WakeVariant& variant = wake_variant(options.text("variant"));
    const MappedRing ring = bench::map_ring(options.text("path"), Access::ReadOnly);
    Iterator it(ring);
    it.seek(1);
    const std::unique_ptr<WakeReader> wake = variant.reader(ring, options);
    const std::uint64_t events = options.count("events", 10'000);
    // Written once before the run, so that no page fault lands in it.
    std::vector<std::uint64_t> samples(events + 1, 1);
    std::size_t recorded = 0;
    std::uint64_t lost = 0, polls_without_event = 0;
    ipc::print_ready();
    EventDescriptor event{};
    for (;;) {
        const NextResult result = it.try_next(event);
        if (result == NextResult::NotReady) {
            ++polls_without_event;
            wake->sleep(it);
            continue;
        }
        if (result != NextResult::Success) {  // a Gap or an Abandoned reservation: never in a good run
            lost += result == NextResult::Gap ? it.last_gap_lost() : 1;
            continue;
        }
        const std::uint64_t now = ipc::monotonic_nanos();  // the reader has the event
        Stamp stamp{};
        if (copy_payload(ring, event, &stamp, sizeof stamp) != PayloadResult::Ok) {
            ++lost;
            continue;
        }
        if (event.event_type == kEndEvent) break;
        if (recorded < samples.size()) samples[recorded++] = now - stamp.committed_ns;
    }
    std::FILE* out = std::fopen(options.text("samples").c_str(), "wb");
    if (out == nullptr || std::fwrite(samples.data(), sizeof samples[0], recorded, out) != recorded)
        bench::die("evring-wakeup reader: writing " + options.text("samples") + ": " + std::strerror(errno));
    std::fclose(out);
    ipc::ResultLine line;
    line.add("received", double(recorded))
        .add("lost", double(lost))
        .add("sleeps", double(wake->sleeps()))
        .add("polls_without_event", double(polls_without_event));
    line.print();
    return 0;
}

}  // namespace evring::wakeup
