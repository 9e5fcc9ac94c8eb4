// evring snapshot: a consistent zstd-compressed copy of a ring (or of a
// snapshot), written under a temporary name and renamed into place.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fmt/format.h>

#include "commands.hpp"
#include "escape.hpp"
#include "evring/ring.hpp"
#include "evring/snapshot.hpp"
#include "open.hpp"
#include "output.hpp"
#include "stop.hpp"
#include "values.hpp"

namespace evring::cli {
namespace {

// True when `path` (symbolic links followed) is the file the source was read from.
bool is_source_file(const std::string& path, const SourceIdentity& id) {
    struct stat st {};
    if (id.inode == 0 || ::stat(path.c_str(), &st) != 0) return false;
    const std::uint64_t device = (std::uint64_t{major(st.st_dev)} << 32) | minor(st.st_dev);
    return device == id.device && static_cast<std::uint64_t>(st.st_ino) == id.inode;
}

// Checks the output before anything is copied.
Status check_output(const SnapshotOptions& options, const SourceIdentity& id) {
    if (is_source_file(options.output, id))
        return Error(EINVAL, fmt::format("refusing to write the snapshot over the {} it copies: '{}' is '{}'",
                                         describe(id.kind), options.output, id.path));
    if (!options.force && ::access(options.output.c_str(), F_OK) == 0)
        return Error(EEXIST, fmt::format("'{}' exists; pass --force to replace it", options.output));
    return {};
}

// Writes the snapshot into `temporary`; removes it on any failure.
Result<SnapshotStats> write_temporary(const MappedRing& ring, const std::string& temporary,
                                      const std::string& output, int level) {
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return Error::from_errno(errno, fmt::format("creating '{}'", temporary));
    SnapshotWriteOptions write_options;
    write_options.compression_level = level;
    write_options.stop = &stop_flag();
    auto stats = write_snapshot(ring, fd, output, write_options);
    const bool closed = ::close(fd) == 0;
    if (!stats || !closed) {
        ::unlink(temporary.c_str());
        if (stats) return Error::from_errno(errno, fmt::format("closing '{}'", temporary));
        if (stats.error().errno_value() == ECANCELED)
            return Error(ECANCELED, fmt::format("interrupted: '{}' was not written", output));
        return std::move(stats).error();
    }
    return stats;
}

void print_stats(const std::string& from, const std::string& output, const SnapshotStats& s) {
    fmt::print(stderr,
               "evring: snapshot of {} written to {}: {} events (seqno {}..{}), {} descriptors dropped (uncommitted, "
               "torn or overwritten while copying), {} payloads already expired; {} -> {} bytes\n",
               printable(from), printable(output), s.kept_events, s.oldest_seqno, s.newest_seqno,
               s.dropped_descriptors, s.expired_payloads, human_bytes(s.ring_bytes), s.compressed_bytes);
}

}  // namespace

int run_snapshot(const SnapshotOptions& options) {
    int level = 3;
    if (options.level) {
        auto parsed = parse_int_in("--level", *options.level, 1, 19);
        if (!parsed) return usage_error(parsed.error());
        level = *parsed;
    }
    auto source = open_for_command(options.ring, {});
    if (!source) return runtime_error(source.error());
    const SourceIdentity& id = (*source)->identity();
    const MappedRing* ring = (*source)->ring();
    if (ring == nullptr)
        return runtime_error(Error(EINVAL, fmt::format("'{}' is a {}; snapshot copies a ring or a snapshot",
                                                       options.ring, describe(id.kind))));
    if (auto s = check_output(options, id); !s) return runtime_error(s.error());
    install_stop_handlers();  // a signal now ends the copy, and the temporary file goes
    const std::string temporary = fmt::format("{}.tmp{}", options.output, ::getpid());
    auto stats = write_temporary(*ring, temporary, options.output, level);
    if (!stats) return runtime_error(stats.error());
    if (::rename(temporary.c_str(), options.output.c_str()) != 0) {
        const int err = errno;
        ::unlink(temporary.c_str());
        return runtime_error(Error::from_errno(err, fmt::format("renaming '{}' to '{}'", temporary, options.output)));
    }
    print_stats(id.path, options.output, *stats);
    return kExitOk;
}

}  // namespace evring::cli
