// open_source: from what a user typed to an event source (source_open.hpp).
#include "evring/source/source_open.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "recording/recording_reader.hpp"
#include "source/healer.hpp"
#include "source/recording_source.hpp"
#include "evring/ring/ring_reader.hpp"
#include "set/ring_set_manifest.hpp"
#include "set/ring_set_snapshot.hpp"
#include "source/ring_set_source.hpp"
#include "source/ring_source.hpp"
#include "util/text_escape.hpp"

namespace evring {
namespace {

struct SchemeTable {
    std::mutex mutex;
    std::map<std::string, SourceOpener, std::less<>> openers;
};

SchemeTable& schemes() {
    static SchemeTable table;
    return table;
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

Result<std::unique_ptr<EventSource>> open_scheme(std::string_view location, std::string_view scheme,
                                                 const SourceOptions& options) {
    SourceOpener opener;
    std::string known;
    {
        SchemeTable& table = schemes();
        std::lock_guard<std::mutex> lock(table.mutex);
        if (auto it = table.openers.find(scheme); it != table.openers.end()) opener = it->second;
        for (const auto& [name, unused] : table.openers) known += (known.empty() ? "" : ", ") + name;
    }
    if (!opener)
        return Error(EPROTONOSUPPORT,
                     fmt::format("'{}': this program reads no '{}://' sources (it knows: {})", location, scheme,
                                 known.empty() ? "ring names and files only" : known));
    return opener(location, options);
}

// "'demo' (resolved to /dev/shm/event-rings/demo)" or "'x.zst'".
std::string where(std::string_view typed, const std::string& path) {
    return typed == path ? fmt::format("'{}'", path) : fmt::format("'{}' (resolved to {})", typed, path);
}

Result<std::unique_ptr<EventSource>> open_file(std::string_view typed, const std::string& path,
                                               const SourceOptions& options) {
    const std::string named = where(typed, path);
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return Error::from_errno(errno, "opening " + named);
    if (S_ISDIR(st.st_mode)) {
        if (!is_ring_set_directory(path)) return Error(EISDIR, "opening " + named + ": it is a directory");
        auto set = RingSetSource::open(path, std::string(typed));
        if (!set) return std::move(set).context("opening ring set " + named).error();
        return std::unique_ptr<EventSource>(std::move(set).value());
    }
    auto set_snapshot = is_set_snapshot_file(path);
    if (!set_snapshot) return std::move(set_snapshot).context("opening " + named).error();
    if (*set_snapshot) {
        auto loaded = load_set_snapshot(path, {options.max_snapshot_size});
        if (!loaded) return std::move(loaded).context("opening " + named).error();
        auto source = RingSetSource::open_snapshot(std::move(loaded).value(), std::string(typed));
        if (!source) return std::move(source).error();
        return std::unique_ptr<EventSource>(std::move(source).value());
    }
    auto zstd = is_zstd_file(path);
    if (!zstd) return std::move(zstd).context("opening " + named).error();
    if (*zstd) {
        auto loaded = load_snapshot(path, {options.max_snapshot_size});
        if (!loaded) return std::move(loaded).context("opening " + named).error();
        auto source = RingSource::open_snapshot(std::move(loaded).value(), std::string(typed));
        if (!source) return std::move(source).error();
        return std::unique_ptr<EventSource>(std::move(source).value());
    }
    auto recording = is_recording_file(path);
    if (!recording) return std::move(recording).context("opening " + named).error();
    if (*recording) {
        auto source = RecordingSource::open(path, std::string(typed), options.recording_series,
                                            options.follow_recording);
        if (!source) return std::move(source).context("opening " + named).error();
        return std::unique_ptr<EventSource>(std::move(source).value());
    }
    auto reader = RingReader::open(path);
    if (!reader) return std::move(reader).context("opening " + named).error();
    auto source = RingSource::open_live(std::move(reader).value(), std::string(typed));
    if (!source) return std::move(source).error();
    return std::unique_ptr<EventSource>(std::move(source).value());
}

}  // namespace

std::string_view location_scheme(std::string_view location) noexcept {
    const auto colon = location.find("://");
    if (colon == std::string_view::npos || colon == 0) return {};
    const std::string_view scheme = location.substr(0, colon);
    if (scheme[0] < 'a' || scheme[0] > 'z') return {};
    for (char c : scheme)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.')) return {};
    return scheme;
}

Result<std::string> resolve_location(std::string_view location, const DirectoryOptions& directory) {
    const std::string text(location);
    if (text.empty()) return Error(EINVAL, "the ring name is empty");
    if (!location_scheme(location).empty() || text.find('/') != std::string::npos) return text;
    auto in_directory = resolve_ring_path(location, directory);
    if (in_directory && exists(*in_directory)) return in_directory;
    if (exists(text)) return "./" + text;
    // A name may be 100 kB of text: messages echo its start only (text_escape.hpp).
    if (!in_directory)
        return std::move(in_directory)
            .context(fmt::format("no file '{}' here, and resolving it as a ring name", shortened(text)))
            .error();
    return Error(ENOENT, fmt::format("no ring '{}': neither {} nor ./{} exists", shortened(text),
                                     shortened(*in_directory), shortened(text)));
}

// HealOptions: the source gets a healer (event_source.hpp, healer.hpp).
Result<std::unique_ptr<EventSource>> healing(Result<std::unique_ptr<EventSource>> opened, const HealOptions& heal) {
    if (!opened || !heal.wanted()) return opened;
    if (auto s = heal_source(**opened, heal); !s) return std::move(s).error();
    return opened;
}

Result<std::unique_ptr<EventSource>> open_source(std::string_view location, const SourceOptions& options) {
    if (const std::string_view scheme = location_scheme(location); !scheme.empty())
        return healing(open_scheme(location, scheme, options), options.heal);
    auto path = resolve_location(location, options.directory);
    if (!path) return std::move(path).error();
    return healing(open_file(location, *path, options), options.heal);
}

Status heal_source(EventSource& source, const HealOptions& heal) {
    const bool live = source.kind() == SourceKind::Ring || source.kind() == SourceKind::RingSet;
    if (!live && heal.when_live) return {};
    if (!live)
        return Error(EINVAL, fmt::format("healing lapped gaps (--heal, --heal-from) is for live rings and ring sets; "
                                         "'{}' is a {}, which nothing overwrites",
                                         shortened(source.identity().location), describe(source.kind())));
    auto healer = std::make_unique<detail::Healer>(
        detail::HealSettings{heal.recording, heal.find && heal.recording.empty(), heal.patience}, source);
    healer->look_early();
    source.heal_with(std::move(healer));
    return {};
}

void register_source_scheme(std::string_view scheme, SourceOpener opener) {
    SchemeTable& table = schemes();
    std::lock_guard<std::mutex> lock(table.mutex);
    table.openers.insert_or_assign(std::string(scheme), std::move(opener));
}

}  // namespace evring
