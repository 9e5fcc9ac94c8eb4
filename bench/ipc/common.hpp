// Shared pieces of the cross-process harness: the message layout every
// transport carries, pacing, and the one-line result protocol a peer prints
// for the orchestrator.
//
// Every peer is a separate process (fork + exec of evring-ipc), pinned to one
// core by the orchestrator before exec. Single-threaded.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <time.h>

#include <cstring>

#include "evring/clock.hpp"

namespace evring::ipc {

// The buffer a peer copies payloads from (writers) or into (readers), at the
// same place relative to a page for every peer: 64 bytes past a page
// boundary. Where malloc happened to put a writer's 1 KiB source buffer moved
// its 1 KiB rate by 2x (one extra 17-byte argument to the writer process,
// which shifted its heap, was enough), and page-aligned buffers halved the
// rate of every peer with a stamped header; 64 bytes past a page was as good
// as 1040 or 2112 for every peer (docs/performance.md, "Copy buffers").
class PageBuffer {
public:
    static constexpr std::size_t kPageOffset = 64;
    explicit PageBuffer(std::size_t size, std::byte fill = std::byte{0})
        : size_(size),
          base_(static_cast<std::byte*>(
              std::aligned_alloc(4096, (size + kPageOffset + 4095) & ~std::size_t{4095}))) {
        if (base_ == nullptr) std::abort();
        std::memset(data(), static_cast<int>(fill), size_);
    }
    ~PageBuffer() { std::free(base_); }
    PageBuffer(const PageBuffer&) = delete;
    PageBuffer& operator=(const PageBuffer&) = delete;
    std::byte* data() const noexcept { return base_ + kPageOffset; }
    std::size_t size() const noexcept { return size_; }

private:
    std::size_t size_;
    std::byte* base_;
};

// What every transport sends: a sequence number, the sender's wall clock at send
// time, and padding up to the payload size (at least sizeof(MessageHead)).
struct MessageHead {
    std::uint64_t sequence;
    std::uint64_t sent_ns;  // wall_clock_nanos() of the sender, 0 when not measured
};

// CLOCK_MONOTONIC in nanoseconds: the one clock of every latency figure.
// The writer stamps the payload before it reserves, the reader reads the
// clock once it has the payload (as the independent harness of issue 15
// did), so evring's own timestamp source plays no part in the figure.
inline std::uint64_t monotonic_nanos() noexcept {
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

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

// Writes the message head (sequence, send time or 0) into a payload.
inline void stamp_message(std::byte* payload, std::uint64_t sequence, bool stamp) noexcept {
    const MessageHead head{sequence, stamp ? monotonic_nanos() : 0};
    std::memcpy(payload, &head, sizeof head);
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

// Page faults and context switches of this process since begin(): where a
// stall came from when the peer was not preempted by another task.
class UsageDelta {
public:
    void begin() noexcept { ::getrusage(RUSAGE_SELF, &start_); }
    void report(ResultLine& line, const std::string& prefix) const {
        rusage now{};
        ::getrusage(RUSAGE_SELF, &now);
        line.add(prefix + "minor_faults", double(now.ru_minflt - start_.ru_minflt))
            .add(prefix + "major_faults", double(now.ru_majflt - start_.ru_majflt))
            .add(prefix + "involuntary_switches", double(now.ru_nivcsw - start_.ru_nivcsw))
            .add(prefix + "voluntary_switches", double(now.ru_nvcsw - start_.ru_nvcsw));
    }

private:
    rusage start_{};
};

// A reader's latency samples and the evidence of where late events waited:
// record() takes the payload's head after the copy; poll() (latency runs
// only) notices when the reader itself went without running for longer than
// kStall, so that a late event can be blamed on the reader (it was not
// polling) or on the writer side (stamp to commit).
class LatencyLog {
public:
    static constexpr std::uint64_t kStall = 20'000;   // ns between two polls
    static constexpr std::uint64_t kLate = 100'000;   // ns: a "late" event

    // The samples are written once here, before the run: pages first touched
    // by record() faulted ~395 times per run, in the reader's polling loop,
    // and each fault of this guest could take longer than kStall.
    LatencyLog(bool on, std::uint64_t events) : on_(on) {
        if (on_) samples_.assign(events + 16, 0.0);
        usage_.begin();
    }
    bool on() const noexcept { return on_; }

    void poll() noexcept {
        if (!on_) return;
        const std::uint64_t now = monotonic_nanos();
        if (last_poll_ != 0 && now - last_poll_ > kStall) {
            ++stalls_;
            stall_max_ = std::max(stall_max_, now - last_poll_);
            last_stall_end_ = now;
            last_stall_start_ = last_poll_;
        }
        last_poll_ = now;
    }
    void record(const std::byte* payload) noexcept {
        if (!on_) return;
        MessageHead head;
        std::memcpy(&head, payload, sizeof head);
        const std::uint64_t now = monotonic_nanos();
        const std::uint64_t latency = now - head.sent_ns;
        if (recorded_ < samples_.size()) samples_[recorded_++] = double(static_cast<std::int64_t>(latency));
        if (latency > kLate) {
            ++late_;
            // The reader stalled while this event waited: the reader's fault.
            if (last_stall_end_ > head.sent_ns && last_stall_start_ < now) ++late_reader_stalled_;
        }
    }
    void report(ResultLine& line) {
        if (!on_) return;
        samples_.resize(recorded_);
        line.add("latency_p50_ns", percentile(samples_, 0.50))
            .add("latency_p99_ns", percentile(samples_, 0.99))
            .add("latency_p999_ns", percentile(samples_, 0.999))
            .add("latency_max_ns", samples_.empty() ? 0 : *std::max_element(samples_.begin(), samples_.end()))
            .add("late_events", double(late_))
            .add("late_events_reader_stalled", double(late_reader_stalled_))
            .add("reader_stalls", double(stalls_))
            .add("reader_stall_max_ns", double(stall_max_));
        usage_.report(line, "reader_");
    }

private:
    bool on_;
    std::vector<double> samples_;
    std::size_t recorded_ = 0;
    std::uint64_t last_poll_ = 0, stalls_ = 0, stall_max_ = 0;
    std::uint64_t last_stall_start_ = 0, last_stall_end_ = 0;
    std::uint64_t late_ = 0, late_reader_stalled_ = 0;
    UsageDelta usage_;
};

// A writer's count of events that took longer than LatencyLog::kLate from
// their stamp to the end of commit (the writer was held up, not the reader).
class WriterLateLog {
public:
    explicit WriterLateLog(bool on) : on_(on) { usage_.begin(); }
    void check(const std::byte* payload) noexcept {
        if (!on_) return;
        MessageHead head;
        std::memcpy(&head, payload, sizeof head);
        const std::uint64_t took = monotonic_nanos() - head.sent_ns;
        if (took > LatencyLog::kLate) ++late_;
        max_ = std::max(max_, took);
    }
    void report(ResultLine& line) const {
        if (!on_) return;
        line.add("writer_late_events", double(late_)).add("writer_publish_max_ns", double(max_));
        usage_.report(line, "writer_");
    }

private:
    bool on_;
    std::uint64_t late_ = 0, max_ = 0;
    UsageDelta usage_;
};

inline void print_ready() {
    std::printf("ready\n");
    std::fflush(stdout);
}

// Writers of ring runs start first (scenarios.cpp, run_gated_peers): once set
// up they say "ready" and wait for the harness's go on the pipe `gate=FD`.
// Without a gate (a writer started last) they go on at once.
inline void wait_for_gate(const PeerOptions& options) {
    if (options.text("gate", "").empty()) return;
    print_ready();
    const int gate = static_cast<int>(options.count("gate", 0));
    char go;
    if (::read(gate, &go, 1) != 1) {
        std::fprintf(stderr, "evring-ipc writer: the harness never said go\n");
        std::exit(2);
    }
    ::close(gate);
}

}  // namespace evring::ipc
