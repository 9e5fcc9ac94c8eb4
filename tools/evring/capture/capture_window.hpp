// tools/evring/capture/capture_window.hpp — the time window of one capture,
// shared by the thread that evaluates triggers and the thread that copies it.
//
// A window covers events stamped from `start` to `end` (record_epoch_nanos).
// Only the trigger thread moves the end: extend() when a later trigger falls
// inside the window, close() once no trigger can extend it any more (a
// trigger past the end was seen, or the trigger loop caught up with the ring
// after the end had passed: capture.hpp). The copying thread asks holds()
// for each event: an event stamped past an open window's end waits there
// until the window is extended over it (copied) or closed (the capture ends
// before it), so a late trigger never splits one capture into two files.
//
// Thread safety: one mutex orders every read and write of end and closed;
// extend() and close() wake a waiting holds() through the condition variable.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace evring::cli {

class CaptureWindow {
public:
    CaptureWindow(std::uint64_t start, std::uint64_t end) : start_(start), end_(end) {}

    std::uint64_t start() const noexcept { return start_; }
    std::uint64_t end() const {
        std::lock_guard lock(mutex_);
        return end_;
    }
    bool closed() const {
        std::lock_guard lock(mutex_);
        return closed_;
    }

    // Trigger thread: the window now ends at `end` (never earlier).
    void extend(std::uint64_t end) {
        {
            std::lock_guard lock(mutex_);
            if (end > end_) end_ = end;
        }
        changed_.notify_all();
    }
    // Trigger thread: the end is final.
    void close() {
        {
            std::lock_guard lock(mutex_);
            closed_ = true;
        }
        changed_.notify_all();
    }

    // Copying thread: whether an event stamped `nanos` belongs to the window,
    // waiting while that is still open (see above); false also once `stop`
    // is set (checked every 100 ms).
    bool holds(std::uint64_t nanos, const std::atomic<bool>& stop) {
        std::unique_lock lock(mutex_);
        while (nanos > end_ && !closed_ && !stop.load(std::memory_order_relaxed))
            changed_.wait_for(lock, std::chrono::milliseconds(100));
        return nanos <= end_;
    }

private:
    const std::uint64_t start_;
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::uint64_t end_;    // guarded by mutex_
    bool closed_ = false;  // guarded by mutex_
};

}  // namespace evring::cli
