// Test support for the ring set suites: sets created in a test's own folder
// (the environment and its warnings ignored), written deterministically on one
// thread (each RingSetWriter object gives the calling thread its own member),
// events stamped with times the test chooses, and the merged stream read back
// as (member, time, seqno) or item by item (drain_all).
#pragma once

#include <chrono>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "evring/set/ring_set.hpp"
#include "source/ring_set_source.hpp"
#include "support/temp_ring.hpp"

namespace evring::test {

// Ring names resolve in `dir` only, whatever the environment says.
inline DirectoryOptions directory_in(const std::string& dir) {
    DirectoryOptions d;
    d.read_environment = false;
    d.ring_dir_override = dir;
    d.print_warning = false;
    return d;
}

inline SetCreateOptions set_options_in(const std::string& dir, bool keep = false) {
    SetCreateOptions o;
    o.keep_on_close = keep;
    o.directory = directory_in(dir);
    return o;
}

// A set of test content: members of 2^descriptor_shift descriptors and
// 2^payload_buf_shift payload bytes.
inline RingSetSpec set_spec(const std::string& name = "set", std::uint32_t max_members = 4,
                            unsigned descriptor_shift = 8, unsigned payload_buf_shift = 16) {
    RingConfig config;
    config.name_or_path = name;
    config.descriptor_shift = descriptor_shift;
    config.payload_buf_shift = payload_buf_shift;
    return RingSetSpec(config, test_content(), max_members);
}

// A set "set" in a folder of its own, and a merged reader whose clock
// (monotonic_nanos) is `fake_now`, moved by hand: stall and abandon bounds
// pass when the test says so, not when the machine is slow.
struct SetFixture : ::testing::Test {
    TempDir dir;
    std::uint64_t fake_now = 1'000'000'000;

    SetCreateOptions options(bool keep = false) const { return set_options_in(dir.path(), keep); }
    RingSetSpec spec(std::uint32_t max_members = 4, unsigned descriptor_shift = 8) const {
        return set_spec("set", max_members, descriptor_shift);
    }
    // Each call is one more writer object: one more member for this thread.
    RingSetWriter writer(bool keep = false, std::uint32_t max_members = 4, unsigned descriptor_shift = 8) {
        auto w = RingSetWriter::create(spec(max_members, descriptor_shift), options(keep));
        EXPECT_TRUE(w.ok()) << w.error().message();
        return std::move(w).value();
    }
    // `o` with fake_now as its clock.
    std::unique_ptr<RingSetSource> open_with(RingSetSourceOptions o) {
        o.monotonic_nanos = [this] { return fake_now; };
        auto source = RingSetSource::open(dir.file("set"), "set", o);
        EXPECT_TRUE(source.ok()) << source.error().message();
        return std::move(source).value();
    }
    // The same, positioned at `start` (the seek is checked).
    std::unique_ptr<RingSetSource> open_at(const Position& start, RingSetSourceOptions o = {}) {
        auto source = open_with(std::move(o));
        auto moved = source->seek(start);
        EXPECT_TRUE(moved.ok()) << moved.error().message();
        return source;
    }

