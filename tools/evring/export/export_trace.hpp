// tools/evring/export/export_trace.hpp — what `evring export` writes, independent of
// the file format: tracks, instants, slices and counter samples. The timeline
// (export_timeline.hpp) decides what goes where; a TraceWriter per format
// (export_perfetto.hpp, export_chrome.hpp) encodes it and streams it to its
// file, holding nothing per event.
//
// Contract for writers: calls arrive in the order of the source's events
// (timestamps as the ring stamped them, nanoseconds since the Unix epoch); a
// track is declared before anything is put on it; on one track slices are
// strictly nested (the timeline puts at most one open span on a lane).
// finish() writes what the format needs at the end and reports the first
// write error, naming the file.
//
// Thread safety: one thread.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "evring/error.hpp"
#include "evring/source/event_source.hpp"
#include "evring/schema/schema.hpp"
#include "evring/schema/schema_render.hpp"

namespace evring::cli {

struct TrackInfo {
    enum class Kind : std::uint8_t { Root, Group, Events, Counter };
    std::uint64_t uuid = 0;
    std::uint64_t parent = 0;  // 0: none (the root)
    Kind kind = Kind::Events;
    std::string name;
    std::string unit;  // counters: "events/s", "events"
};

// An event as the writers show it: its descriptor, its payload decoded with
// the schema when there is one (else its bytes in hex), and the flow tags by
// name. `note` adds one string argument ("unfinished" on a slice closed at
// the end of the export).
struct EventArgs {
    const SourceEvent* event = nullptr;  // nullptr: no event (a slice closed at the end)
    const Schema* schema = nullptr;
    const std::array<std::string, 4>* flow_names = nullptr;  // "block", or "ext0" when unnamed
    std::string_view note;
};

class TraceWriter {
public:
    virtual ~TraceWriter() = default;
    virtual void track(const TrackInfo& track) = 0;
    virtual void instant(std::uint64_t track, std::uint64_t nanos, std::string_view name, const EventArgs& args) = 0;
    virtual void slice_begin(std::uint64_t track, std::uint64_t nanos, std::string_view name,
                             const EventArgs& args) = 0;
    virtual void slice_end(std::uint64_t track, std::uint64_t nanos, const EventArgs& args) = 0;
    virtual void counter(std::uint64_t track, std::uint64_t nanos, double value) = 0;
    // Hands buffered bytes to the file now and then; cheap when there is little.
    virtual void maybe_flush() = 0;
    virtual Status finish() = 0;
    // Bytes written so far, and packets (Perfetto) or trace events (JSON).
    virtual std::uint64_t bytes() const = 0;
    virtual std::uint64_t records() const = 0;
};

// The one rule of both trace formats (docs/operations.md, "Export"): a
// decoded byte field or a raw payload longer than kMaxShownBytes is cut short
// with its size ("0x0011...(4096 bytes)"), so one huge payload does not swell
// the trace; Perfetto and Chrome JSON show the same text.
inline constexpr std::size_t kMaxShownBytes = 256;
inline constexpr JsonOptions kExportJson{kMaxShownBytes};

// "0x" and the hex of at most kMaxShownBytes bytes, then "...(N bytes)" when cut.
inline void append_shown_bytes(std::string& out, std::span<const std::byte> bytes) {
    ::evring::append_shown_bytes(out, bytes, kMaxShownBytes);
}

}  // namespace evring::cli
