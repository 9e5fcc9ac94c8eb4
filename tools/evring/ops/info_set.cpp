// evring info SET: a ring set's manifest and each member's counts
// (docs/ring-sets.md).
#include <fmt/format.h>

#include "commands.hpp"
#include "output/escape.hpp"
#include "evring/ring/ring.hpp"
#include "evring/ring/ring_reader.hpp"
#include "evring/set/ring_set_manifest.hpp"
#include "ops/info.hpp"
#include "output/output.hpp"

namespace evring::cli {

int describe_ring_set(RingSetSource& source, bool json, const ResolvedSchema& schema) {
    auto manifest = read_set_manifest(source.identity().path);
    if (!manifest) return runtime_error(manifest.error());
    struct MemberLine {
        const RingSetMemberInfo* info = nullptr;
        std::uint64_t last_seqno = 0;
        bool alive = false;
        std::string error;
    };
    std::vector<MemberLine> members;
    for (const auto& m : manifest->members) {
        MemberLine line;
        line.info = &m;
        if (auto reader = RingReader::open(m.path); reader) {
            line.last_seqno = reader->ring().header().control.last_seqno;
            line.alive = reader->writer_alive();
        } else {
            line.error = reader.error().message();
        }
        members.push_back(std::move(line));
    }
    if (json) {
        JsonObject o;
        o.string("path", manifest->directory)
            .string("kind", "ring set")
            .number("set_id", manifest->set_id)
            .number("created_nanos", manifest->created_nanos)
            .number("content_type", manifest->content_type)
            .string("schema_hash", hex_string(manifest->schema_hash))
            .number("max_members", manifest->max_members)
            .number("member_descriptor_capacity", std::uint64_t{1} << manifest->member_descriptor_shift)
            .number("member_payload_buf_size", std::uint64_t{1} << manifest->member_payload_buf_shift)
            .number("generation", manifest->generation);
        add_schema(o, schema);
        std::string list;
        for (const auto& m : members) {
            JsonObject e;
            e.number("member", m.info->index).string("path", m.info->path).number("pid", m.info->pid);
            if (m.error.empty()) e.number("last_seqno", m.last_seqno).boolean("writer_alive", m.alive);
            else e.string("error", m.error);
            list += (list.empty() ? "" : ",") + e.text();
        }
        std::string text = o.text();
        text.pop_back();
        text += ",\"members\":[" + list + "]}";
        fmt::print("{}\n", text);
        for (const auto& w : manifest->warnings) report_error(w);
        return kExitOk;
    }
    Lines lines;
    lines.add("ring set", manifest->directory);
    lines.add("set id", fmt::format("{:016x}", manifest->set_id));
    lines.add("content type", std::to_string(manifest->content_type));
    lines.add("schema hash", hex_string(manifest->schema_hash));
    add_schema(lines, schema);
    lines.add("members", fmt::format("{} of at most {} (generation {})", members.size(), manifest->max_members,
                                     manifest->generation));
    lines.add("member size", fmt::format("{} descriptors, {} payload bytes",
                                         std::uint64_t{1} << manifest->member_descriptor_shift,
                                         std::uint64_t{1} << manifest->member_payload_buf_shift));
    for (const auto& m : members) {
        const std::string label = fmt::format("  member {}", m.info->index);
        lines.add(label.c_str(), m.error.empty() ? fmt::format("{}: newest seqno {}, writer {}", m.info->path,
                                                               m.last_seqno, m.alive ? "alive" : "gone")
                                                 : fmt::format("{}: {}", m.info->path, m.error));
    }
    fmt::print("{}", lines.text);
    for (const auto& w : manifest->warnings) report_error(w);
    return kExitOk;
}

}  // namespace evring::cli