    // `n` writer objects on this thread, writer i holding member i (each
    // takes its member at once), and their publishers: members(2)[1] is
    // member 1's.
    struct Members {
        std::vector<RingSetWriter> writers;
        std::vector<Publisher*> publishers;
        Publisher& operator[](std::size_t i) { return *publishers.at(i); }
    };
    Members members(std::size_t n, bool keep = false, std::uint32_t max_members = 4, unsigned descriptor_shift = 8);
};

inline Publisher& publisher_of(RingSetWriter& w) {
    auto p = w.publisher();
    EXPECT_TRUE(p.ok()) << p.error().message();
    return **p;
}

inline SetFixture::Members SetFixture::members(std::size_t n, bool keep, std::uint32_t max_members,
                                               unsigned descriptor_shift) {
    Members m;
    for (std::size_t i = 0; i < n; ++i) {
        m.writers.push_back(writer(keep, max_members, descriptor_shift));
        m.publishers.push_back(&publisher_of(m.writers.back()));
    }
    return m;
}

// Publishes one event stamped `nanos`, whose 8-byte payload is `nanos` too.
inline void publish_at(Publisher& p, std::uint64_t nanos, std::uint16_t type = 7) {
    auto r = p.reserve(8);
    ASSERT_TRUE(r);
    r.descriptor().event_type = type;
    r.descriptor().record_epoch_nanos = nanos;
    std::memcpy(r.payload(), &nanos, 8);
    p.commit(r);
}

struct Seen {
    std::uint32_t member;
    std::uint64_t nanos;
    std::uint64_t seqno;
    bool operator==(const Seen&) const = default;
    // "member:nanos#seqno" in failure messages.
    friend std::ostream& operator<<(std::ostream& out, const Seen& s) {
        return out << s.member << ":" << s.nanos << "#" << s.seqno;
    }
};

// One item a source handed out.
struct Got {
    SourceStep step = SourceStep::Event;  // Event, Gap or Notice
    std::uint32_t member = 0;             // Event, Gap
    std::uint64_t nanos = 0;              // Event
    std::uint64_t seqno = 0;              // Event: its own; Gap: the first lost
    std::uint64_t count = 1;              // Gap: how many were lost
    GapReason reason = GapReason::FellBehind;  // Gap
    std::string notice;                   // Notice
};

// Everything a source handed out until it stopped, in order.
struct Drained {
    std::vector<Got> items;
    SourceStep last = SourceStep::End;  // NotReady, End or Failed: where it stopped

    std::vector<Seen> events() const {
        std::vector<Seen> out;
        for (const auto& g : items)
            if (g.step == SourceStep::Event) out.push_back({g.member, g.nanos, g.seqno});
        return out;
    }
    std::vector<Got> gaps() const { return only(SourceStep::Gap); }
    std::vector<std::string> notices() const {
        std::vector<std::string> out;
        for (const auto& g : only(SourceStep::Notice)) out.push_back(g.notice);
        return out;
    }
    std::uint64_t lost() const {
        std::uint64_t n = 0;
        for (const auto& g : gaps()) n += g.count;
        return n;
    }

private:
    std::vector<Got> only(SourceStep step) const {
        std::vector<Got> out;
        for (const auto& g : items)
            if (g.step == step) out.push_back(g);
        return out;
    }
};

// Reads (payloads copied) until NotReady, End or Failed, at most `max_steps`
// items (a source that never stops fails the test instead of hanging it).
inline Drained drain_all(EventSource& source, std::size_t max_steps = 10'000'000) {
    Drained out;
    SourceItem item;
    for (std::size_t n = 0; n < max_steps; ++n) {
        const SourceStep step = source.next(item, PayloadRead::Copy);
        Got g;
        g.step = step;
        switch (step) {
        case SourceStep::Event:
            g.member = item.event.member;
            g.nanos = item.event.descriptor.record_epoch_nanos;
            g.seqno = item.event.descriptor.seqno;
            break;
        case SourceStep::Gap:
            g.member = item.gap.member;
            g.seqno = item.gap.first_seqno;
            g.count = item.gap.count;
            g.reason = item.gap.reason;
            break;
        case SourceStep::Notice: g.notice = std::string(item.notice); break;
        default: out.last = step; return out;
        }
        out.items.push_back(std::move(g));
    }
    ADD_FAILURE() << "the source gave more than " << max_steps << " items without stopping";
    return out;
}

// The events until NotReady or End (the step it stopped at goes to `last`);
// gaps and notices are skipped.
inline std::vector<Seen> drain(EventSource& source, SourceStep* last = nullptr) {
    const Drained got = drain_all(source);
    if (last) *last = got.last;
    return got.events();
}

}  // namespace evring::test
