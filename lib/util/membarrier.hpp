// lib/util/membarrier.hpp — membarrier(2), which glibc does not wrap (private to
// the library). Used by the doorbell (doorbell.hpp) and the writer claim
// (writer_claim.hpp), whose asymmetric fences it is the heavy half of.
//
// Thread safety: a system call; no state.
#pragma once

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace evring::detail {

inline long membarrier(int command) noexcept { return ::syscall(SYS_membarrier, command, 0, 0); }

}  // namespace evring::detail
