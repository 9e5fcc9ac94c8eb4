// lib/bindings/wait_handle.hpp — a reader session's descriptor for event
// loops and the wait sets it is in, for the C ABI and the Python package
// alike (evring.h's evring_source_fd and evring_waitset_*, Python's
// Reader.fileno and evring.WaitSet; docs/event-loops.md).
//
// - A handle's descriptor is the fd() of a WaitSet holding only its source
//   (wait_set.hpp), made by the first call. It is re-armed whenever the
//   session finds nothing to read (next_item or next_descriptors: NotReady),
//   so it is readable from the moment something may be pending until the
//   handle is read to NotReady. Notices the handle holds (held_notices) make
//   it readable too.
// - A wait set handle (evring_waitset) is a WaitSet of handles' sources and
//   the list of those handles. A handle closed while in wait sets leaves
//   them first (evring_source's destructor), and a wait set closed first
//   leaves its handles' lists: either may be closed first.
//
// Thread safety: as evring.h (a handle, and a wait set with its members, by
// one thread at a time).
#pragma once

#include <string>
#include <vector>

#include "evring/error.hpp"
#include "evring/source/wait_set.hpp"
#include "handles.hpp"

struct evring_waitset {
    evring::WaitSet set;
    std::vector<evring_source*> members;  // in the order added
    std::vector<evring_source*> ready;    // the last wait's answer
    std::string error;
};

namespace evring::bindings {

// The handle's descriptor (see above), made the first time.
Result<int> source_descriptor(evring_source& handle);
// After the session found nothing to read: arms the descriptor again. Nothing
// when the handle has none.
void rearm_descriptor(evring_source& handle);

Status waitset_add(evring_waitset& set, evring_source& handle);
bool waitset_remove(evring_waitset& set, evring_source& handle);
// Handles ready within `timeout` (wait_set.hpp's wait), in the order added.
const std::vector<evring_source*>& waitset_wait(evring_waitset& set, std::chrono::nanoseconds timeout);
// Leaves every member's list; the set itself is then destroyed by the caller.
void waitset_detach(evring_waitset& set) noexcept;

}  // namespace evring::bindings
