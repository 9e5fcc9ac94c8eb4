// lib/ring/sigbus_guard.hpp — a ring file truncated under a reader becomes an error, not a crash.
//
// How to read defensively:
//
//     evring::install_sigbus_handler();                 // once, at start-up
//     auto next = evring::try_next_guarded(it, event);  // Result<NextResult>
//     if (!next) { report(next.error().message()); }    // the file was truncated
//
// Threat model. A reader maps the ring file MAP_SHARED. If the file shrinks
// while mapped, touching a page beyond the new end raises SIGBUS, which kills
// the process by default. Only a process with write permission on the file can
// shrink it (ftruncate, O_TRUNC): the ring's own writer, its owner, or root,
// through a bug or on purpose. Rings on hugetlbfs are allocated up front and a
// reader without write permission cannot truncate them; readers that distrust
// the writer's owner wrap their reads in a guard. (Corrupt contents, as
// opposed to a shorter file, cannot make a reader touch memory outside its
// mapping: see payload.hpp and the fuzz targets in fuzz/.)
//
// Contract:
// - install_sigbus_handler() installs one process-wide SIGBUS handler
//   (idempotent, thread-safe). A SIGBUS raised outside a guarded region is
//   passed to the handler that was installed before ours, or, if that was the
//   default, kills the process as it would have without us.
// - guard_sigbus(read) runs `read` and returns false instead of crashing if it
//   raised SIGBUS (the handler jumps back with siglongjmp). It saves no signal
//   mask and makes no system call, so it is cheap enough to wrap every read,
//   but `read` is abandoned mid-way: it must only read, and must not allocate,
//   lock, or own anything that needs a destructor. Without an installed
//   handler, a SIGBUS inside the guard kills the process as usual.
// - The guarded wrappers below turn the fault into an Error naming the ring's
//   path and the offset of the faulting address within the mapping.
//
// Thread safety: guards are per thread (a thread-local frame pointer) and
// nest; any number of threads may run guarded reads at once.
#pragma once

#include <setjmp.h>

#include <atomic>
#include <cstddef>
#include <utility>

#include "evring/error.hpp"
#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/ring.hpp"

namespace evring {

Status install_sigbus_handler();

namespace detail {

struct SigbusFrame {
    sigjmp_buf env;
    SigbusFrame* previous;
    const void* fault_address;
};

// The innermost guard of the calling thread (null outside any guard).
SigbusFrame*& current_sigbus_frame() noexcept;

// Runs `read` under a guard; on SIGBUS returns false and sets `fault`.
template <class F>
bool run_under_sigbus_frame(F&& read, const void*& fault) {
    SigbusFrame frame;
    frame.previous = current_sigbus_frame();
    frame.fault_address = nullptr;
    // savemask = 0: no sigprocmask call. The handler runs with SA_NODEFER, so
    // SIGBUS is not left blocked when it jumps back here.
    if (sigsetjmp(frame.env, 0) != 0) {
        current_sigbus_frame() = frame.previous;
        fault = frame.fault_address;
        return false;
    }
    current_sigbus_frame() = &frame;
    // Keeps the compiler from moving the reads across the frame's install and removal.
    std::atomic_signal_fence(std::memory_order_seq_cst);
    std::forward<F>(read)();
    std::atomic_signal_fence(std::memory_order_seq_cst);
    current_sigbus_frame() = frame.previous;
    return true;
}

Error truncated_error(const MappedRing& ring, const void* fault, const char* what);

}  // namespace detail

template <class F>
[[nodiscard]] bool guard_sigbus(F&& read) {
    const void* fault = nullptr;
    return detail::run_under_sigbus_frame(std::forward<F>(read), fault);
}

// Iterator::try_next, with a truncated file reported as an Error.
Result<NextResult> try_next_guarded(Iterator& it, EventDescriptor& out);

// Iterator::reset (which reads the newest descriptors), with a truncated file
// reported as an Error. (The Iterator constructor resets too: construct it
// while the file is known to be whole, or reset it again here.)
Status reset_guarded(Iterator& it);

// copy_payload, with a truncated file reported as an Error.
Result<PayloadResult> copy_payload_guarded(const MappedRing& ring, const EventDescriptor& event,
                                           void* dst, std::size_t dst_size);

}  // namespace evring
