// evring ls: the rings in the default ring directory.
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "event_format.hpp"
#include "evring/ring_directory.hpp"
#include "evring/ring_list.hpp"
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
        char line[256];
        std::snprintf(line, sizeof line, "%-24s %-12s %11s %10s %12s %-12s %s\n", "NAME", "CONTENT",
                      "DESCRIPTORS", "PAYLOAD", "NEWEST", "WRITERS", "ALIVE");
        out.put("# ");
        out.put(directory);
        out.put('\n');
        out.put(line);
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
        char line[512];
        if (!ring.header) {
            std::snprintf(line, sizeof line, "%-24s not a ring: %s\n", name_of(ring.path).c_str(),
                          ring.error.c_str());
        } else {
            const RingHeader& h = *ring.header;
            const std::string_view name = content_type_name(h.content_type);
            const std::string content = std::to_string(h.content_type) +
                                        (name == "application-defined" ? "" : " " + std::string(name));
            std::snprintf(line, sizeof line, "%-24s %-12s %11llu %10s %12llu %-12s %s\n",
                          name_of(ring.path).c_str(), content.c_str(),
                          static_cast<unsigned long long>(h.size.descriptor_capacity),
                          human_bytes(h.size.payload_buf_size).c_str(),
                          static_cast<unsigned long long>(h.control.last_seqno),
                          pids_text(ring.writer_pids).c_str(), ring.writer_alive ? "yes" : "no");
        }
        out.put(line);
    }
    out.flush();
    return out.failed() ? kExitRuntime : kExitOk;
}

void report_error(const std::string& message) { std::fprintf(stderr, "evring: %s\n", message.c_str()); }

}  // namespace evring::cli
