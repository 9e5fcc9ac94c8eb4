// The producer's command line: which ring to create, how many events to
// write and how fast. examples/producer.cpp adds --keep and --threads;
// bench/paced_producer.cpp (evring-paced-producer) adds --tick-us and holds
// --rate exactly instead of as an upper bound.
//
//   producer <ring-config> [--count N] [--rate N]
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

struct ProducerOptions {
    std::string ring;         // <name-or-path>[:<descriptor-shift>:<payload-buffer-shift>] (config.hpp)
    std::uint64_t count = 0;  // 0: until stopped
    std::uint64_t rate = 0;   // events per second; 0: as fast as possible
};

inline void add_producer_options(CLI::App& app, ProducerOptions& options) {
    app.add_option("ring", options.ring, "<name-or-path>[:<descriptor-shift>:<payload-buffer-shift>]")->required();
    app.add_option("--count", options.count, "stop after N events (default: run until stopped)");
    app.add_option("--rate", options.rate, "at most N events per second (default: as fast as possible)");
}
