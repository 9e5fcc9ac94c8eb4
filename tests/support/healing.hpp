// Test support for healing (lib/source/healer.hpp): what a lapped reader of
// the tests' 64-slot rings keeps, sources opened at the oldest event, and
// `evring record` in miniature (one thread: every lap where the test puts it).
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evring/source/source_open.hpp"
#include "recording/recording_writer.hpp"

namespace evring::test {

// A lapped reader of this 64-slot ring goes on 4 slots past the oldest
// (iterator_inline.hpp: capacity / 16 of slack), so the ring gives it the
// newest 60 events; the rest of what it missed is the gap.
constexpr std::uint64_t kHeld = 60;

inline std::unique_ptr<EventSource> open(const std::string& location, const SourceOptions& options = {}) {
    auto source = open_source(location, options);
    EXPECT_TRUE(source.ok()) << source.error().message();
    if (!source) return nullptr;
    EXPECT_TRUE((*source)->seek(Position::oldest()).ok());
    return std::move(source).value();
}

// What `evring record` does with each item, until `source` has nothing more
// now: events (a ring set's member in the descriptor's reserved field) and gaps.
inline void copy_what_is_there(EventSource& source, RecordingWriter& writer) {
    SourceItem item;
    for (;;) {
        const SourceStep step = source.next(item, PayloadRead::Copy);
        if (step == SourceStep::Event) {
            EventDescriptor d = item.event.descriptor;
            d.reserved = static_cast<std::uint16_t>(item.event.member);
            const bool intact = item.event.payload_state == PayloadState::Ok;
            std::byte* dst = writer.begin_event(d);
            if (intact) std::memcpy(dst, item.event.payload.data(), item.event.payload.size());
            ASSERT_TRUE(writer.end_event(intact).ok());
        } else if (step == SourceStep::Gap) {
            ASSERT_TRUE(writer.append_gap(item.gap.first_seqno, item.gap.count, item.gap.reason, item.gap.member).ok());
        } else if (step != SourceStep::Notice) {
            return;
        }
    }
}

inline std::vector<std::uint64_t> one_to(std::uint64_t n) {
    std::vector<std::uint64_t> all;
    for (std::uint64_t s = 1; s <= n; ++s) all.push_back(s);
    return all;
}

inline SourceOptions heal_from(const std::string& recording) {
    SourceOptions options;
    options.heal.recording = recording;
    options.heal.patience = std::chrono::seconds(5);
    return options;
}

}  // namespace evring::test
