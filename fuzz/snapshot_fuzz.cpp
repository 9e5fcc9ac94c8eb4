// Fuzz target: loading a snapshot (a zstd frame holding a ring file). The
// input is written to a file and given to load_snapshot with a 32 MiB limit;
// it must be rejected with a message or load into a ring that the reader
// operations then walk without leaving the mapping.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "evring/snapshot.hpp"
#include "exercise.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string path = "/dev/shm/evring-fuzz-snapshot-" + std::to_string(::getpid());
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) __builtin_trap();
    if (size > 0 && ::write(fd, data, size) != static_cast<ssize_t>(size)) __builtin_trap();
    ::close(fd);
    evring::SnapshotLoadOptions options;
    options.max_decompressed_size = std::uint64_t{32} << 20;
    auto loaded = evring::load_snapshot(path, options);
    ::unlink(path.c_str());
    if (!loaded) {
        EVRING_FUZZ_CHECK(!loaded.error().message().empty());
        evring::fuzz::tally("snapshot", &loaded.error().message());
        return 0;
    }
    evring::fuzz::tally("snapshot", nullptr);
    evring::fuzz::Script script(data, size > 64 ? 64 : size);
    evring::fuzz::exercise_reader(loaded->ring, script, 128);
    return 0;
}
