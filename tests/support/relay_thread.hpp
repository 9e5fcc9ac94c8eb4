// Test support: run_relay (nats_relay.hpp) on a thread of its own, stopped
// and joined on destruction, its log lines kept for the test to look for.
//
//     test::RelayThread relay(options);          // relaying from here on
//     eventually([&] { return relay.logged("relaying '"); }, 20s);
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "nats/nats_relay.hpp"

namespace evring::test {

// Polls `done` every 20 ms until it holds or `timeout` passed.
template <class Done>
bool eventually(Done done, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        if (done()) return true;
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

class RelayThread {
public:
    explicit RelayThread(nats::RelayOptions options) : options_(std::move(options)) {
        options_.stop_flag = &stop_;
        options_.log = [this](std::string_view line) {
            std::lock_guard<std::mutex> lock(mutex_);
            log_.emplace_back(line);
        };
        thread_ = std::thread([this] {
            auto result = nats::run_relay(options_);
            std::lock_guard<std::mutex> lock(mutex_);
            if (!result) log_.push_back("run_relay failed: " + result.error().message());
            finished_ = true;
        });
    }
    ~RelayThread() {
        stop_ = true;
        thread_.join();
    }
    RelayThread(const RelayThread&) = delete;
    RelayThread& operator=(const RelayThread&) = delete;

    bool logged(std::string_view text) const {
        std::lock_guard<std::mutex> lock(mutex_);
        for (const auto& line : log_)
            if (line.find(text) != std::string::npos) return true;
        return false;
    }
    std::string log() const {
        std::lock_guard<std::mutex> lock(mutex_);
        std::string text;
        for (const auto& line : log_) text += line + "\n";
        return text;
    }
    // run_relay returned (stopped, or failed: see log()).
    bool finished() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return finished_;
    }

private:
    nats::RelayOptions options_;
    std::atomic<bool> stop_{false};
    mutable std::mutex mutex_;
    std::vector<std::string> log_;
    bool finished_ = false;
    std::thread thread_;
};

}  // namespace evring::test
