// evring rm: remove rings and ring sets no live writer holds (rm.hpp).
#include "ops/rm.hpp"

#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cerrno>

#include "evring/source/source_open.hpp"
#include "output/escape.hpp"
#include "files/dead_ring.hpp"
#include "files/ring_debris.hpp"
#include "ring/ring_open.hpp"
#include "registry/registry_open.hpp"
#include "set/ring_set_debris.hpp"
#include "util/text_escape.hpp"

namespace evring::cli {
namespace {

Status remove_ring(const std::string& location, const std::string& path) {
    auto split = detail::split_ring_path(path);
    if (!split) return std::move(split).error();
    auto dirfd = detail::open_ring_directory(*split, path);
    if (!dirfd) return std::move(dirfd).error();
    detail::UniqueFd dir(*dirfd);
    auto removed = detail::remove_unheld_ring(dir.get(), split->name, path, false);
    if (!removed) {
        const Error& e = removed.error();
        if (e.errno_value() == ENOENT) return Error(ENOENT, fmt::format("no ring '{}' ({} does not exist)", shortened(location), shortened(path)));
        if (e.errno_value() == EBUSY) return Error(EBUSY, e.message() + ": not removed");
        return std::move(removed).error();
    }
    if (!*removed) return Error(EAGAIN, fmt::format("ring '{}' changed while being removed (a writer took it?): not "
                                                    "removed", shortened(location)));
    // What killed processes left under the name goes too (ring_debris.hpp).
    reclaim_debris_of(split->directory, split->name);
    return {};
}

Status remove_one(const std::string& location) {
    auto path = resolve_location(location, {});
    if (!path) return std::move(path).error();
    if (!location_scheme(location).empty())
        return Error(EINVAL, fmt::format("'{}' is not a ring or a ring set: rm removes only those", shortened(location)));
    struct stat st {};
    if (::lstat(path->c_str(), &st) != 0) {
        if (errno == ENOENT) return Error(ENOENT, fmt::format("no ring or ring set '{}' ({} does not exist)", shortened(location), shortened(*path)));
        return Error::from_errno(errno, fmt::format("examining '{}'", shortened(*path)));
    }
    if (S_ISDIR(st.st_mode)) return remove_ring_set(*path);
    if (!S_ISREG(st.st_mode))
        return Error(EINVAL, fmt::format("'{}' is neither a ring nor a ring set: not removed", shortened(*path)));
    return remove_ring(location, *path);
}

}  // namespace

int run_rm(const RmOptions& options) {
    int code = kExitOk;
    for (const std::string& location : options.rings) {
        if (auto s = remove_one(location); !s) {
            report_error(s.error().message());
            code = kExitRuntime;
            continue;
        }
        fmt::print("removed {}\n", printable(shortened(location)));
    }
    std::fflush(stdout);
    return code;
}

Command add_rm(CLI::App& app) {
    auto o = std::make_shared<RmOptions>();
    auto* c = app.add_subcommand("rm", "Remove rings and ring sets that no live writer holds");
    c->add_option("RING", o->rings, "Ring or ring set names or paths")->required();
    return {c, [o] { return run_rm(*o); }};
}

}  // namespace evring::cli
