// Fuzz target: loading a set snapshot (ring_set_snapshot.hpp: a skippable
// frame with the manifest, then per member a record and a ring snapshot
// frame). The input, written to a file, is given to load_set_snapshot with a
// 32 MiB limit for all members together; it must be rejected with a message,
// or load into members that ascend below max_members and carry the
// manifest's content, whose rings the reader operations then walk without
// leaving their mappings.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "set/ring_set_snapshot.hpp"
#include "exercise.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string path = "/dev/shm/evring-fuzz-set-snapshot-" + std::to_string(::getpid());
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) __builtin_trap();
    if (size > 0 && ::write(fd, data, size) != static_cast<ssize_t>(size)) __builtin_trap();
    ::close(fd);
    evring::SnapshotLoadOptions options;
    options.max_decompressed_size = std::uint64_t{32} << 20;
    auto loaded = evring::load_set_snapshot(path, options);
    ::unlink(path.c_str());
    if (!loaded) {
        EVRING_FUZZ_CHECK(!loaded.error().message().empty());
        evring::fuzz::tally("set_snapshot", &loaded.error().message());
        return 0;
    }
    evring::fuzz::tally("set_snapshot", nullptr);
    EVRING_FUZZ_CHECK(loaded->members.size() <= loaded->manifest.max_members);
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < loaded->members.size(); ++i) {
        auto& [index, member] = loaded->members[i];
        EVRING_FUZZ_CHECK(index < loaded->manifest.max_members);
        EVRING_FUZZ_CHECK(i == 0 || loaded->members[i - 1].first < index);
        EVRING_FUZZ_CHECK(member.ring.content_type() == loaded->manifest.content_type);
        total += member.ring.layout().file_size;
        evring::fuzz::Script script(data, size > 64 ? 64 : size);
        evring::fuzz::exercise_reader(member.ring, script, 64, false);
    }
    (void)total;
    return 0;
}
