// Writing output files without replacing what must stay (output_file.hpp).
#include "output/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <climits>
#include <cstdlib>
#include <cstring>

#include "output/escape.hpp"

namespace evring::cli {
namespace {

std::string_view kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a file evring writes";
}

bool same_file(const struct stat& a, const std::string& other) {
    struct stat b {};
    return ::stat(other.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

Error dangling_link(const std::string& path) {
    return Error(EINVAL, fmt::format("'{}' is a symbolic link to a missing file: not following it", printable(path)));
}

// The file a symbolic link finally names.
Result<std::string> resolve_link(const std::string& path) {
    char resolved[PATH_MAX];
    if (::realpath(path.c_str(), resolved) == nullptr) {
        if (errno == ENOENT) return dangling_link(path);
        return Error::from_errno(errno, fmt::format("following the link '{}'", printable(path)));
    }
    return std::string(resolved);
}

}  // namespace

Result<OutputFile> OutputFile::open(const std::string& path, const OutputFileOptions& options) {
    OutputFile out;
    out.path_ = path;
    out.target_ = path;
    struct stat st {};
    const bool exists = ::lstat(path.c_str(), &st) == 0;
    if (exists && S_ISLNK(st.st_mode)) {
        // What it points to; a link to nothing is not followed.
        if (::stat(path.c_str(), &st) != 0) return dangling_link(path);
        // A file is replaced where it is, so the link stays. (A device or
        // pipe is opened through the link: /dev/stdout names a pipe by
        // /proc/self/fd/1, which has no path to resolve.)
        if (S_ISREG(st.st_mode)) {
            auto target = resolve_link(path);
            if (!target) return std::move(target).error();
            out.target_ = *target;
        }
    }
    if (exists) {
        for (const KeptFile& k : options.keep)
            if (same_file(st, k.path))
                return Error(EINVAL, fmt::format("refusing to write {} over {}: '{}' is '{}'", options.what,
                                                 k.description, printable(path), printable(k.path)));
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
            // Into the device or FIFO itself: no O_CREAT, so nothing is made if
            // it vanished meanwhile. A FIFO waits for its reader, as `>` does.
            out.fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
            if (out.fd_ < 0) return Error::from_errno(errno, fmt::format("opening '{}'", printable(path)));
            return out;
        }
        if (!S_ISREG(st.st_mode))
            return Error(S_ISDIR(st.st_mode) ? EISDIR : EINVAL,
                         fmt::format("cannot write '{}': it is {}", printable(path), kind_of(st.st_mode)));
        if (!options.replace)
            return Error(EEXIST, fmt::format("'{}' exists; pass --force to replace it", printable(path)));
    }
    out.temporary_ = fmt::format("{}.tmp.{}", out.target_, ::getpid());
    out.fd_ = ::open(out.temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out.fd_ < 0) {
        const int err = errno;
        out.temporary_.clear();  // not ours: never removed
        return Error::from_errno(err, fmt::format("creating '{}'", printable(path)));
    }
    if (exists) (void)::fchmod(out.fd_, st.st_mode & 07777);
    return out;
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)), target_(std::move(other.target_)),
      temporary_(std::move(other.temporary_)), committed_(other.committed_) {
    other.fd_ = -1;
    other.temporary_.clear();
}

OutputFile& OutputFile::operator=(OutputFile&& other) noexcept {
    if (this != &other) {
        discard();
        fd_ = other.fd_;
        path_ = std::move(other.path_);
        target_ = std::move(other.target_);
        temporary_ = std::move(other.temporary_);
        committed_ = other.committed_;
        other.fd_ = -1;
        other.temporary_.clear();
    }
    return *this;
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!committed_ && !temporary_.empty()) ::unlink(temporary_.c_str());
    temporary_.clear();
}

Status OutputFile::commit() {
    const int fd = fd_;
    fd_ = -1;
    if (fd >= 0 && ::close(fd) != 0) return Error::from_errno(errno, fmt::format("writing '{}'", printable(path_)));
    if (temporary_.empty()) return {};
    if (::rename(temporary_.c_str(), target_.c_str()) != 0)
        return Error::from_errno(errno, fmt::format("renaming '{}' to '{}'", printable(temporary_), printable(target_)));
    committed_ = true;
    return {};
}

Status write_output_file(const std::string& path, std::string_view text, const OutputFileOptions& options) {
    auto out = OutputFile::open(path, options);
    if (!out) return std::move(out).error();
    for (std::size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(out->fd(), text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return Error::from_errno(errno, fmt::format("writing '{}'", printable(path)));
        done += static_cast<std::size_t>(n);
    }
    return out->commit();
}

}  // namespace evring::cli
