// evring/source/source_open.hpp — opening whatever the user named as an event source.
//
//     auto source = evring::open_source("demo", {});       // a ring name
//     auto replay = evring::open_source("x.evrec", {});    // a recording (and FILE.1, ...)
//     auto remote = evring::open_source("nats://host:4222/STREAM", {});  // when registered
//
// What a location names, in this order:
//   - SCHEME://... : the opener registered for SCHEME (register_source_scheme).
//     The core library registers none; a library that provides one (the NATS
//     stream reader) registers it when its program asks it to, so the core
//     never links that library.
//   - a pure name (no '/'): the ring file of that name in the default ring
//     directory (ring_directory.hpp) when it exists there, else a file of
//     that name in the working directory;
//   - otherwise a path used as written.
// A directory holding a manifest is a ring set (ring_set_source.hpp). A file
// is a set snapshot when it starts with its skippable frame
// (ring_set_snapshot.hpp), then a snapshot when it starts with the zstd magic, a recording
// when it starts with "EVRECORD", and a ring file otherwise (ring_source.hpp,
// recording_source.hpp). Only regular files are opened, without blocking (a
// FIFO, device, socket or directory is refused by name). Errors say what was
// given and what it resolved to.
//
// Thread safety: open_source may be called from any thread; registering
// schemes is serialised (a mutex) and normally done once at start-up.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "evring/config.hpp"
#include "evring/error.hpp"
#include "evring/source/event_source.hpp"
#include "evring/ring/ring_directory.hpp"

namespace evring {

// Healing a live ring's (or ring set's) lapped gaps from a recording of it
// (docs/healing.md; lib/source/healer.hpp has the contract): a reader that
// falls behind reads what the writer overwrote from the file `evring record`
// writes beside it, and rejoins the ring where the gap ended. Only a
// recording of the same ring instance is used; what it does not hold stays
// a gap.
struct HealOptions {
    std::string recording;  // the recording (--heal-from PATH)
    bool find = false;      // a running `evring record` of the ring, from its reader registry (--heal)
    // Heal a live ring or ring set; read any other source as it is, rather
    // than refuse it (a named reader heals by default: docs/named-readers.md).
    bool when_live = false;
    std::chrono::milliseconds patience{3000};  // waiting for a recording to catch up, without progress
    bool wanted() const noexcept { return find || !recording.empty(); }
};

struct SourceOptions {
    // Snapshots whose ring is larger are refused (EFBIG).
    std::uint64_t max_snapshot_size = kDefaultMaxSnapshotSize;
    // A recording continues into FILE.1, FILE.2, ... (recording_source.hpp).
    bool recording_series = true;
    // A recording being written is followed as it grows (recording_source.hpp).
    bool follow_recording = false;
    // How a pure name is resolved.
    DirectoryOptions directory;
    // Lapped gaps of a live ring or ring set healed from a recording. Asked
    // of any other source, open_source refuses (EINVAL, naming it).
    HealOptions heal;
};

Result<std::unique_ptr<EventSource>> open_source(std::string_view location, const SourceOptions& options);

// Gives an open source the healer `heal` asks for (what open_source does with
// SourceOptions::heal): EINVAL, naming the source, for anything but a live
// ring or ring set.
Status heal_source(EventSource& source, const HealOptions& heal);

// Makes a source for `location` (the whole text, scheme included).
using SourceOpener =
    std::function<Result<std::unique_ptr<EventSource>>(std::string_view location, const SourceOptions& options)>;

// Registers `opener` for locations starting with "<scheme>://" (lower case
// letters, digits, '+', '-', '.'); replaces an earlier opener of that scheme.
void register_source_scheme(std::string_view scheme, SourceOpener opener);

// The scheme of "scheme://rest", or "" when `location` has none.
std::string_view location_scheme(std::string_view location) noexcept;

// What a location resolves to without opening it: the path of a ring name or
// path (see above), or the location itself for a scheme. Errors as open_source.
Result<std::string> resolve_location(std::string_view location, const DirectoryOptions& directory);

}  // namespace evring
