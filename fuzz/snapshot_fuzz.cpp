// Fuzz target: loading a snapshot (a zstd frame holding a ring file), from a
// file and from memory (one implementation, both entries exercised). The input
// is given to load_snapshot with a 32 MiB limit; it must be rejected with a
// message, the same way by both entries, or load into a ring that the reader
// operations then walk without leaving the mapping.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <span>
#include <string>

#include "ring/snapshot.hpp"
#include "exercise.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    evring::SnapshotLoadOptions options;
    options.max_decompressed_size = std::uint64_t{32} << 20;
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
    auto from_memory = evring::load_snapshot(bytes, "fuzz-input", options);
    // Every 8th input also goes through a file, to reach the regular-file
    // open and the chunked reads (cheaper inputs stay in memory).
    if (size % 8 == 0) {
        static const std::string path = "/dev/shm/evring-fuzz-snapshot-" + std::to_string(::getpid());
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) __builtin_trap();
        if (size > 0 && ::write(fd, data, size) != static_cast<ssize_t>(size)) __builtin_trap();
        ::close(fd);
        auto from_file = evring::load_snapshot(path, options);
        ::unlink(path.c_str());
        EVRING_FUZZ_CHECK(from_file.ok() == from_memory.ok());
    }
    if (!from_memory) {
        EVRING_FUZZ_CHECK(!from_memory.error().message().empty());
        evring::fuzz::tally("snapshot", &from_memory.error().message());
        return 0;
    }
    evring::fuzz::tally("snapshot", nullptr);
    evring::fuzz::Script script(data, size > 64 ? 64 : size);
    evring::fuzz::exercise_reader(from_memory->ring, script, 128, false);
    return 0;
}
