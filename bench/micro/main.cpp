// Entry point of the micro-benchmark executable.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
