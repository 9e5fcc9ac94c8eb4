// evring-wakeup: how long a sleeping reader takes to run after a commit
// (issue 35, item 4), for each way of waking it (wake_channel.hpp: the
// futex doorbell, the doorbell with its default bound on the wake rate, a
// pipe and an eventfd the writer writes), in one run: writer pinned to cpu 0,
// reader to cpu 1, separate processes (fork + exec, as evring-ipc's peers),
// the variants interleaved over rounds in rotating order. Prints
// p50/p99/p99.9/max over all of each variant's events, each percentile's
// range over the rounds, and with --json the same as wakeup_latency_* keys.
//
//   evring-wakeup [--events N] [--rate R] [--rounds K] [--variants a,b]
//                 [--json FILE] [--fifo] [--shm-dir DIR]
//   defaults: 100000 events per variant at 10000 events/s in 10 rounds
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "ipc/spawn.hpp"
#include "support/bench_ring.hpp"
#include "wakeup/wake_channel.hpp"
#include "wakeup/wakeup_peers.hpp"

namespace {

using namespace evring;
using namespace evring::wakeup;

struct Options {
    std::uint64_t events = 100'000;  // per variant, over all rounds
    double rate = 10'000;
    int rounds = 10;
    std::vector<std::string> variants;  // empty: all
    std::string json_path;
    std::string shm_dir = "/dev/shm";
    bool fifo = false;
};

// The q-quantile of sorted `v` (NaN when empty).
double quantile(const std::vector<std::uint64_t>& v, double q) {
    if (v.empty()) return NAN;
    return double(v[static_cast<std::size_t>(q * double(v.size() - 1))]);
}

struct Run {
    std::vector<std::uint64_t> samples;
    ipc::Results writer, reader;
};

// One run of `variant`: the writer first (it creates the ring and waits on a
// gate), then the reader, then the gate opens.
Run run_once(const WakeVariant& variant, const Options& options, std::uint64_t events, int round) {
    const std::string stem = options.shm_dir + "/evring-wakeup-" + std::to_string(::getpid()) + "-" + variant.name +
                             "-" + std::to_string(round);
    const std::string path = stem + ".ring", samples = stem + ".samples";
    const std::vector<int> fds = variant.make_fds();
    std::vector<std::string> words{"variant=" + variant.name, "path=" + path, "events=" + std::to_string(events),
                                   "rate=" + std::to_string(options.rate), "samples=" + samples};
    for (std::size_t i = 0; i < fds.size(); ++i) words.push_back("fd" + std::to_string(i) + "=" + std::to_string(fds[i]));
    int gate[2];
    if (::pipe2(gate, O_CLOEXEC) != 0) bench::die(std::string("pipe: ") + std::strerror(errno));
    std::vector<std::string> writer_words{"wakeup-writer", "gate=" + std::to_string(gate[0])};
    writer_words.insert(writer_words.end(), words.begin(), words.end());
    std::vector<int> writer_fds = fds;
    writer_fds.push_back(gate[0]);
    ipc::Peer writer = ipc::Peer::start(writer_words, 0, writer_fds);
    ::close(gate[0]);
    writer.wait_ready();
    std::vector<std::string> reader_words{"wakeup-reader"};
    reader_words.insert(reader_words.end(), words.begin(), words.end());
    ipc::Peer reader = ipc::Peer::start(reader_words, 1, fds);
    reader.wait_ready();
    for (int fd : fds) ::close(fd);
    if (::write(gate[1], "g", 1) != 1) bench::die(std::string("gate: ") + std::strerror(errno));
    ::close(gate[1]);
    Run run;
    run.writer = writer.finish();
    run.reader = reader.finish();
    ::unlink(path.c_str());
    std::ifstream in(samples, std::ios::binary);
    std::uint64_t v;
    while (in.read(reinterpret_cast<char*>(&v), sizeof v)) run.samples.push_back(v);
    ::unlink(samples.c_str());
    if (run.samples.size() != events) bench::die("evring-wakeup: the " + variant.name + " reader recorded " +
                                                 std::to_string(run.samples.size()) + " of " + std::to_string(events) + " events");
    return run;
}

std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t comma = text.find(',', start);
        out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

int usage(int code) {
    std::printf("usage: evring-wakeup [--events N] [--rate R] [--rounds K] [--variants a,b] [--json FILE] [--fifo] "
                "[--shm-dir DIR]\nvariants:");
    for (const WakeVariant& v : wake_variants()) std::printf(" %s", v.name.c_str());
    std::printf("\n");
    return code;
}

int run(const Options& options) {
    std::vector<const WakeVariant*> variants;
    for (const WakeVariant& v : wake_variants())
        if (options.variants.empty() || std::count(options.variants.begin(), options.variants.end(), v.name) > 0)
            variants.push_back(&v);
    ipc::Peer::set_fifo(options.fifo);
    const std::uint64_t events_per_run = std::max<std::uint64_t>(options.events / std::uint64_t(options.rounds), 1);
    std::printf("evring-wakeup: %llu events per variant at %.0f events/s, %d rounds (variants in rotating order), "
                "writer on cpu 0, reader on cpu 1%s\n",
                static_cast<unsigned long long>(events_per_run * std::uint64_t(options.rounds)), options.rate, options.rounds,
                options.fifo ? ", SCHED_FIFO" : ", ordinary scheduling");
    std::fflush(stdout);
    std::map<std::string, std::vector<std::uint64_t>> all;
    std::map<std::string, std::map<std::string, std::vector<double>>> by_round;  // variant -> percentile -> rounds
    std::map<std::string, double> sleeps, late;
    const std::pair<const char*, double> points[] = {{"p50", 0.5}, {"p99", 0.99}, {"p999", 0.999}};
    for (int round = 0; round < options.rounds; ++round) {
        for (std::size_t turn = 0; turn < variants.size(); ++turn) {
            const WakeVariant& v = *variants[(turn + std::size_t(round)) % variants.size()];
            Run r = run_once(v, options, events_per_run, round);
            sleeps[v.name] += r.reader["sleeps"];
            late[v.name] += r.writer["writer_late_events"];
            std::sort(r.samples.begin(), r.samples.end());
            for (const auto& [key, q] : points) by_round[v.name][key].push_back(quantile(r.samples, q));
            all[v.name].insert(all[v.name].end(), r.samples.begin(), r.samples.end());
        }
    }
    std::map<std::string, double> json;
    std::printf("%-10s %10s %10s %10s %10s   %-33s %8s %6s  %s\n", "variant", "p50 ns", "p99 ns", "p99.9 ns", "max ns",
                "rounds' range p50 / p99 / p99.9", "sleeps", "late", "");
    for (const WakeVariant* vp : variants) {
        const std::string& name = vp->name;
        std::vector<std::uint64_t>& s = all[name];
        std::sort(s.begin(), s.end());
        char range[96] = "";
        std::size_t used = 0;
        for (const auto& [key, q] : points) {
            const std::vector<double>& rounds = by_round[name][key];
            const double low = *std::min_element(rounds.begin(), rounds.end());
            const double high = *std::max_element(rounds.begin(), rounds.end());
            const std::string base = "wakeup_latency_" + name + "_" + key + "_ns";
            json[base] = quantile(s, q);
            json[base + "_min"] = low;
            json[base + "_max"] = high;
            used += static_cast<std::size_t>(std::snprintf(range + used, sizeof range - used, "%s%.0f-%.0f",
                                                           used == 0 ? "" : " / ", low, high));
        }
        json["wakeup_latency_" + name + "_max_ns"] = double(s.back());
        json["wakeup_latency_" + name + "_sleeps"] = sleeps[name];
        json["wakeup_latency_" + name + "_writer_late_events"] = late[name];
        std::printf("%-10s %10.0f %10.0f %10.0f %10.0f   %-33s %8.0f %6.0f  %s\n", name.c_str(), quantile(s, 0.5),
                    quantile(s, 0.99), quantile(s, 0.999), double(s.back()), range, sleeps[name], late[name],
                    vp->description.c_str());
    }
    // The doorbell's futex wake over each file descriptor's, by percentile.
    for (const char* other : {"pipe", "eventfd"}) {
        if (all.count("futex") == 0 || all.count(other) == 0) continue;
        for (const auto& [key, q] : points)
            json[std::string("wakeup_latency_ratio_futex_vs_") + other + "_" + key] =
                quantile(all["futex"], q) / quantile(all[other], q);
    }
    json["wakeup_latency_events"] = double(events_per_run * std::uint64_t(options.rounds));
    json["wakeup_latency_rate"] = options.rate;
    json["wakeup_latency_rounds"] = options.rounds;
    json["wakeup_latency_fifo"] = options.fifo ? 1 : 0;
    if (!options.json_path.empty()) {
        std::ofstream out(options.json_path);
        out << "{\n";
        std::size_t i = 0;
        for (const auto& [key, value] : json)
            out << "  \"" << key << "\": " << (std::isnan(value) ? std::string("null") : std::to_string(value))
                << (++i < json.size() ? ",\n" : "\n");
        out << "}\n";
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 3 && std::strcmp(argv[1], "peer") == 0) {
        const ipc::PeerOptions options = ipc::parse_peer_options(argc, argv, 3);
        if (std::strcmp(argv[2], "wakeup-writer") == 0) return run_wakeup_writer(options);
        if (std::strcmp(argv[2], "wakeup-reader") == 0) return run_wakeup_reader(options);
        bench::die(std::string("evring-wakeup: unknown peer ") + argv[2]);
    }
    Options options;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool has_value = i + 1 < argc;
        if (arg == "--events" && has_value) options.events = std::strtoull(argv[++i], nullptr, 10);
        else if (arg == "--rate" && has_value) options.rate = std::atof(argv[++i]);
        else if (arg == "--rounds" && has_value) options.rounds = std::atoi(argv[++i]);
        else if (arg == "--variants" && has_value) options.variants = split(argv[++i]);
        else if (arg == "--json" && has_value) options.json_path = argv[++i];
        else if (arg == "--shm-dir" && has_value) options.shm_dir = argv[++i];
        else if (arg == "--fifo") options.fifo = true;
        else return usage(arg == "-h" || arg == "--help" ? 0 : 2);
    }
    if (options.rounds < 1 || options.events == 0 || options.rate <= 0) return usage(2);
    for (const std::string& name : options.variants) (void)wake_variant(name);  // dies naming an unknown one
    return run(options);
}
