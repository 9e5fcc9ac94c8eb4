// Shared pieces of the cross-process harness: the message layout every
// transport carries, pacing, and the one-line result protocol a peer prints
// for the orchestrator.
//
// Every peer is a separate process (fork + exec of evring-ipc), pinned to one
// core by the orchestrator before exec. Single-threaded.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "evring/clock.hpp"

namespace evring::ipc {

// What every transport sends: a sequence number, the sender's wall clock at send
// time, and padding up to the payload size (at least sizeof(MessageHead)).
struct MessageHead {
    std::uint64_t sequence;
    std::uint64_t sent_ns;  // wall_clock_nanos() of the sender, 0 when not measured
};

inline constexpr std::uint64_t kEndSequence = UINT64_MAX;  // baselines: "writer finished"
inline constexpr std::uint16_t kDataEvent = 7;
inline constexpr std::uint16_t kEndEvent = 8;

// How many events a sender paced at `rate` per second (0: flat out) may have
// sent `elapsed_ns` after it started, capped at `limit`.
inline std::uint64_t paced_allowance(double rate, std::uint64_t elapsed_ns, std::uint64_t limit) {
    if (rate <= 0) return limit;
    const auto due = static_cast<std::uint64_t>(double(elapsed_ns) * rate / 1e9) + 1;
    return std::min(due, limit);
}

// Options every peer receives on its command line as key=value words.
struct PeerOptions {
    std::map<std::string, std::string> values;

    std::string text(const std::string& key, const std::string& fallback = "") const {
        auto it = values.find(key);
        return it == values.end() ? fallback : it->second;
    }
    double number(const std::string& key, double fallback = 0) const {
        auto it = values.find(key);
        return it == values.end() ? fallback : std::strtod(it->second.c_str(), nullptr);
    }
    std::uint64_t count(const std::string& key, std::uint64_t fallback = 0) const {
        return static_cast<std::uint64_t>(number(key, static_cast<double>(fallback)));
    }
};

inline PeerOptions parse_peer_options(int argc, char** argv, int first) {
    PeerOptions options;
    for (int i = first; i < argc; ++i) {
        std::string word = argv[i];
        const auto eq = word.find('=');
        if (eq != std::string::npos) options.values[word.substr(0, eq)] = word.substr(eq + 1);
    }
    return options;
}

// The q-quantile of `values` (reorders them).
inline double percentile(std::vector<double>& values, double q) {
    if (values.empty()) return 0;
    const auto k = static_cast<std::size_t>(q * double(values.size() - 1));
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
    return values[k];
}

// The result line: "result key=value key=value ...", flushed, on stdout.
class ResultLine {
public:
    ResultLine& add(const std::string& key, double value) {
        text_ += " " + key + "=" + std::to_string(value);
        return *this;
    }
    void print() const {
        std::printf("result%s\n", text_.c_str());
        std::fflush(stdout);
    }

private:
    std::string text_;
};

inline void print_ready() {
    std::printf("ready\n");
    std::fflush(stdout);
}

}  // namespace evring::ipc
