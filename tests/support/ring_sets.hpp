// Test support for the ring set suites: sets created in a test's own folder
// (the environment and its warnings ignored), written deterministically on one
// thread (each RingSetWriter object gives the calling thread its own member),
// events stamped with times the test chooses, and the merged stream read back
// as (member, time, seqno).
#pragma once

#include <chrono>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evring/set/ring_set.hpp"
#include "set/ring_set_source.hpp"
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
};

inline Publisher& publisher_of(RingSetWriter& w) {
    auto p = w.publisher();
    EXPECT_TRUE(p.ok()) << p.error().message();
    return **p;
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

// Reads until NotReady or End (the step it stopped at goes to `last`); gaps
// and notices are skipped.
inline std::vector<Seen> drain(EventSource& source, SourceStep* last = nullptr) {
    std::vector<Seen> out;
    SourceItem item;
    for (;;) {
        const SourceStep step = source.next(item, PayloadRead::Copy);
        if (step == SourceStep::Event)
            out.push_back({item.event.member, item.event.descriptor.record_epoch_nanos, item.event.descriptor.seqno});
        else if (step != SourceStep::Gap && step != SourceStep::Notice) {
            if (last) *last = step;
            return out;
        }
    }
}

}  // namespace evring::test
