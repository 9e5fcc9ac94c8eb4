// tools/evring/input.hpp — what RING on the command line names.
//
// A RING argument is, in this order:
//   - a pure name (no '/'): the ring file of that name in the default ring
//     directory (ring_directory.hpp) when it exists there, else a file of that name in
//     the working directory;
//   - otherwise a path used as written.
// The file it names is then a snapshot when it starts with the zstd magic,
// a recording when it starts with "EVRECORD", and a ring file otherwise.
// Errors say what was typed and what it resolved to.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "evring/error.hpp"
#include "evring/ring_reader.hpp"
#include "evring/recording.hpp"
#include "evring/snapshot.hpp"

namespace evring::cli {

enum class InputKind { Ring, Snapshot, Recording };

struct InputOptions {
    std::uint64_t max_snapshot_size = kDefaultMaxSnapshotSize;
    bool allow_recording = true;
};

struct Input {
    InputKind kind = InputKind::Ring;
    std::string typed;  // as given on the command line
    std::string path;   // what it resolved to
    std::optional<RingReader> live;
    std::optional<LoadedSnapshot> snapshot;
    std::optional<RecordingReader> recording;

    // The ring of a ring file or snapshot; nullptr for a recording.
    const MappedRing* ring() const {
        if (live) return &live->ring();
        if (snapshot) return &snapshot->ring;
        return nullptr;
    }
};

Result<Input> open_input(std::string_view typed, const InputOptions& options);

// The file a rotated recording continues in: FILE -> FILE.1, FILE.1 -> FILE.2.
std::string next_recording_path(const std::string& path, std::uint32_t file_index);

// "snapshot", "recording", "ring file".
std::string_view kind_name(InputKind kind);

}  // namespace evring::cli
