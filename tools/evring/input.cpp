#include "input.hpp"

#include <sys/stat.h>

namespace evring::cli {
namespace {

bool exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

Result<std::string> resolve(std::string_view typed) {
    const std::string text(typed);
    if (text.empty()) return Error(EINVAL, "the ring name is empty");
    if (text.find('/') != std::string::npos) return text;
    auto in_directory = resolve_ring_path(typed);
    if (in_directory && exists(*in_directory)) return in_directory;
    if (exists(text)) return "./" + text;
    if (!in_directory)
        return std::move(in_directory).context("no file '" + text + "' here, and resolving it as a ring name").error();
    return Error(ENOENT, "no ring '" + text + "': neither " + *in_directory +
                             " nor ./" + text + " exists");
}

}  // namespace

std::string next_recording_path(const std::string& path, std::uint32_t file_index) {
    const std::string suffix = "." + std::to_string(file_index);
    const bool rotated = file_index > 0 && path.size() > suffix.size() &&
                         path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
    const std::string base = rotated ? path.substr(0, path.size() - suffix.size()) : path;
    return rotated_path(base, file_index + 1);
}

std::string_view kind_name(InputKind kind) {
    switch (kind) {
    case InputKind::Ring: return "ring file";
    case InputKind::Snapshot: return "snapshot";
    case InputKind::Recording: return "recording";
    }
    return "?";
}

Result<Input> open_input(std::string_view typed, const InputOptions& options) {
    auto resolved = resolve(typed);
    if (!resolved) return std::move(resolved).error();
    Input input;
    input.typed = std::string(typed);
    input.path = *resolved;
    const std::string where = input.typed == input.path
                                  ? "'" + input.path + "'"
                                  : "'" + input.typed + "' (resolved to " + input.path + ")";
    struct stat st {};
    if (::stat(input.path.c_str(), &st) != 0)
        return Error::from_errno(errno, "opening " + where);
    if (S_ISDIR(st.st_mode)) return Error(EISDIR, "opening " + where + ": it is a directory");

    auto zstd = is_zstd_file(input.path);
    if (!zstd) return std::move(zstd).context("opening " + where).error();
    if (*zstd) {
        auto loaded = load_snapshot(input.path, {options.max_snapshot_size});
        if (!loaded) {
            Error error = std::move(loaded).error();
            error.context("opening " + where);
            if (error.errno_value() == EFBIG)
                return Error(EFBIG, error.message() + " (raise it with --max-snapshot-size)");
            return error;
        }
        input.kind = InputKind::Snapshot;
        input.snapshot.emplace(std::move(loaded).value());
        return input;
    }
    auto recording = is_recording_file(input.path);
    if (!recording) return std::move(recording).context("opening " + where).error();
    if (*recording) {
        if (!options.allow_recording)
            return Error(EINVAL, where + " is a recording, which this command cannot use "
                                         "(it needs a ring or a snapshot)");
        auto reader = RecordingReader::open(input.path);
        if (!reader) return std::move(reader).context("opening " + where).error();
        input.kind = InputKind::Recording;
        input.recording.emplace(std::move(reader).value());
        return input;
    }
    auto reader = RingReader::open(input.path);
    if (!reader) return std::move(reader).context("opening " + where).error();
    input.kind = InputKind::Ring;
    input.live.emplace(std::move(reader).value());
    return input;
}

}  // namespace evring::cli
