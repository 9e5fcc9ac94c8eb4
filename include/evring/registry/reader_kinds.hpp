// lib/registry/reader_kinds.hpp — the reader kinds evring's own programs use, and
// their names in listings.
//
// The core stores a reader's kind and never reads it: ReaderInfo::kind is a
// number its client picks (0: an application that said nothing), kept in the
// registry slot's `kind` word (reader_registry_format.hpp) and returned by
// listings as it was stored. This header is a convention among clients, not
// part of the core: the numbers below are the ones the CLI, the Python
// package and the NATS relay write, kept in one place so that a listing made
// by any of them names the readers of the others. A program of your own may
// register with 0 or with a number of its own above kFirstUnassigned; other
// numbers are listed as "unknown".
//
// Thread safety: constants and a pure function.
#pragma once

#include <cstdint>

namespace evring::reader_kinds {

inline constexpr std::uint32_t kApplication = 0;
inline constexpr std::uint32_t kWatch = 1;   // evring watch
inline constexpr std::uint32_t kRecord = 2;  // evring record
inline constexpr std::uint32_t kRelay = 3;   // evring relay (the NATS relay library)
inline constexpr std::uint32_t kMirror = 4;  // evring mirror
inline constexpr std::uint32_t kPython = 5;  // the Python package's Reader
inline constexpr std::uint32_t kExport = 6;  // reserved for evring export
inline constexpr std::uint32_t kFirstUnassigned = 1024;

// "application", "watch", "record", "relay", "mirror", "python", "export",
// or "unknown": stable, for --json.
constexpr const char* name(std::uint32_t kind) noexcept {
    switch (kind) {
    case kApplication: return "application";
    case kWatch: return "watch";
    case kRecord: return "record";
    case kRelay: return "relay";
    case kMirror: return "mirror";
    case kPython: return "python";
    case kExport: return "export";
    default: return "unknown";
    }
}

}  // namespace evring::reader_kinds
