// evring snapshot: a consistent zstd-compressed copy of a ring (or of a
// snapshot), or of a ring set in one file (ring_set_snapshot.hpp), written under a temporary name and renamed into place, or
// straight into a device or FIFO (output_file.hpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "output/escape.hpp"
#include "evring/ring/ring.hpp"
#include "set/ring_set_snapshot.hpp"
#include "source/ring_set_source.hpp"
#include "ring/snapshot.hpp"
#include "open.hpp"
#include "output/output.hpp"
#include "output/output_file.hpp"
#include "ops/stop.hpp"
#include "output/values.hpp"

namespace evring::cli {
namespace {

SnapshotWriteOptions write_options_at(int level) {
    SnapshotWriteOptions options;
    options.compression_level = level;
    options.stop = &stop_flag();  // a signal ends the copy
    return options;
}

// What a snapshot writer returned, finished: an interrupted copy says that
// nothing was written, a complete one is moved into place (out.commit). On
// any failure nothing is left at the output's name.
template <class Stats>
Result<Stats> committed(Result<Stats> stats, OutputFile& out) {
    if (!stats) {
        if (stats.error().errno_value() == ECANCELED)
            return Error(ECANCELED, fmt::format("interrupted: '{}' was not written", printable(out.path())));
        return std::move(stats).error();
    }
    if (auto s = out.commit(); !s) return std::move(s).error();
    return stats;
}

Result<SnapshotStats> write_output(const MappedRing& ring, OutputFile& out, int level) {
    return committed(write_snapshot(ring, out.fd(), out.path(), write_options_at(level)), out);
}

// A ring set (or a set snapshot): one file holding every member read
// (ring_set_snapshot.hpp).
Result<SetSnapshotStats> write_set_output(const RingSetSource& set, OutputFile& out, int level) {
    std::vector<SetSnapshotMember> members;
    for (std::uint32_t index : set.members()) members.push_back({index, set.member_ring(index)});
    return committed(write_set_snapshot(set.manifest_bytes(), members, out.fd(), out.path(), write_options_at(level)),
                     out);
}

void print_set_stats(const std::string& from, const std::string& output, const SetSnapshotStats& s) {
    std::uint64_t events = 0;
    std::uint64_t dropped = 0;
    std::uint64_t expired = 0;
    std::uint64_t ring_bytes = 0;
    for (const auto& [index, m] : s.members) {
        fmt::print(stderr, "evring: member {}: {} events (seqno {}..{}), {} descriptors dropped, {} payloads expired\n",
                   index, m.kept_events, m.oldest_seqno, m.newest_seqno, m.dropped_descriptors, m.expired_payloads);
        events += m.kept_events;
        dropped += m.dropped_descriptors;
        expired += m.expired_payloads;
        ring_bytes += m.ring_bytes;
    }
    fmt::print(stderr,
               "evring: snapshot of ring set {} written to {}: {} members, {} events, {} descriptors dropped "
               "(uncommitted, torn or overwritten while copying), {} payloads already expired; {} -> {} bytes\n",
               printable(from), printable(output), s.members.size(), events, dropped, expired, human_bytes(ring_bytes),
               s.compressed_bytes);
}

void print_stats(const std::string& from, const std::string& output, const SnapshotStats& s) {
    fmt::print(stderr,
               "evring: snapshot of {} written to {}: {} events (seqno {}..{}), {} descriptors dropped (uncommitted, "
               "torn or overwritten while copying), {} payloads already expired; {} -> {} bytes\n",
               printable(from), printable(output), s.kept_events, s.oldest_seqno, s.newest_seqno,
               s.dropped_descriptors, s.expired_payloads, human_bytes(s.ring_bytes), s.compressed_bytes);
}

}  // namespace

int run_snapshot(const SnapshotOptions& options) {
    int level = 3;
    if (options.level) {
        auto parsed = parse_int_in("--level", *options.level, 1, 19);
        if (!parsed) return usage_error(parsed.error());
        level = *parsed;
    }
    auto source = open_for_command(options.ring, {});
    if (!source) return runtime_error(source.error());
    const SourceIdentity& id = (*source)->identity();
    const MappedRing* ring = (*source)->ring();
    const auto* set = dynamic_cast<const RingSetSource*>(source->get());
    if (ring == nullptr && set == nullptr)
        return runtime_error(Error(EINVAL, fmt::format("'{}' is a {}; snapshot copies a ring or a snapshot",
                                                       options.ring, describe(id.kind))));
    // The output is checked before anything is copied: never the source, an
    // existing file only with --force, a device or FIFO written into.
    OutputFileOptions rules;
    rules.what = "the snapshot";
    rules.replace = options.force;
    rules.keep.push_back({id.path, fmt::format("the {} it copies", describe(id.kind))});
    auto out = OutputFile::open(options.output, rules);
    if (!out) return runtime_error(out.error());
    install_stop_handlers();  // a signal now ends the copy, and the temporary file goes
    if (set != nullptr) {
        auto stats = write_set_output(*set, *out, level);
        if (!stats) return runtime_error(stats.error());
        print_set_stats(id.path, options.output, *stats);
        return kExitOk;
    }
    auto stats = write_output(*ring, *out, level);
    if (!stats) return runtime_error(stats.error());
    print_stats(id.path, options.output, *stats);
    return kExitOk;
}

Command add_snapshot(CLI::App& app) {
    auto o = std::make_shared<SnapshotOptions>();
    auto* c = app.add_subcommand("snapshot", "Write a zstd-compressed copy of a ring or ring set");
    c->add_option("RING", o->ring, "Ring or ring set name or path (or a snapshot of either)")->required();
    c->add_option("-o,--output", o->output, "Snapshot file to write")->required();
    c->add_option("--level", o->level, "zstd level, 1 to 19 (default 3)")->type_name("LEVEL");
    c->add_flag("--force", o->force, "Replace an existing file (never the ring being copied)");
    return {c, [o] { return run_snapshot(*o); }};
}

}  // namespace evring::cli
