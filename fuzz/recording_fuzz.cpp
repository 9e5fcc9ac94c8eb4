// Fuzz target: reading a recording file. The input is the file; the reader
// must return records, a clean end, a truncation notice or an error with a
// message, and every payload span it hands out must be readable.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "evring/recording.hpp"
#include "exercise.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string path = "/dev/shm/evring-fuzz-recording-" + std::to_string(::getpid());
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) __builtin_trap();
    if (size > 0 && ::write(fd, data, size) != static_cast<ssize_t>(size)) __builtin_trap();
    ::close(fd);
    auto reader = evring::RecordingReader::open(path);
    if (!reader) {
        ::unlink(path.c_str());
        EVRING_FUZZ_CHECK(!reader.error().message().empty());
        evring::fuzz::tally("recording", &reader.error().message());
        return 0;
    }
    evring::fuzz::tally("recording", nullptr);
    evring::Record record;
    for (int i = 0; i < 10'000; ++i) {
        auto status = reader->next(record);
        if (!status) {
            EVRING_FUZZ_CHECK(!status.error().message().empty());
            break;
        }
        if (*status != evring::ReadStatus::Record) break;
        if (record.kind == evring::RecordKind::Event) {
            EVRING_FUZZ_CHECK(record.payload.size() == record.event.payload_size);
            volatile std::uint8_t sum = 0;
            for (std::byte b : record.payload) sum = static_cast<std::uint8_t>(sum + static_cast<std::uint8_t>(b));
        }
    }
    ::unlink(path.c_str());
    return 0;
}
