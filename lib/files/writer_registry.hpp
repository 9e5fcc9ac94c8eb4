// lib/files/writer_registry.hpp — the reader registry from the ring writer's
// side: creating it up front, removing it as the ring goes.
//
// Optional for a writer: readers create the registry when they are first
// (reader_registration.hpp), and RingWriter removes it with its ring. Where
// a registry lives and the states it can be in are reader_registry.hpp's.
//
// Contract: see each function. The writer's ring is reopened by its path
// (the writer owns the name, so the file there is its own) and refused with
// ESTALE when the file at the path is no longer that ring.
//
// Thread safety: free functions; creation is serialised within a process.
#pragma once

#include <string_view>

#include "evring/error.hpp"
#include "registry/reader_registry.hpp"

namespace evring {

class RingWriter;

// For a ring's writer (optional; readers create the registry when they are
// first): makes sure a registry of this writer's ring instance exists,
// creating it, or replacing one of an earlier instance or a damaged one. A
// registry of this instance that readers already made is kept.
Status create_reader_registry(const RingWriter& writer, const RegistryFileOptions& options = {});

// For a ring's writer closing cleanly: removes the registry if it belongs to
// this writer's ring instance and no reader uses it (a registry of another
// instance, one in use, or a file that is not a registry, is left alone; the
// last reader of a removed ring removes it as it leaves). Missing is not an
// error. RingWriter does this itself when it removes its ring.
Status remove_reader_registry(const RingWriter& writer, std::string_view registry_path = {});

}  // namespace evring
