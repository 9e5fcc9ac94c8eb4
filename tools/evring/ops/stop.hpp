// tools/evring/ops/stop.hpp — how a command is asked to stop.
//
// install_stop_handlers makes SIGINT, SIGTERM and SIGHUP set stop_flag(),
// which the follow loop (evring/source/follow.hpp) and the snapshot writer check, so
// commands finish cleanly: flush, summary, end record, temporary files
// removed. A second signal while stopping still only sets the flag. SIGPIPE
// is ignored so a closed pipe shows up as EPIPE on write.
//
// Thread safety: the flag is a lock-free atomic, set from signal handlers.
#pragma once

#include <atomic>

namespace evring::cli {

void install_stop_handlers();
const std::atomic<bool>& stop_flag() noexcept;
inline bool stop_requested() noexcept { return stop_flag().load(std::memory_order_relaxed); }

}  // namespace evring::cli
