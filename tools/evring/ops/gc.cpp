// evring gc, and the debris part of `evring ls --all`: what killed writers
// and readers left in a ring directory and its ring sets
// (lib/files/ring_debris.hpp, lib/set/ring_set_debris.hpp).
#include "ops/gc.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "output/escape.hpp"
#include "files/ring_debris.hpp"
#include "set/ring_set_debris.hpp"
#include "evring/ring/ring_directory.hpp"
#include "output/json.hpp"

namespace evring::cli {
namespace {

// `path` as the listing of `directory` shows it: relative to it (a ring
// set's files as SET/FILE).
std::string name_in(const std::string& directory, const std::string& path) {
    std::string prefix = directory;
    while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
    prefix += '/';
    return path.compare(0, prefix.size(), prefix) == 0 ? path.substr(prefix.size()) : path;
}

std::string debris_json(const DebrisEntry& d, const char* action) {
    JsonObject o;
    o.string("path", d.path).string("debris", to_string(d.kind)).number("size", d.size);
    o.number("allocated", d.allocated).number("pid", static_cast<std::uint64_t>(d.pid)).string("why", d.why);
    if (action != nullptr) o.string("action", action);
    return o.text();
}

std::string files_text(std::size_t n) { return fmt::format("{} file{}", n, n == 1 ? "" : "s"); }

std::uint64_t total_allocated(const std::vector<DebrisEntry>& found) {
    std::uint64_t total = 0;
    for (const DebrisEntry& d : found) total += d.allocated;
    return total;
}

}  // namespace

Result<std::string> ring_directory_or(const std::string& directory) {
    if (!directory.empty()) return directory;
    auto found = default_ring_directory();
    if (!found) return std::move(found).error().context("finding the ring directory");
    return found->path;
}

Status print_debris(OutputBuffer& out, const std::string& directory, bool json) {
    auto found = list_directory_debris(directory);
    if (!found) return std::move(found).error();
    if (json) {
        for (const DebrisEntry& d : *found) {
            out.put(debris_json(d, nullptr));
            out.put('\n');
        }
        return {};
    }
    if (found->empty()) {
        out.put("# no debris (temporary files of dead processes, orphan reader registries, rings and sets of "
                "killed writers)\n");
        return {};
    }
    out.put(fmt::format("# debris: {} holding {} (`evring gc --delete` removes them)\n", files_text(found->size()),
                        human_bytes(total_allocated(*found))));
    out.put(fmt::format("{:<24} {:<16} {:>10} {:>10}  {}\n", "NAME", "DEBRIS", "SIZE", "ALLOCATED", "WHY"));
    for (const DebrisEntry& d : *found)
        out.put(fmt::format("{:<24} {:<16} {:>10} {:>10}  {}\n", printable(name_in(directory, d.path)), to_string(d.kind),
                            human_bytes(d.size), human_bytes(d.allocated), printable(d.why)));
    return {};
}

void print_debris_hint(OutputBuffer& out, const std::string& directory) {
    auto found = list_directory_debris(directory);
    if (!found || found->empty()) return;
    out.put(fmt::format("# and debris: {} holding {} (`evring ls --all` shows them, `evring gc --delete` "
                        "removes them)\n", files_text(found->size()), human_bytes(total_allocated(*found))));
}

int run_gc(const GcOptions& options) {
    auto directory = ring_directory_or(options.directory);
    if (!directory) return runtime_error(directory.error());
    auto found = list_directory_debris(*directory);
    if (!found) return runtime_error(found.error());
    OutputBuffer out(1);
    int code = kExitOk;
    std::size_t removed = 0;
    std::uint64_t freed = 0;
    for (const DebrisEntry& d : *found) {
        const char* action = "would-remove";
        if (options.remove) {
            auto done = remove_directory_debris(d);
            if (!done) {
                report_error(done.error().message());
                code = kExitRuntime;
                continue;
            }
            action = *done ? "removed" : "left";  // left: it came back to life, or went, meanwhile
            if (*done) {
                ++removed;
                freed += d.allocated;
            }
        }
        if (options.json) {
            out.put(debris_json(d, action));
            out.put('\n');
        } else {
            out.put(fmt::format("{} {} ({}, {}): {}\n", action, printable(d.path), to_string(d.kind),
                                human_bytes(d.allocated), printable(d.why)));
        }
    }
    if (!options.json) {
        if (!options.remove)
            out.put(fmt::format("{} of debris holding {} in {}; nothing removed (--delete removes them)\n", files_text(found->size()),
                                human_bytes(total_allocated(*found)), printable(*directory)));
        else
            out.put(fmt::format("removed {}, freed {} in {}\n", files_text(removed), human_bytes(freed),
                                printable(*directory)));
    }
    out.flush();
    return out.failed() ? kExitRuntime : code;
}

Command add_gc(CLI::App& app) {
    auto o = std::make_shared<GcOptions>();
    auto* c = app.add_subcommand("gc", "List (or, with --delete, remove) debris in the ring directory");
    c->add_option("--dir", o->directory, "Clean this directory instead");
    c->add_flag("--delete", o->remove, "Remove the debris (without it: a dry run)");
    c->add_flag("--json", o->json, "One JSON object per file");
    return {c, [o] { return run_gc(*o); }};
}

}  // namespace evring::cli
