// evring snapshot: a consistent zstd-compressed copy of a ring.
#include <fcntl.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>

#include "commands.hpp"
#include "input.hpp"
#include "output.hpp"

namespace evring::cli {

int run_snapshot(const SnapshotOptions& options) {
    auto input = open_input(options.ring, {kDefaultMaxSnapshotSize, false});
    if (!input) {
        report_error(input.error().message());
        return kExitRuntime;
    }
    // Written under a temporary name and renamed, so FILE is never half-written.
    const std::string temporary = options.output + ".tmp" + std::to_string(::getpid());
    if (!options.force && ::access(options.output.c_str(), F_OK) == 0) {
        report_error("'" + options.output + "' exists; pass --force to replace it");
        return kExitRuntime;
    }
    int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        report_error(Error::from_errno(errno, "creating '" + temporary + "'").message());
        return kExitRuntime;
    }
    auto stats = write_snapshot(*input->ring(), fd, options.output, {options.level});
    const bool closed = ::close(fd) == 0;
    if (!stats || !closed) {
        ::unlink(temporary.c_str());
        report_error(stats ? "closing '" + temporary + "' failed" : stats.error().message());
        return kExitRuntime;
    }
    if (::rename(temporary.c_str(), options.output.c_str()) != 0) {
        const int err = errno;
        ::unlink(temporary.c_str());
        report_error(Error::from_errno(err, "renaming '" + temporary + "' to '" + options.output + "'").message());
        return kExitRuntime;
    }
    const SnapshotStats& s = *stats;
    std::fprintf(stderr,
                 "evring: snapshot of %s written to %s: %" PRIu64 " events (seqno %" PRIu64
                 "..%" PRIu64 "), %" PRIu64 " descriptors dropped (uncommitted, torn or overwritten while copying), %" PRIu64
                 " payloads already expired; %s -> %" PRIu64 " bytes\n",
                 input->path.c_str(), options.output.c_str(), s.kept_events, s.oldest_seqno,
                 s.newest_seqno, s.dropped_descriptors, s.expired_payloads,
                 human_bytes(s.ring_bytes).c_str(), s.compressed_bytes);
    return kExitOk;
}

}  // namespace evring::cli
