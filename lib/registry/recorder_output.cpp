// A running recorder's output path, whole (recorder_output.hpp).
#include "registry/recorder_output.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string_view>

#include "recording/recording_reader.hpp"
#include "registry/reader_listing.hpp"
#include "registry/reader_registry_format.hpp"

namespace evring::detail {
namespace {

constexpr std::string_view kOutputPrefix = "-> /";

// Where fd `name` of process `pid` points, when it is a regular file.
std::string open_file(std::uint64_t pid, const char* name) {
    const std::string link = "/proc/" + std::to_string(pid) + "/fd/" + name;
    std::string target(4096, '\0');
    const ssize_t n = ::readlink(link.c_str(), target.data(), target.size());
    if (n <= 0 || static_cast<std::size_t>(n) >= target.size()) return {};
    target.resize(static_cast<std::size_t>(n));
    struct stat st {};
    if (::stat(link.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
    return target;
}

// FILE for a series' FILE.N, from the file's own header; the path itself
// for a first file; empty for what is not a recording.
std::string series_of(const std::string& path) {
    auto reader = RecordingReader::open(path);
    if (!reader) return {};
    const std::uint32_t index = reader->header().file_index;
    if (index == 0) return path;
    const std::string suffix = "." + std::to_string(index);
    if (path.size() <= suffix.size() || path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0)
        return {};
    return path.substr(0, path.size() - suffix.size());
}

std::string found_among_open_files(std::uint64_t pid, std::string_view kept) {
    const std::string fds = "/proc/" + std::to_string(pid) + "/fd";
    std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(fds.c_str()), ::closedir);
    if (!dir) return {};
    while (const dirent* e = ::readdir(dir.get())) {
        if (e->d_name[0] == '.') continue;
        const std::string target = open_file(pid, e->d_name);
        if (target.compare(0, kept.size(), kept) != 0) continue;
        if (std::string series = series_of(target); series.size() >= kept.size()) return series;
    }
    return {};
}

}  // namespace

std::string recorder_output(const ReaderEntry& recorder) {
    const std::string& detail = recorder.detail;
    if (detail.compare(0, kOutputPrefix.size(), kOutputPrefix) != 0) return {};
    std::string path = detail.substr(kOutputPrefix.size() - 1);
    if (detail.size() < kReaderDetailBytes - 1) return path;  // whole
    // Cut, or exactly as long as the field: what the recorder has open says which.
    if (!recorder.pid_in_our_namespace || recorder.pid == 0) return path;
    std::string found = found_among_open_files(recorder.pid, path);
    return found.empty() ? path : found;
}

}  // namespace evring::detail
