// Private to lib/: what a RingSource owns (ring_source.cpp, ring_source_batch.cpp,
// ring_source_seek.cpp).
//
// Thread safety: one thread at a time (the source's).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "evring/ring/doorbell.hpp"
#include "evring/ring/iterator.hpp"
#include "evring/ring/ring_reader.hpp"
#include "source/ring_source.hpp"
#include "ring/sigbus_guard.hpp"
#include "ring/snapshot.hpp"

namespace evring {

struct RingSource::State {
    // A live ring file; shared with wait sets' plans (ring_source_wait.cpp).
    std::shared_ptr<RingReader> reader;
    std::optional<LoadedSnapshot> snapshot;  // or a snapshot
    const MappedRing* ring = nullptr;        // the one of the two
    std::optional<Iterator> it;
    std::optional<Doorbell> doorbell;
    std::vector<std::byte> scratch;          // payload copies
    std::vector<std::byte> schema_blob;      // the embedded schema, copied at open
    Error fault{0, {}};                      // set when a guarded read faulted

    // Runs `read` under the SIGBUS guard; false (with `fault` set) when the
    // file was truncated under it. `read` must not allocate (sigbus_guard.hpp).
    // `what` names what was being read when it faulted; it is read then, so
    // `read` may move it on (a descriptor, then its payload).
    template <class F>
    bool guard(F&& read, const char* const& what) {
        const void* address = nullptr;
        if (detail::run_under_sigbus_frame(std::forward<F>(read), address)) return true;
        fault = detail::truncated_error(*ring, address, what);
        return false;
    }
};

}  // namespace evring
