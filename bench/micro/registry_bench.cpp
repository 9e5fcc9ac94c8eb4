// Micro-benchmarks of the reader registry: what a registered reader pays
// per event (the same read loop with and without ReaderRegistration::on_event,
// in the same run), one publication on its own, and one listing.
//
// The read loop is BM_TryNext of reader_bench.cpp: one thread over a
// pre-filled ring of 64-byte events, so it measures the reader's own cost
// with the data in cache, which is where a per-event addition shows most.
// docs/operations.md reports the figures and the command.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <vector>

#include <benchmark/benchmark.h>

#include "evring/ring/iterator.hpp"
#include "evring/ring/publisher.hpp"
#include "registry/reader_kinds.hpp"
#include "registry/reader_listing.hpp"
#include "registry/reader_registration.hpp"
#include "sink/registering_sink.hpp"
#include "evring/ring/ring_reader.hpp"
#include "source/ring_source.hpp"
#include "support/bench_ring.hpp"

namespace {

using evring::bench::ScratchRing;

constexpr std::uint64_t kEvents = 1 << 14;

// A ring of kEvents 64-byte events, a read-only mapping and descriptor of it
// (what a registration binds to), and the registry removed at the end.
struct RegistryBench {
    RegistryBench()
        : ring("/dev/shm", evring::bench::bench_params(16, 28)),
          reader(evring::bench::map_ring(ring.path(), evring::Access::ReadOnly)),
          fd(::open(ring.path().c_str(), O_RDONLY | O_CLOEXEC)) {
        if (fd < 0) evring::bench::die("opening " + ring.path());
        evring::Publisher publisher(ring.writer());
        for (std::uint64_t i = 0; i < kEvents; ++i) {
            evring::Reservation r = publisher.reserve(64);
            r.descriptor().event_type = static_cast<std::uint16_t>(i % 4);
            std::memset(r.payload(), 0, 64);
            publisher.commit(r);
        }
    }
    ~RegistryBench() {
        ::close(fd);
        ::unlink(evring::reader_registry_path(ring.path()).c_str());
    }

    evring::ReaderRegistration attach(const char* name, std::uint32_t every_events = 1024) const {
        evring::RegistrationOptions options;
        options.print_warning = false;
        options.update_every_events = every_events;
        const evring::ReaderInfo info{name, evring::reader_kinds::kApplication, {}};
        auto registration =
            evring::ReaderRegistration::register_reader(ring.path(), fd, reader, info, options);
        if (!registration) evring::bench::die(registration.error().message());
        return std::move(registration).value();
    }

    ScratchRing ring;
    evring::MappedRing reader;
    int fd;
};

void BM_ReadLoop(benchmark::State& state) {
    RegistryBench bench;
    evring::Iterator it(bench.reader);
    evring::EventDescriptor event{};
    it.seek(1);
    for (auto _ : state) {
        if (it.try_next(event) != evring::NextResult::Success) it.seek(1);
        benchmark::DoNotOptimize(event);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_ReadLoop);

void BM_ReadLoopRegistered(benchmark::State& state) {
    RegistryBench bench;
    evring::ReaderRegistration seen = bench.attach("bench");
    evring::Iterator it(bench.reader);
    evring::EventDescriptor event{};
    it.seek(1);
    for (auto _ : state) {
        if (it.try_next(event) != evring::NextResult::Success) {
            it.seek(1);
            continue;
        }
        seen.on_event(it, event);
        benchmark::DoNotOptimize(event);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_ReadLoopRegistered);

// on_event alone, over and over on one event, publishing every Arg events
// (1024 is the default): the decrement and compares every event pays plus
// one publication per Arg events, i.e. the amortised price per event
// without the read loop's own cost and noise around it. The event's
// timestamp does not move, so only the count triggers publications.
void BM_OnEventAmortised(benchmark::State& state) {
    RegistryBench bench;
    evring::ReaderRegistration seen =
        bench.attach("bench", static_cast<std::uint32_t>(state.range(0)));
    evring::Iterator it(bench.reader);
    evring::EventDescriptor event{};
    it.seek(1);
    if (it.try_next(event) != evring::NextResult::Success) evring::bench::die("no event to read");
    for (auto _ : state) {
        seen.on_event(it, event);
        benchmark::DoNotOptimize(seen);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_OnEventAmortised)->Arg(1024)->Arg(64)->Arg(1);

// RegisteringSink::event (what watch, record, relay and mirror pay per event
// through the follow loop) around a sink that does nothing, against that sink
// called directly: the difference is the registration's per-event price with
// the position taken from the event (no call into the source).
struct NullSink final : evring::FollowSink {
    bool event(const evring::SourceEvent& e) override {
        benchmark::DoNotOptimize(e.descriptor.seqno);
        return true;
    }
};

void sink_loop(benchmark::State& state, bool registered) {
    RegistryBench bench;
    auto reader = evring::RingReader::open(bench.ring.path());
    if (!reader) evring::bench::die(reader.error().message());
    auto source = evring::RingSource::open_live(std::move(*reader), bench.ring.path());
    if (!source) evring::bench::die(source.error().message());
    NullSink inner;
    evring::RegisteringSink sink(inner, {"bench", evring::reader_kinds::kApplication, {}}, registered);
    sink.started(**source);
    if (sink.registered() != registered) evring::bench::die("the sink did not register");
    evring::FollowSink& through = sink;  // called through the base, as the follow loop does
    evring::SourceEvent event;
    event.descriptor.seqno = 1;
    for (auto _ : state) {
        through.event(event);
        ++event.descriptor.seqno;
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
void BM_SinkEventUnregistered(benchmark::State& state) { sink_loop(state, false); }
BENCHMARK(BM_SinkEventUnregistered);
void BM_SinkEventRegistered(benchmark::State& state) { sink_loop(state, true); }
BENCHMARK(BM_SinkEventRegistered);

// One publication: the seqlock rewrite of the slot's progress line and the
// heartbeat's clock read, paid once per update_every_events events.
void BM_RegistrationUpdate(benchmark::State& state) {
    RegistryBench bench;
    evring::ReaderRegistration seen = bench.attach("bench");
    std::uint64_t next = 1;
    for (auto _ : state) seen.update(next++, 0, 0);
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_RegistrationUpdate);

// What `evring readers` or one refresh of `top` costs with 8 readers
// registered in a 128-slot registry.
void BM_ListReaders(benchmark::State& state) {
    RegistryBench bench;
    std::vector<evring::ReaderRegistration> readers;
    for (int i = 0; i < 8; ++i) {
        readers.push_back(bench.attach("bench"));
        readers.back().update(kEvents / 2, 0, 0);
    }
    evring::ListingOptions options;
    for (auto _ : state) {
        auto listing = evring::list_readers(bench.ring.path(), bench.fd, bench.reader, options);
        if (!listing || listing->readers.size() != 8) evring::bench::die("listing failed");
        benchmark::DoNotOptimize(listing);
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_ListReaders);

}  // namespace
