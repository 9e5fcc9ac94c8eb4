// Benchmark support: a ring in a private file (tmpfs or hugetlbfs), created
// and mapped directly, removed when the object goes away.
//
// Not thread-safe to construct; the mapped rings are used per the library's
// own thread-safety rules. Errors abort with a message: benchmarks have no
// caller to hand an error to.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "evring/ring/ring.hpp"
#include "evring/ring/ring_writer.hpp"

namespace evring::bench {

[[noreturn]] inline void die(const std::string& what) {
    std::fprintf(stderr, "evring bench: %s\n", what.c_str());
    std::exit(2);
}

inline RingParams bench_params(unsigned descriptor_shift, unsigned payload_shift) {
    RingParams params;
    params.content.content_type = static_cast<std::uint16_t>(ContentType::Performance);
    params.descriptor_shift = descriptor_shift;
    params.payload_buf_shift = payload_shift;
    return params;
}

// A ring `path` that this process creates and owns as an application does
// (RingWriter, held exclusively, removed when the writer goes): its default
// publisher claims it (writer_claim.hpp).
inline RingWriter create_owned_ring(const std::string& path, unsigned descriptor_shift, unsigned payload_shift) {
    RingConfig config;
    config.name_or_path = path;
    config.descriptor_shift = descriptor_shift;
    config.payload_buf_shift = payload_shift;
    RingContent content;
    content.content_type = static_cast<std::uint16_t>(ContentType::Performance);
    auto writer = RingWriter::create(RingSpec(config, content));
    if (!writer) die(writer.error().message());
    return std::move(writer).value();
}

// Creates the ring file at `path` (replacing any old one).
inline void create_ring(const std::string& path, const RingParams& params) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) die("creating " + path + ": " + std::strerror(errno));
    const Status status = initialize_ring_file(fd, params, path);
    ::close(fd);
    if (!status.ok()) die(status.error().message());
}

inline MappedRing map_ring(const std::string& path, Access access) {
    const int fd = ::open(path.c_str(), (access == Access::ReadWrite ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    if (fd < 0) die("opening " + path + ": " + std::strerror(errno));
    auto ring = MappedRing::map(fd, access, path);
    ::close(fd);
    if (!ring) die(ring.error().message());
    return std::move(ring).value();
}

// A ring file in `dir` that is unlinked on destruction, with a writer mapping.
class ScratchRing {
public:
    ScratchRing(const std::string& dir, const RingParams& params)
        : path_(dir + "/evring-bench-" + std::to_string(::getpid()) + "-" +
                std::to_string(counter()++)) {
        create_ring(path_, params);
        writer_.emplace(map_ring(path_, Access::ReadWrite));
    }
    ~ScratchRing() {
        writer_.reset();
        ::unlink(path_.c_str());
    }
    ScratchRing(const ScratchRing&) = delete;
    ScratchRing& operator=(const ScratchRing&) = delete;

    const std::string& path() const { return path_; }
    const MappedRing& writer() const { return *writer_; }

private:
    static int& counter() {
        static int n = 0;
        return n;
    }
    std::string path_;
    std::optional<MappedRing> writer_;
};

}  // namespace evring::bench
