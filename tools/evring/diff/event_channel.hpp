// tools/evring/diff/event_channel.hpp — a bounded queue of copied events from
// one reading thread (the follow loop of one source) to the comparing thread.
//
// Contract: push() waits while `capacity` events are queued and returns false
// once the consumer closed the channel (the follow loop then stops: its sink
// returns false). pop() waits for an event and returns nullopt once the
// producer ended it and the queue is empty. Memory is bounded by `capacity`
// events, each as large as one payload.
//
// Thread safety: one producer thread, one consumer thread; the mutex orders
// every queued event's bytes before the consumer reads them.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>

#include "diff/diff_compare.hpp"

namespace evring::cli {

class EventChannel {
public:
    explicit EventChannel(std::size_t capacity) : capacity_(capacity) {}

    bool push(ComparedEvent&& event) {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return queue_.size() < capacity_ || closed_; });
        if (closed_) return false;
        queue_.push_back(std::move(event));
        changed_.notify_all();
        return true;
    }
    std::optional<ComparedEvent> pop() {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return !queue_.empty() || ended_; });
        if (queue_.empty()) return std::nullopt;
        ComparedEvent event = std::move(queue_.front());
        queue_.pop_front();
        changed_.notify_all();
        return event;
    }
    // The producer: no more events.
    void end() {
        std::lock_guard lock(mutex_);
        ended_ = true;
        changed_.notify_all();
    }
    // The consumer: it takes no more (a waiting push returns false).
    void close() {
        std::lock_guard lock(mutex_);
        closed_ = true;
        changed_.notify_all();
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<ComparedEvent> queue_;
    std::size_t capacity_;
    bool ended_ = false;
    bool closed_ = false;
};

}  // namespace evring::cli
