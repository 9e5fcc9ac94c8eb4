// evring info SET: a ring set's manifest and each member's counts
// (docs/ring-sets.md).
#include <fmt/format.h>

#include <optional>

#include "commands.hpp"
#include "output/escape.hpp"
#include "evring/ring/ring.hpp"
#include "registry/reader_listing.hpp"
#include "evring/ring/ring_reader.hpp"
#include "set/ring_set_manifest.hpp"
#include "ops/info.hpp"
#include "ops/ops_cmd.hpp"
#include "output/output.hpp"

namespace evring::cli {

namespace {

struct MemberLine {
    std::uint32_t index = 0;
    std::string path;
    std::uint32_t pid = 0;
    std::uint64_t last_seqno = 0;
    bool alive = false;
    std::optional<ReaderListing> readers;  // the member's registry, listed without reclaiming
    std::string error;
};

// A live set: every member the manifest lists now, each opened afresh. A set
// snapshot: the members it holds.
std::vector<MemberLine> member_lines(const RingSetSource& source, const RingSetManifest& manifest) {
    std::vector<MemberLine> members;
    if (source.frozen()) {
        for (std::uint32_t index : source.members()) {
            MemberLine line;
            line.index = index;
            const MappedRing* ring = source.member_ring(index);
            line.path = ring != nullptr ? ring->path() : std::string();
            for (const auto& m : manifest.members)
                if (m.index == index) line.pid = m.pid;
            if (ring != nullptr) line.last_seqno = ring->header().control.last_seqno;
            members.push_back(std::move(line));
        }
        return members;
    }
    for (const auto& m : manifest.members) {
        MemberLine line;
        line.index = m.index;
        line.path = m.path;
        line.pid = m.pid;
        if (auto reader = RingReader::open(m.path); reader) {
            line.last_seqno = reader->ring().header().control.last_seqno;
            line.alive = reader->writer_alive();
            // info only looks: dead readers are shown, their slots left for `evring readers`.
            ListingOptions look;
            look.reclaim_dead = false;
            if (auto listing = list_readers(*reader, look)) line.readers = std::move(*listing);
        } else {
            line.error = reader.error().message();
        }
        members.push_back(std::move(line));
    }
    return members;
}

}  // namespace

int describe_ring_set(RingSetSource& source, bool json, const ResolvedSchema& schema) {
    RingSetManifest fresh;
    const RingSetManifest* manifest = &source.manifest();
    if (!source.frozen()) {
        auto read = read_set_manifest(source.identity().path);
        if (!read) return runtime_error(read.error());
        fresh = std::move(read).value();
        manifest = &fresh;
    }
    const std::vector<MemberLine> members = member_lines(source, *manifest);
    if (json) {
        // A token (to_string(SourceKind)), with one more for a set frozen in a file.
        const char* kind = source.frozen() ? "ring-set-snapshot" : to_string(SourceKind::RingSet);
        JsonObject o;
        o.string("path", manifest->directory)
            .string("kind", kind)
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
            e.number("member", m.index).string("path", m.path).number("pid", m.pid);
            if (m.error.empty()) e.number("last_seqno", m.last_seqno).boolean("writer_alive", m.alive);
            else e.string("error", m.error);
            if (m.readers) e.string("readers", readers_summary(*m.readers));
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
    lines.add(source.frozen() ? "ring set snapshot" : "ring set", manifest->directory);
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
        const std::string label = fmt::format("  member {}", m.index);
        const char* writer = source.frozen() ? "none (a snapshot)" : m.alive ? "alive" : "gone";
        lines.add(label.c_str(), m.error.empty() ? fmt::format("{}: newest seqno {}, writer {}", m.path,
                                                               m.last_seqno, writer)
                                                 : fmt::format("{}: {}", m.path, m.error));
        if (m.readers) lines.add(fmt::format("  member {} readers", m.index).c_str(), readers_summary(*m.readers));
    }
    fmt::print("{}", lines.text);
    for (const auto& w : manifest->warnings) report_error(w);
    return kExitOk;
}

}  // namespace evring::cli
