// evring ls: the rings in the default ring directory.
#include <string>

#include <fmt/format.h>

#include "commands.hpp"
#include "escape.hpp"
#include "event_format.hpp"
#include "evring/ring_directory.hpp"
#include "evring/ring_list.hpp"
#include "gc.hpp"
#include "json.hpp"
#include "output.hpp"

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

std::string name_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

int run_ls(const LsOptions& options) {
    std::string directory = options.directory;
    if (directory.empty()) {
        auto found = default_ring_directory();
        if (!found) {
            report_error(std::move(found).error().context("finding the ring directory").message());
            return kExitRuntime;
        }
        directory = found->path;
    }
    auto rings = list_rings(directory);
    if (!rings) {
        report_error(rings.error().message());
        return kExitRuntime;
    }
    OutputBuffer out(1);
    if (!options.json) {
        out.put("# ");
        out.put(printable(directory));
        out.put('\n');
        out.put(fmt::format("{:<24} {:<12} {:>11} {:>10} {:>12} {:<12} {}\n", "NAME", "CONTENT",
                            "DESCRIPTORS", "PAYLOAD", "NEWEST", "WRITERS", "ALIVE"));
    }
    for (const RingFileInfo& ring : *rings) {
        if (options.json) {
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
            continue;
        }
        if (!ring.header) {
            out.put(fmt::format("{:<24} not a ring: {}\n", printable(name_of(ring.path)), printable(ring.error)));
            continue;
        }
        const RingHeader& h = *ring.header;
        const std::string_view name = content_type_name(h.content_type);
        const std::string content =
            std::to_string(h.content_type) + (name == "application-defined" ? "" : " " + std::string(name));
        out.put(fmt::format("{:<24} {:<12} {:>11} {:>10} {:>12} {:<12} {}\n", printable(name_of(ring.path)), content,
                            h.size.descriptor_capacity, human_bytes(h.size.payload_buf_size),
                            h.control.last_seqno, pids_text(ring.writer_pids),
                            ring.writer_alive ? "yes" : "no"));
    }
    // --all: what killed processes left, after the rings (gc.hpp); without
    // it, one line when there is any.
    if (options.all) {
        if (auto s = print_debris(out, directory, options.json); !s) {
            out.flush();
            report_error(s.error().message());
            return kExitRuntime;
        }
    } else if (!options.json) {
        print_debris_hint(out, directory);
    }
    out.flush();
    return out.failed() ? kExitRuntime : kExitOk;
}

}  // namespace evring::cli
