#include "ipc/report.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <vector>

#include "evring/clock.hpp"
#include "evring/format.hpp"
#include "ipc/common.hpp"
#include "ipc/compare.hpp"
#include "ipc/hugepages.hpp"
#include "ipc/scenarios.hpp"

namespace evring::ipc {

namespace {

double value(const Results& results, const std::string& key) {
    auto it = results.find(key);
    return it == results.end() ? NAN : it->second;
}

void print_header(const char* title) {
    std::printf("\n%s\n%-34s %12s %14s %10s %10s %10s\n", title, "run", "writer ns/ev", "reader ev/s",
                "lost", "p50 ns", "p99 ns");
}

// A reader's figure, or NaN when the run was skipped.
double reader_value(const RunResult& r, const std::string& key) {
    return r.readers.empty() ? NAN : value(r.readers.front(), key);
}

void print_row(const std::string& name, const RunResult& r) {
    if (r.writer.empty()) {
        std::printf("%-34s skipped with --quick\n", name.c_str());
        return;
    }
    if (r.readers.empty()) {
        std::printf("%-34s %12.1f %14s %10s %10s %10s\n", name.c_str(),
                    value(r.writer, "writer_ns_per_event"), "-", "-", "-", "-");
    }
    for (std::size_t i = 0; i < r.readers.size(); ++i) {
        const Results& reader = r.readers[i];
        std::printf("%-34s %12.1f %14.0f %10.0f %10.0f %10.0f\n",
                    (i == 0 ? name : "  (reader " + std::to_string(i + 1) + ")").c_str(),
                    value(r.writer, "writer_ns_per_event"), value(reader, "reader_events_per_s"),
                    value(reader, "lost"), value(reader, "latency_p50_ns"),
                    value(reader, "latency_p99_ns"));
    }
    std::fflush(stdout);
}

// Clock error against CLOCK_REALTIME over `span_ns`: the largest distance
// outside a [realtime, realtime] bracket, so preemption cannot inflate it.
double clock_error_max_ns(std::uint64_t span_ns) {
    double worst = 0;
    const std::uint64_t end = realtime_nanos() + span_ns;
    for (std::uint64_t after = 0; after < end;) {
        const std::uint64_t before = realtime_nanos();
        const std::uint64_t value = wall_clock_nanos();
        after = realtime_nanos();
        if (value < before) worst = std::max(worst, double(before - value));
        if (value > after) worst = std::max(worst, double(value - after));
    }
    return worst;
}

std::string json_number(double v) {
    if (std::isnan(v)) return "null";
    char text[64];
    std::snprintf(text, sizeof text, "%.6g", v);
    return text;
}

}  // namespace

int run_comparison(const Options& options) {
    const bool quick = options.quick;
    const double seconds = quick ? 2 : 10;  // length of the paced loss runs
    const auto spec = make_spec;
    const std::uint64_t flat_events = quick ? 4'000'000 : 20'000'000;
    // Under SCHED_FIFO the kernel throttles real-time tasks for 50 ms of every
    // second (sched_rt_runtime_us); a latency run therefore lasts 0.4 s (the
    // reader also spins while the writer maps the ring) and
    // starts after a pause that refills the budget, so no sample waits out a
    // throttle. Without FIFO the same length keeps the runs comparable.
    const std::uint64_t latency_events = 40'000;
    auto refill_rt_budget = [&] {
        if (options.fifo) ::usleep(1'100'000);
    };
    const double latency_rate = 100'000;
    const std::uint64_t baseline_events = quick ? 300'000 : 2'000'000;
    const std::uint64_t baseline_latency_events = 40'000;

    Peer::set_fifo(options.fifo);
    (void)wall_clock_nanos();
    const double clock_error = clock_error_max_ns(quick ? 300'000'000 : 2'000'000'000);
    std::printf("evring-ipc%s: writer on cpu 0, readers on cpu 1%s; clock %s, max error vs "
                "CLOCK_REALTIME %.0f ns\n",
                quick ? " --quick" : "", options.fifo ? ", SCHED_FIFO" : "", to_string(wall_clock_source()),
                clock_error);

    // The classic RING01 peer, same run, interleaved, on both kinds of pages.
    const RingLayout layout = RingLayout::of(RingSize{1u << 20, 1u << 28, 0});
    const HugetlbfsDir huge = prepare_hugetlbfs(options.hugetlbfs, layout.file_size);
    std::map<std::string, double> compare_json;
    {
        CompareOptions compare;
        compare.runs = options.compare_runs > 0 ? options.compare_runs : quick ? 3 : 5;
        compare.flat_events = quick ? 4'000'000 : 20'000'000;
        compare.latency_seconds = options.latency_seconds > 0 ? options.latency_seconds : quick ? 0.6 : 2;
        compare.only = options.compare_figure;
        compare.variant = options.compare_variant;
        Peer::set_fifo(options.compare_fifo);
        const std::string sched = options.compare_fifo ? "SCHED_FIFO" : "ordinary scheduling";
        const std::string pages = options.shm_dir == "/dev/shm" ? " (4 KiB pages), " : ", ";
        compare_json = run_classic_comparison(options.shm_dir, "classic RING01 peer vs evring, ring on " +
                                              options.shm_dir + pages + sched, compare, "");
        if (huge.dir.empty()) {
            std::printf("\nclassic comparison on hugetlbfs: skipped: %s\n", huge.skipped.c_str());
        } else {
            const auto more = run_classic_comparison(
                huge.dir, "classic RING01 peer vs evring, ring on hugetlbfs " + huge.dir + " (2 MiB pages), " + sched,
                compare, "_hugetlbfs");
            compare_json.insert(more.begin(), more.end());
        }
        Peer::set_fifo(options.fifo);
    }
    auto write_json_extra = [&](std::ofstream& out) {
        for (const auto& [key, v] : compare_json) out << "  \"" << key << "\": " << json_number(v) << ",\n";
    };
    if (options.compare_only) {
        if (!options.json_path.empty()) {
            std::ofstream out(options.json_path);
            out << "{\n";
            write_json_extra(out);
            out << "  \"compare_sched_fifo\": " << (options.compare_fifo ? "true" : "false") << "\n}\n";
            if (!out) return 1;
        }
        return 0;
    }

    // evring on 4 KiB pages (tmpfs).
    const std::string shm = options.shm_dir;
    print_header(("evring, ring on " + shm + " (4 KiB pages), 2^20 descriptors, 256 MiB payload").c_str());
    RunResult alone = run_evring(shm, spec(64, flat_events, 0, 0, false));
    print_row("64 B, 0 readers", alone);
    RunSpec exclusive_spec = spec(64, flat_events, 0, 0, false);
    exclusive_spec.exclusive = true;
    RunResult alone_exclusive = run_evring(shm, exclusive_spec);
    print_row("64 B, 0 readers, Exclusive writer", alone_exclusive);
    exclusive_spec.readers = 1;
    const bool full = !quick;  // runs only the full comparison makes
    RunResult one_exclusive = run_evring(shm, exclusive_spec);
    print_row("64 B, 1 reader, Exclusive writer", one_exclusive);
    RunResult one = run_evring(shm, spec(64, flat_events, 0, 1, false));
    print_row("64 B, 1 reader, writer flat out", one);
    exclusive_spec.doorbell = false;
    RunResult one_exclusive_quiet = full ? run_evring(shm, exclusive_spec) : RunResult{};
    print_row("64 B, 1 reader, Exclusive, no bell", one_exclusive_quiet);
    RunSpec backoff_spec = spec(64, flat_events, 0, 1, false);
    backoff_spec.backoff = 32;
    RunResult one_backoff = full ? run_evring(shm, backoff_spec) : RunResult{};
    print_row("64 B, 1 reader pausing on NotReady", one_backoff);
    RunResult two = full ? run_evring(shm, spec(64, flat_events, 0, 2, false)) : RunResult{};
    print_row("64 B, 2 readers, writer flat out", two);
    RunResult floor = run_floor(shm, spec(64, flat_events, 0, 1, false));
    print_row("floor: plain stores, 64 B", floor);
    RunResult paced20 = run_evring(shm, spec(64, static_cast<std::uint64_t>(20e6 * seconds), 20e6, 1, false));
    print_row("64 B, writer at 20 M/s", paced20);
    std::printf("%-34s writer reached %.1f M events/s of the 20 M asked\n", "",
                value(paced20.writer, "writer_events_per_s") / 1e6);
    RunResult kib = run_evring(shm, spec(1024, flat_events / 4, 0, 1, false));
    print_row("1 KiB, writer flat out", kib);
    RunResult kib_paced =
        full ? run_evring(shm, spec(1024, static_cast<std::uint64_t>(6.5e6 * seconds), 6.5e6, 1, false)) : RunResult{};
    print_row("1 KiB, writer at 6.5 M/s", kib_paced);
    if (full)
        std::printf("%-34s writer reached %.1f M events/s of the 6.5 M asked\n", "",
                    value(kib_paced.writer, "writer_events_per_s") / 1e6);
    refill_rt_budget();
    RunResult latency = run_evring(shm, spec(64, latency_events, latency_rate, 1, true));
    print_row("64 B latency, 100 k/s", latency);
    if (!quick) {
        for (std::size_t size : {16u, 256u, 4096u, 16384u, 65536u}) {
            const std::uint64_t events = std::max<std::uint64_t>(200'000, (4ull << 30) / size / 4);
            print_row(std::to_string(size) + " B, 1 reader, flat out",
                      run_evring(shm, spec(size, std::min(events, flat_events), 0, 1, false)));
        }
    }

    // evring on hugetlbfs (the full run only).
    std::optional<RunResult> huge_one, huge_latency;
    if (quick) {
        std::printf("\nevring on hugetlbfs: skipped: not run with --quick\n");
    } else if (huge.dir.empty()) {
        std::printf("\nevring on hugetlbfs: skipped: %s\n", huge.skipped.c_str());
    } else {
        print_header(("evring, ring on hugetlbfs " + huge.dir + " (2 MiB pages)").c_str());
        print_row("64 B, 0 readers", run_evring(huge.dir, spec(64, flat_events, 0, 0, false)));
        huge_one = run_evring(huge.dir, spec(64, flat_events, 0, 1, false));
        print_row("64 B, 1 reader, writer flat out", *huge_one);
        print_row("64 B, writer at 20 M/s",
                  run_evring(huge.dir, spec(64, static_cast<std::uint64_t>(20e6 * seconds), 20e6, 1, false)));
        print_row("1 KiB, writer flat out", run_evring(huge.dir, spec(1024, flat_events / 4, 0, 1, false)));
        refill_rt_budget();
        huge_latency = run_evring(huge.dir, spec(64, latency_events, latency_rate, 1, true));
        print_row("64 B latency, 100 k/s", *huge_latency);
    }

    // Baselines, same payload, same pinning.
    const double evring_rate = reader_value(one, "reader_events_per_s");
    print_header("baselines, 64 B messages (ratio = evring reader events/s / baseline)");
    double pipe_rate = NAN, iceoryx_rate = NAN;
    for (const char* transport : {"pipe", "unix", "posixmq", "boostmq"}) {
        if (quick && std::string(transport) != "pipe") {
            std::printf("%-34s skipped with --quick\n", transport);
            continue;
        }
        RunResult flat = run_baseline(transport, spec(64, baseline_events, 0, 1, false));
        refill_rt_budget();
        RunResult lat = run_baseline(transport, spec(64, baseline_latency_events, latency_rate, 1, true));
        flat.readers.at(0)["latency_p50_ns"] = reader_value(lat, "latency_p50_ns");
        flat.readers.at(0)["latency_p99_ns"] = reader_value(lat, "latency_p99_ns");
        print_row(transport, flat);
        const double rate = reader_value(flat, "reader_events_per_s");
        std::printf("%-34s evring is %.1fx\n", "", evring_rate / rate);
        if (std::string(transport) == "pipe") pipe_rate = rate;
    }
    std::string iceoryx_skipped;
    RunResult ice = run_iceoryx(spec(64, baseline_events, 0, 1, false), iceoryx_skipped);
    if (!iceoryx_skipped.empty()) {
        std::printf("iceoryx: skipped: %s\n", iceoryx_skipped.c_str());
    } else if (full) {
        refill_rt_budget();
        RunResult ice_lat = run_iceoryx(spec(64, baseline_latency_events, latency_rate, 1, true), iceoryx_skipped);
        if (iceoryx_skipped.empty()) {
            ice.readers.at(0)["latency_p50_ns"] = reader_value(ice_lat, "latency_p50_ns");
            ice.readers.at(0)["latency_p99_ns"] = reader_value(ice_lat, "latency_p99_ns");
        }
    }
    if (iceoryx_skipped.empty()) {
        print_row("iceoryx", ice);
        iceoryx_rate = reader_value(ice, "reader_events_per_s");
        std::printf("%-34s evring is %.1fx\n", "", evring_rate / iceoryx_rate);
    }

    if (!options.json_path.empty()) {
        std::ofstream out(options.json_path);
        out << "{\n";
        write_json_extra(out);
        out << "  \"compare_sched_fifo\": " << (options.compare_fifo ? "true" : "false") << ",\n"
            << "  \"writer_ns_per_event_64b\": " << json_number(value(alone.writer, "writer_ns_per_event")) << ",\n"
            << "  \"reader_events_per_s_64b\": " << json_number(evring_rate) << ",\n"
            << "  \"lost_events_at_20m_per_s\": " << json_number(reader_value(paced20, "lost")) << ",\n"
            << "  \"writer_events_per_s_in_20m_run\": " << json_number(value(paced20.writer, "writer_events_per_s")) << ",\n"
            << "  \"latency_p50_ns_64b\": " << json_number(reader_value(latency, "latency_p50_ns")) << ",\n"
            << "  \"latency_p99_ns_64b\": " << json_number(reader_value(latency, "latency_p99_ns")) << ",\n"
            << "  \"events_per_s_1kib\": " << json_number(reader_value(kib, "reader_events_per_s")) << ",\n"
            << "  \"ratio_vs_pipe\": " << json_number(evring_rate / pipe_rate) << ",\n"
            << "  \"ratio_vs_iceoryx\": " << json_number(evring_rate / iceoryx_rate) << ",\n"
            << "  \"writer_ns_per_event_64b_exclusive\": " << json_number(value(alone_exclusive.writer, "writer_ns_per_event")) << ",\n"
            << "  \"reader_events_per_s_64b_exclusive_writer\": " << json_number(reader_value(one_exclusive, "reader_events_per_s")) << ",\n"
            << "  \"reader_events_per_s_64b_exclusive_no_doorbell\": " << json_number(reader_value(one_exclusive_quiet, "reader_events_per_s")) << ",\n"
            << "  \"writer_ns_per_event_64b_1_reader\": " << json_number(value(one.writer, "writer_ns_per_event")) << ",\n"
            << "  \"writer_ns_per_event_64b_2_readers\": " << json_number(value(two.writer, "writer_ns_per_event")) << ",\n"
            << "  \"lost_events_1kib_at_6_5m_per_s\": " << json_number(reader_value(kib_paced, "lost")) << ",\n"
            << "  \"reader_events_per_s_64b_hugetlbfs\": "
            << json_number(huge_one ? reader_value(*huge_one, "reader_events_per_s") : NAN) << ",\n"
            << "  \"floor_reader_events_per_s_64b\": " << json_number(reader_value(floor, "reader_events_per_s")) << ",\n"
            << "  \"floor_writer_ns_per_event_64b\": " << json_number(value(floor.writer, "writer_ns_per_event")) << ",\n"
            << "  \"clock_error_max_ns\": " << json_number(clock_error) << ",\n"
            << "  \"clock_source\": \"" << to_string(wall_clock_source()) << "\",\n"
            << "  \"paced_run_seconds\": " << seconds << ",\n"
            << "  \"sched_fifo\": " << (options.fifo ? "true" : "false") << "\n"
            << "}\n";
        if (!out) {
            std::fprintf(stderr, "evring-ipc: writing %s failed\n", options.json_path.c_str());
            return 1;
        }
    }
    return 0;
}

}  // namespace evring::ipc
