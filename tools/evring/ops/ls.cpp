// evring ls: the rings in the default ring directory, then its ring sets
// with their members.
#include <dirent.h>

#include <algorithm>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "output/escape.hpp"
#include "output/event_format.hpp"
#include "evring/ring/ring_directory.hpp"
#include "files/ring_list.hpp"
#include "ops/gc.hpp"
#include "set/ring_set_manifest.hpp"
#include "output/json.hpp"
#include "output/output.hpp"

namespace evring::cli {

namespace {

std::string pids_text(const std::vector<pid_t>& pids) {
    std::string text;
    for (pid_t pid : pids) {
        if (!text.empty()) text += ',';
        text += std::to_string(pid);
    }
    return text.empty() ? "-" : text;
}

// The ring set directories in `directory`, sorted.
std::vector<std::string> ring_set_directories(const std::string& directory) {
    std::vector<std::string> sets;
    DIR* dir = ::opendir(directory.c_str());
    if (dir == nullptr) return sets;
    while (const dirent* entry = ::readdir(dir)) {
        const std::string name = entry->d_name;
        if (name == "." || name == "..") continue;
        const std::string path = directory + "/" + name;
        if (is_ring_set_directory(path)) sets.push_back(path);
    }
    ::closedir(dir);
    std::sort(sets.begin(), sets.end());
    return sets;
}

std::string name_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// One line (or JSON object) per ring; `shown` is its name in the listing.
void put_ring(OutputBuffer& out, bool json, const RingFileInfo& ring, const std::string& shown) {
    if (json) {
        JsonObject o;
        o.string("path", ring.path);
        if (ring.header) {
            const RingHeader& h = *ring.header;
            o.number("content_type", h.content_type)
                .string("content_type_name", content_type_name(h.content_type))
                .number("descriptor_capacity", h.size.descriptor_capacity)
                .number("payload_buf_size", h.size.payload_buf_size)
                .number("context_area_size", h.size.context_area_size)
                .number("last_seqno", h.control.last_seqno);
        } else {
            o.string("error", ring.error);
        }
        std::vector<std::uint64_t> pids(ring.writer_pids.begin(), ring.writer_pids.end());
        o.numbers("writer_pids", pids).boolean("writer_alive", ring.writer_alive);
        out.put(o.text());
        out.put('\n');
        return;
    }
    if (!ring.header) {
        out.put(fmt::format("{:<24} not a ring: {}\n", printable(shown), printable(ring.error)));
        return;
    }
    const RingHeader& h = *ring.header;
    const std::string_view name = content_type_name(h.content_type);
    const std::string content =
        std::to_string(h.content_type) + (name == "application-defined" ? "" : " " + std::string(name));
    out.put(fmt::format("{:<24} {:<12} {:>11} {:>10} {:>12} {:<12} {}\n", printable(shown), content,
                        h.size.descriptor_capacity, human_bytes(h.size.payload_buf_size), h.control.last_seqno,
                        pids_text(ring.writer_pids), ring.writer_alive ? "yes" : "no"));
}

// A ring set (docs/ring-sets.md): its line, then its members by name.
void put_set(OutputBuffer& out, bool json, const std::string& set) {
    auto manifest = read_set_manifest(set);
    if (json) {
        JsonObject o;
        o.string("path", set).boolean("ring_set", true);
        if (manifest) {
            std::vector<std::uint64_t> members;
            for (const auto& m : manifest->members) members.push_back(m.index);
            o.number("content_type", manifest->content_type)
                .number("max_members", manifest->max_members)
                .number("generation", manifest->generation)
                .numbers("members", members);
        } else {
            o.string("error", manifest.error().message());
        }
        out.put(o.text());
        out.put('\n');
    } else if (!manifest) {
        out.put(fmt::format("{:<24} not a ring set: {}\n", printable(name_of(set) + "/"),
                            printable(manifest.error().message())));
    } else {
        out.put(fmt::format("{:<24} ring set, {} of {} members\n", printable(name_of(set) + "/"),
                            manifest->members.size(), manifest->max_members));
    }
    if (!manifest) return;
    auto members = list_rings(set);
    if (!members) return;
    for (const RingFileInfo& ring : *members) {
        const std::string member = name_of(ring.path);
        const bool listed = std::any_of(manifest->members.begin(), manifest->members.end(),
                                        [&](const RingSetMemberInfo& m) { return m.name == member; });
        if (listed) put_ring(out, json, ring, "  " + name_of(set) + "/" + member);
    }
}

Result<std::string> directory_of(const LsOptions& options) {
    if (!options.directory.empty()) return options.directory;
    auto found = default_ring_directory();
    if (!found) return std::move(found).error().context("finding the ring directory");
    return found->path;
}

}  // namespace

int run_ls(const LsOptions& options) {
    auto directory = directory_of(options);
    if (!directory) return runtime_error(directory.error());
    auto rings = list_rings(*directory);
    if (!rings) return runtime_error(rings.error());
    OutputBuffer out(1);
    if (!options.json) {
        out.put("# " + printable(*directory) + "\n");
        out.put(fmt::format("{:<24} {:<12} {:>11} {:>10} {:>12} {:<12} {}\n", "NAME", "CONTENT", "DESCRIPTORS",
                            "PAYLOAD", "NEWEST", "WRITERS", "ALIVE"));
    }
    for (const RingFileInfo& ring : *rings) put_ring(out, options.json, ring, name_of(ring.path));
    for (const std::string& set : ring_set_directories(*directory)) put_set(out, options.json, set);
    // --all: what killed processes left, after the rings (gc.hpp); without
    // it, one line when there is any.
    if (options.all) {
        if (auto s = print_debris(out, *directory, options.json); !s) {
            out.flush();
            return runtime_error(s.error());
        }
    } else if (!options.json) {
        print_debris_hint(out, *directory);
    }
    out.flush();
    return out.failed() ? kExitRuntime : kExitOk;
}

Command add_ls(CLI::App& app) {
    auto o = std::make_shared<LsOptions>();
    auto* c = app.add_subcommand("ls", "List the rings in the default ring directory");
    c->add_option("--dir", o->directory, "List this directory instead");
    c->add_flag("--json", o->json, "One JSON object per ring");
    c->add_flag("--all", o->all, "Also list debris: temporary files of dead processes, orphan reader registries");
    return {c, [o] { return run_ls(*o); }};
}

}  // namespace evring::cli
