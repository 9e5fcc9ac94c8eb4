// The CRC32C of a 256 KiB recording block (lib/util/crc32c.hpp): crc32c() as
// built (ISA-L's crc32_iscsi when meson found libisal), the fallback it
// replaces (one chain of SSE4.2 crc32 instructions) and the portable table
// version. Bytes per second are the figure (docs/recording-format.md, "The
// checksum's code is ISA-L's").
#include <cstddef>
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>

#include "util/crc32c.hpp"

namespace {

constexpr std::size_t kBlock = 256 << 10;

std::vector<std::byte> block() {
    std::vector<std::byte> bytes(kBlock);
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>(i * 131 + 7);
    return bytes;
}

template <std::uint32_t (*Crc)(const void*, std::size_t, std::uint32_t) noexcept>
void run(benchmark::State& state) {
    const auto bytes = block();
    for (auto _ : state) benchmark::DoNotOptimize(Crc(bytes.data(), bytes.size(), 0));
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kBlock));
}

void BM_Crc32cBlock(benchmark::State& state) { run<evring::detail::crc32c>(state); }
void BM_Crc32cFallbackBlock(benchmark::State& state) { run<evring::detail::crc32c_fallback>(state); }
void BM_Crc32cPortableBlock(benchmark::State& state) { run<evring::detail::crc32c_portable>(state); }
BENCHMARK(BM_Crc32cBlock);
BENCHMARK(BM_Crc32cFallbackBlock);
BENCHMARK(BM_Crc32cPortableBlock);

}  // namespace
