#include "ipc/compare.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <vector>

#include "ipc/common.hpp"
#include "ipc/scenarios.hpp"

namespace evring::ipc {

namespace {

// Default: the writer creates its ring through RingWriter and publishes with
// the default publisher (it claims the ring: writer_claim.hpp), as an
// application does; Shared and Exclusive choose the mode on a ring the
// harness made.
// FloorClock: the floor with one wall-clock read per event (floor_ring.hpp),
// the control that separates the clock's cost from evring's own; it runs the
// 64 B figures only.
// Batch16: the default writer publishing batches of 16 events (the array
// form of Publisher::publish_batch, as typed publish_many does); the
// writer figure only.
enum PeerKind { Classic, Default, Shared, Exclusive, Floor, FloorClock, Batch16, kPeerKinds };
const char* const kPeerNames[kPeerKinds] = {"classic", "evring default", "evring Shared", "evring Exclusive",
                                            "floor", "floor + clock", "evring batch 16"};
const char* const kPeerKeys[kPeerKinds] = {"classic", "default", "shared", "exclusive", "floor", "floor_clock",
                                           "batch16"};

double value(const Results& results, const std::string& key) {
    auto it = results.find(key);
    return it == results.end() ? NAN : it->second;
}

double median(std::vector<double> values) {
    std::vector<double> kept;
    for (double v : values)
        if (!std::isnan(v)) kept.push_back(v);
    if (kept.empty()) return NAN;
    std::sort(kept.begin(), kept.end());
    const std::size_t n = kept.size();
    return n % 2 == 1 ? kept[n / 2] : (kept[n / 2 - 1] + kept[n / 2]) / 2;
}

RunResult run_one(PeerKind kind, const std::string& dir, RunSpec spec, const std::string& variant) {
    if (variant == "nodoorbell") spec.doorbell = false;
    if (variant == "ntcopy") spec.streaming_copy = true;
    if (variant == "doublemap" && kind == Shared) {
        spec.classic_double_map = true;
        return run_classic(dir, spec);
    }
    if (variant == "aa" && kind == Shared) return run_classic(dir, spec);  // the control: classic again
    if ((variant == "mixed" || variant == "doublemap") && kind == Default) return {};
    if (variant == "mixed" && kind == Shared) {
        spec.reader_peer = "classic-reader";
        return run_evring(dir, spec);
    }
    if (variant == "mixed" && kind == Exclusive) {
        spec.writer_peer = "classic-writer";
        return run_evring(dir, spec);
    }
    switch (kind) {
    case Classic: return run_classic(dir, spec);
    case Default: spec.owned = true; return run_evring(dir, spec);
    case Shared: return run_evring(dir, spec);
    case Exclusive: spec.exclusive = true; return run_evring(dir, spec);
    case Floor: return run_floor(dir, spec);
    case FloorClock: spec.floor_clock = true; return run_floor(dir, spec);
    case Batch16: spec.owned = true; spec.batch = 16; return run_evring(dir, spec);
    default: return {};
    }
}

// One figure: how to run it and which result to read.
struct Figure {
    std::string key;    // JSON stem
    std::string title;  // table row
    RunSpec spec;
    bool from_writer;   // the figure is the writer's, else the reader's
    std::vector<std::string> result_keys;  // first is the figure; the rest are shown too
    bool floor;         // the floor runs it too (it cannot pace)
    bool higher_better;
    bool floor_clock = false;  // and the floor with a clock (the 64 B figures)
    bool batch16 = false;      // and the default writer in batches of 16 (the writer figure)
};

// Interrupts taken so far by `cpu`, per /proc/interrupts row label (LOC,
// CAL, RES, ...; device rows by number): the orchestrator brackets each
// latency run with it, so a reader stall can be matched with interrupts of
// its core.
std::map<std::string, double> interrupts_of_cpu(int cpu) {
    std::map<std::string, double> counts;
    std::FILE* f = std::fopen("/proc/interrupts", "r");
    if (f == nullptr) return counts;
    char line[4096];
    if (std::fgets(line, sizeof line, f) == nullptr) {  // the CPU header row
        std::fclose(f);
        return counts;
    }
    while (std::fgets(line, sizeof line, f) != nullptr) {
        char label[64];
        int used = 0;
        if (std::sscanf(line, " %63[^:]:%n", label, &used) != 1) continue;
        const char* p = line + used;
        double value = 0;
        for (int c = 0; c <= cpu; ++c) {
            char* end = nullptr;
            value = std::strtod(p, &end);
            if (end == p) break;
            p = end;
        }
        counts[label] = value;
    }
    std::fclose(f);
    return counts;
}

// The short names of issue 25's keys: floor_ratio_reader_1kib_shm, ..._huge,
// aa_spread_reader_1kib_shm; the /dev/shm figure also without a page suffix
// for the writer and the A/A spread (floor_ratio_writer_64b, aa_spread_reader_1kib).
// `tail` follows the figure (floor_ratio_writer_64b_batch16). With a range
// (`low`, `high` not NaN), each key also gets KEY_min and KEY_max.
void add_short_keys(std::map<std::string, double>& json, const std::string& prefix, const std::string& stem,
                    const std::string& suffix, double value, const std::string& tail = "", double low = NAN,
                    double high = NAN) {
    const std::string figure = (stem == "writer_ns_64b"              ? "writer_64b"
                                : stem == "reader_events_per_s_64b"  ? "reader_64b"
                                : stem == "reader_events_per_s_1kib" ? "reader_1kib"
                                                                     : stem) +
                               tail;
    std::vector<std::string> keys{prefix + figure + (suffix.empty() ? "_shm" : suffix == "_hugetlbfs" ? "_huge" : suffix)};
    if (suffix.empty() && (stem == "writer_ns_64b" || prefix == "aa_spread_")) keys.push_back(prefix + figure);
    for (const std::string& key : keys) {
        json[key] = value;
        if (!std::isnan(low)) json[key + "_min"] = low;
        if (!std::isnan(high)) json[key + "_max"] = high;
    }
}

}  // namespace

std::map<std::string, double> run_classic_comparison(const std::string& dir, const std::string& title,
                                                     const CompareOptions& options, const std::string& suffix) {
    const auto spec = make_spec;
    const auto latency_events = static_cast<std::uint64_t>(options.latency_rate * options.latency_seconds);
    const std::vector<Figure> figures = {
        {"writer_ns_64b", "writer ns/event, 64 B, no reader", spec(64, options.flat_events, 0, 0, false), true,
         {"writer_ns_per_event", "claimed"}, true, false, true, true},
        {"reader_events_per_s_64b", "reader events/s, 64 B, flat out", spec(64, options.flat_events, 0, 1, false),
         false, {"reader_events_per_s", "lost", "received", "expired", "not_ready_per_event"}, true, true, true},
        {"reader_events_per_s_1kib", "reader events/s, 1 KiB, flat out",
         spec(1024, options.flat_events / 4, 0, 1, false), false, {"reader_events_per_s", "lost", "received", "expired", "not_ready_per_event"}, true, true},
        {"latency", "latency, 64 B, paced", spec(64, latency_events, options.latency_rate, 1, true), false,
         {"latency_p50_ns", "latency_p99_ns", "latency_p999_ns", "latency_max_ns", "late_events",
          "late_events_reader_stalled", "reader_stalls", "reader_stall_max_ns", "setup_ns",
          "reader_minor_faults", "reader_involuntary_switches", "reader_voluntary_switches"},
         false, false},
    };
    // samples[figure][peer][result key] = one value per round
    std::vector<std::vector<std::map<std::string, std::vector<double>>>> samples(
        figures.size(), std::vector<std::map<std::string, std::vector<double>>>(kPeerKinds));
    std::vector<std::map<std::string, std::vector<double>>> writer_late(kPeerKinds);
    auto selected = [&](std::size_t f) { return figures[f].key.find(options.only) != std::string::npos; };
    for (int round = 0; round < options.runs; ++round) {
        for (std::size_t f = 0; f < figures.size(); ++f) {
            if (!selected(f)) continue;
            // The peers take turns at going first: a run can suffer from what
            // the one before it left behind (page frees the host is still
            // reclaiming, a warm or cold cache), so no peer always follows
            // the same one.
            for (int turn = 0; turn < kPeerKinds; ++turn) {
                const int p = (turn + round) % kPeerKinds;
                if (p == Floor && !figures[f].floor) continue;
                if (p == FloorClock && !figures[f].floor_clock) continue;
                if (p == Batch16 && (!figures[f].batch16 || (!options.variant.empty() && options.variant != "aa")))
                    continue;
                if (p == Default && (options.variant == "mixed" || options.variant == "doublemap")) continue;
                // Under SCHED_FIFO the kernel throttles real-time tasks for
                // 50 ms of every second: a latency run starts on a refilled
                // budget (and must last well under a second).
                if (Peer::fifo() && figures[f].spec.latency) ::usleep(1'100'000);
                const auto irq_before = interrupts_of_cpu(1);
                const RunResult r = run_one(static_cast<PeerKind>(p), dir, figures[f].spec, options.variant);
                if (figures[f].spec.latency) {
                    const auto irq_after = interrupts_of_cpu(1);
                    for (const char* k : {"LOC", "CAL", "RES", "TLB"})
                        samples[f][p][std::string("cpu1_irq_") + k].push_back(irq_after.count(k) != 0
                            ? irq_after.at(k) - irq_before.at(k) : NAN);
                }
                const Results& from = figures[f].from_writer ? r.writer : r.readers.at(0);
                for (const auto& key : figures[f].result_keys) samples[f][p][key].push_back(value(from, key));
                if (figures[f].spec.latency) {
                    samples[f][p]["writer_late_events"].push_back(value(r.writer, "writer_late_events"));
                    samples[f][p]["writer_publish_max_ns"].push_back(value(r.writer, "writer_publish_max_ns"));
                    samples[f][p]["writer_setup_ns"].push_back(value(r.writer, "setup_ns"));
                    for (const char* k : {"writer_minor_faults", "writer_involuntary_switches"})
                        samples[f][p][k].push_back(value(r.writer, k));
                }
            }
        }
    }

    std::map<std::string, double> json;
    if (!options.variant.empty())
        std::printf("\nexperiment '%s': %s\n", options.variant.c_str(),
                    options.variant == "mixed"      ? "row Shared = evring writer + classic reader, row Exclusive = "
                                                      "classic writer + evring reader"
                    : options.variant == "doublemap" ? "row Shared = the classic pair, its reader mapping the "
                                                      "payload buffer twice as evring does"
                    : options.variant == "ntcopy"    ? "evring writers copy payloads with streaming stores"
                    : options.variant == "aa"        ? "row Shared = a second classic pair, identical to the first "
                                                      "(an A/A control: how far two equal peers differ here)"
                                                    : "the ring announces no doorbell (no bell, no membarrier)");
    std::printf("\n%s\n%d interleaved rounds (classic, default, Shared, Exclusive, floor, floor + clock at 64 B; each round "
                "starts one peer later); medians; ratio = median of same-run ratios evring / classic (floor / classic for "
                "the floor); wins = rounds at least as good as the classic peer's\n",
                title.c_str(), options.runs);
    std::printf("%-36s %-17s %12s %10s %6s  %s\n", "figure", "peer", "median", "ratio", "wins", "per run");
    for (std::size_t f = 0; f < figures.size(); ++f) {
        if (!selected(f)) continue;
        const Figure& figure = figures[f];
        for (std::size_t k = 0; k < figure.result_keys.size(); ++k) {
            const std::string& key = figure.result_keys[k];
            const bool is_latency = key.rfind("latency_p", 0) == 0;
            const bool headline = k == 0 || is_latency;
            const std::string stem = figure.spec.latency
                                         ? key.substr(0, key.size() - 3) + "_64b"  // latency_p99_ns -> latency_p99_64b
                                         : figure.key;
            for (int p = 0; p < kPeerKinds; ++p) {
                if (p == Floor && !figure.floor) continue;
                if (p == FloorClock && !figure.floor_clock) continue;
                if (p == Batch16 && samples[f][p][key].empty()) continue;
                const std::vector<double>& runs = samples[f][p][key];
                const double med = median(runs);
                std::vector<double> ratios;
                for (std::size_t i = 0; i < runs.size(); ++i)
                    ratios.push_back(runs[i] / samples[f][Classic][key][i]);
                const double ratio = median(ratios);
                // Rounds in which this peer did at least as well as the classic
                // one: on a noisy machine a tail percentile is better judged by
                // how often it wins than by one median.
                int wins = 0, rounds = 0;
                for (std::size_t i = 0; i < runs.size(); ++i) {
                    const double theirs = samples[f][Classic][key][i];
                    if (std::isnan(runs[i]) || std::isnan(theirs)) continue;
                    ++rounds;
                    wins += figure.higher_better ? runs[i] >= theirs : runs[i] <= theirs;
                }
                std::string per_run;
                for (double v : runs) {
                    char text[32];
                    std::snprintf(text, sizeof text, "%s%.4g", per_run.empty() ? "" : " ", v);
                    per_run += text;
                }
                const std::string row = k == 0 || is_latency ? (is_latency ? figure.title + " " + key : figure.title)
                                                             : "  " + key;
                char won[32] = "";
                if (headline && p != Classic) std::snprintf(won, sizeof won, "%d/%d", wins, rounds);
                const char* name = p == Shared && options.variant == "aa" ? "classic again" : kPeerNames[p];
                std::printf("%-36s %-17s %12.4g %10.3f %6s  %s\n", p == 0 ? row.c_str() : "", name, med,
                            p == Classic ? 1.0 : ratio, won, per_run.c_str());
                if (!headline) {
                    json["compare_" + std::string(kPeerKeys[p]) + "_" + figure.key + "_" + key + suffix] = med;
                    continue;
                }
                json["compare_" + std::string(kPeerKeys[p]) + "_" + stem + suffix] = med;
                if (p == Shared && options.variant == "aa") {
                    // The control: a second classic pair over the first.
                    add_short_keys(json, "aa_spread_", stem, suffix, ratio);
                } else if (p != Classic) {
                    // Unsuffixed: the default publisher, what an application gets.
                    const std::string who = p == Default ? "" : std::string("_") + kPeerKeys[p];
                    json["ratio_vs_classic_" + stem + who + suffix] = ratio;
                    if (rounds > 0) json["wins_vs_classic_" + stem + who + suffix] = double(wins) / rounds;
                }
                // Same-run ratios (median, range) of one peer over another,
                // printed under the row of the second: issue 25's headroom
                // (default / floor) and the clock's control (default / floor
                // + clock, floor + clock / floor).
                const auto same_run = [&](int over, int under, const char* label, const std::string& prefix,
                                          const std::string& tail = "") {
                    std::vector<double> ratios_run;
                    const std::vector<double>& ours = samples[f][over][key];
                    const std::vector<double>& theirs = samples[f][under][key];
                    for (std::size_t i = 0; i < theirs.size() && i < ours.size(); ++i)
                        ratios_run.push_back(ours[i] / theirs[i]);
                    const double same_run_ratio = median(ratios_run);
                    // Beside it, how far apart this run's rounds were and (with
                    // the A/A control) how far two identical pairs came out: a
                    // ratio to the floor is only read against that spread.
                    double low = NAN, high = NAN;
                    for (double r : ratios_run) {
                        if (std::isnan(r)) continue;
                        low = std::isnan(low) ? r : std::min(low, r);
                        high = std::isnan(high) ? r : std::max(high, r);
                    }
                    char aa[48] = "";
                    if (options.variant == "aa") {
                        std::vector<double> again;
                        const std::vector<double>& control = samples[f][Shared][key];
                        for (std::size_t i = 0; i < control.size(); ++i)
                            again.push_back(control[i] / samples[f][Classic][key][i]);
                        std::snprintf(aa, sizeof aa, "  A/A spread %.3f", median(again));
                    }
                    std::printf("%-36s %-17s %12s %10.3f %6s  rounds %zu, range %.3f-%.3f%s\n", "", label, "",
                                same_run_ratio, "", ratios_run.size(), low, high, aa);
                    // The ratio, with its rounds' range as KEY_min and KEY_max.
                    add_short_keys(json, prefix, stem, suffix, same_run_ratio, tail, low, high);
                };
                if (p == Floor) same_run(Default, Floor, "default / floor", "floor_ratio_");
                if (p == FloorClock) {
                    same_run(Default, FloorClock, "default / fl+clock", "floor_clock_ratio_");
                    same_run(FloorClock, Floor, "fl+clock / floor", "clock_cost_ratio_");
                }
                if (p == Batch16) {
                    same_run(Batch16, Floor, "batch 16 / floor", "floor_ratio_", "_batch16");
                    same_run(Batch16, FloorClock, "batch 16 / fl+clock", "floor_clock_ratio_", "_batch16");
                    same_run(Batch16, Default, "batch 16 / default", "default_ratio_", "_batch16");
                }
            }
        }
        if (figure.spec.latency) {
            for (const char* key : {"writer_late_events", "writer_publish_max_ns", "writer_setup_ns",
                                    "writer_minor_faults", "writer_involuntary_switches", "cpu1_irq_LOC",
                                    "cpu1_irq_CAL", "cpu1_irq_RES", "cpu1_irq_TLB"}) {
                for (int p = 0; p < kPeerKinds; ++p) {
                    if (p == Floor || p == FloorClock) continue;
                    std::string per_run;
                    for (double v : samples[f][p][key]) {
                        char text[32];
                        std::snprintf(text, sizeof text, "%s%.4g", per_run.empty() ? "" : " ", v);
                        per_run += text;
                    }
                    std::printf("%-36s %-17s %12.4g %10s %6s  %s\n", p == 0 ? (std::string("  ") + key).c_str() : "",
                                kPeerNames[p], median(samples[f][p][key]), "", "", per_run.c_str());
                }
            }
        }
    }
    json["compare_rounds" + suffix] = options.runs;
    std::fflush(stdout);
    return json;
}

}  // namespace evring::ipc
