// evring-set-cost: the merged reader of a ring set (RingSetSource) and one
// ring's reader (RingSource), descriptors only, as evring-set-bench compares
// them, in one process. scripts/bench-set-counts runs it under callgrind
// twice with different READ counts over the same written events and takes
// the difference: what is left is the reader's instructions per event,
// writing, opening and exit cancelled.
//
//   evring-set-cost MEMBERS EVENTS READ DIR [auto|scan|tree [BURST]]
//     MEMBERS 0: one ring of EVENTS events, read by RingSource; N (1..1024):
//             a set of N members holding EVENTS events in all, written round
//             robin by one thread, so their times interleave finely and
//             every release is a pick among all members (the merge's worst
//             case; evring-set-bench's interleaved_Nm)
//     READ    events read with next(item, PayloadRead::None); READ <= EVENTS
//             minus what the members read ahead, so no member runs dry
//     DIR     a directory for the rings (/dev/shm)
//     and the merge's order (RingSetSourceOptions::merge_order; auto by
//     default); BURST > 1 writes the members round robin BURST events at a
//     time (a burst of one writer is released at one comparison)
//
// Exits 1 if the reader did not get READ events.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_reader.hpp"
#include "evring/ring/ring_writer.hpp"
#include "evring/set/ring_set.hpp"
#include "source/ring_set_source.hpp"
#include "source/ring_source.hpp"

namespace {

using namespace evring;

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "evring-set-cost: %s\n", what.c_str());
    std::exit(2);
}

DirectoryOptions in(const std::string& dir) {
    DirectoryOptions d;
    d.read_environment = false;
    d.ring_dir_override = dir;
    d.print_warning = false;
    return d;
}

// A ring of at least `events` descriptors (and 64 B payloads).
RingConfig sized(const std::string& name, std::uint64_t events) {
    RingConfig c;
    c.name_or_path = name;
    c.descriptor_shift = std::max(10u, static_cast<unsigned>(std::bit_width(events)));
    c.payload_buf_shift = c.descriptor_shift + 7;
    return c;
}

RingContent content() {
    RingContent c;
    c.content_type = static_cast<std::uint16_t>(ContentType::Performance);
    return c;
}

// The reading loop both counted runs share: never inlined, so that the
// difference between them is the reader's alone.
[[gnu::noinline]] std::uint64_t read_events(EventSource& source, std::uint64_t events) {
    SourceItem item;
    std::uint64_t n = 0;
    while (n < events) {
        const SourceStep step = source.next(item, PayloadRead::None);
        if (step == SourceStep::Event) ++n;
        else if (step != SourceStep::Gap && step != SourceStep::Notice) break;
    }
    return n;
}

std::uint64_t read_ring(const std::string& dir, std::uint64_t events, std::uint64_t to_read) {
    CreateOptions options;
    options.directory = in(dir);
    auto ring = RingWriter::create({sized("cost-ring-" + std::to_string(::getpid()), events), content()}, options);
    if (!ring) die(ring.error().message());
    Publisher p(ring->ring());
    for (std::uint64_t i = 0; i < events; ++i) {
        Reservation r = p.reserve(64);
        p.commit(r);
    }
    auto reader = RingReader::open(ring->path());
    if (!reader) die(reader.error().message());
    auto source = RingSource::open_live(std::move(reader).value(), "cost-ring");
    if (!source) die(source.error().message());
    if (!(*source)->seek(Position::oldest())) die("seek failed");
    return read_events(**source, to_read);
}

// Each member is held by a thread of its own for the whole read (a member
// is released when its thread exits); this thread writes them round robin.
std::uint64_t read_set(const std::string& dir, unsigned members, std::uint64_t events, std::uint64_t to_read,
                       RingSetSourceOptions::MergeOrder order, std::uint64_t burst) {
    SetCreateOptions options;
    options.directory = in(dir);
    const std::uint64_t per = (events + members - 1) / members;
    auto set = RingSetWriter::create({sized("cost-set-" + std::to_string(::getpid()), per), content(), members}, options);
    if (!set) die(set.error().message());
    std::vector<Publisher*> publishers(members);
    std::atomic<unsigned> taken{0};
    std::atomic<bool> done{false};
    std::vector<std::thread> holders;
    for (unsigned t = 0; t < members; ++t)
        holders.emplace_back([&, t] {
            auto p = set->publisher();
            if (!p) die(p.error().message());
            publishers[t] = *p;
            taken.fetch_add(1);
            taken.notify_all();
            done.wait(false);
        });
    for (unsigned seen = taken.load(); seen < members; seen = taken.load()) taken.wait(seen);
    for (std::uint64_t i = 0; i < per; i += burst)
        for (Publisher* p : publishers)
            for (std::uint64_t k = i; k < std::min(per, i + burst); ++k) {
                Reservation r = p->reserve(64);
                p->commit(r);
            }
    std::uint64_t read = 0;
    {
        RingSetSourceOptions source_options;
        source_options.merge_order = order;
        auto source = RingSetSource::open(set->path(), "cost-set", source_options);
        if (!source) die(source.error().message());
        if (!(*source)->seek(Position::oldest())) die("seek failed");
        read = read_events(**source, to_read);
    }
    done = true;
    done.notify_all();
    for (auto& h : holders) h.join();
    return read;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 5 || argc > 7) die("usage: evring-set-cost MEMBERS EVENTS READ DIR [auto|scan|tree [BURST]]");
    using Order = RingSetSourceOptions::MergeOrder;
    const std::string named = argc >= 6 ? argv[5] : "auto";
    const std::uint64_t burst = argc == 7 ? std::max(1ull, std::strtoull(argv[6], nullptr, 10)) : 1;
    const Order order = named == "scan" ? Order::Scan : named == "tree" ? Order::Tree : Order::Auto;
    if (named != "auto" && named != "scan" && named != "tree") die("unknown merge order " + named);
    const unsigned members = static_cast<unsigned>(std::strtoul(argv[1], nullptr, 10));
    const std::uint64_t events = std::strtoull(argv[2], nullptr, 10);
    const std::uint64_t to_read = std::strtoull(argv[3], nullptr, 10);
    // A member reads up to 32 descriptors ahead: READ must leave that many.
    if (members > 1024 || events == 0 || events > (1u << 24) || to_read + (64ull + burst) * members > events)
        die("MEMBERS must be 0..1024, EVENTS 1..2^24, READ at most EVENTS - (64 + BURST) x MEMBERS");
    const std::uint64_t read = members == 0 ? read_ring(argv[4], events, to_read)
                                            : read_set(argv[4], members, events, to_read, order, burst);
    std::printf("members %u events %llu read %llu\n", members, static_cast<unsigned long long>(events),
                static_cast<unsigned long long>(read));
    return read != to_read ? 1 : 0;
}
