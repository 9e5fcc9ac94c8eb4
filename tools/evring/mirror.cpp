// evring mirror: a relayed stream (the NATS event source) through the
// library's follow loop into a new local ring, so local programs read it
// with the ordinary reader API and CLI. The source is opened like every
// command's (open_source: a registered scheme such as nats://, or a ring,
// snapshot or recording); the mirror itself is the library's
// (lib/record/mirror_source.hpp: the ring, its sequence numbers and the
// "mirror seqno M = source seqno S" lines, registration, the follow loop).
// This file parses the options, resolves --where and the interest options
// through the read pipeline (read/reading.hpp), and prints the result.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "nats_cmd.hpp"
#include "open.hpp"
#include "ops/stop.hpp"
#include "output/escape.hpp"
#include "output/values.hpp"
#include "record/mirror_source.hpp"

namespace evring::cli {

Result<MirrorJob> plan_mirror(const MirrorOptions& options) {
    MirrorJob job;
    if (auto s = options.select.check_range(job.follow); !s) return std::move(s).error();
    if (options.seqno_tag) {
        auto index = parse_int_in("--seqno-tag", *options.seqno_tag, 0, 3);
        if (!index) return std::move(index).error();
        job.seqno_tag = *index;
    }
    auto config = parse_ring_config(options.to);
    if (!config) return Error(EINVAL, fmt::format("bad --to '{}': {}", printable(options.to), config.error().message()));
    job.ring = *config;
    job.sizes_given = options.to.find(':') != std::string::npos;
    job.keep = options.keep;
    job.register_reader = !options.no_register;
    job.follow.stop_flag = &stop_flag();
    job.report = report_error;
    return job;
}

int run_mirror(const MirrorOptions& options) {
    if (options.assemble) return run_assembled_mirror(options);
    if (!options.stage.empty() || options.no_payload)
        return usage_error(Error(EINVAL, "--stage and --no-payload go with --assemble SPAN"));
    auto job = plan_mirror(options);
    if (!job) return usage_error(job.error());
    auto request = filters_request(options.stream, options.schema_file, options.select, options.interest,
                                   options.no_register, "mirror");
    if (!request) return usage_error(request.error());
    std::unique_ptr<Reading> reading;
    if (int failed = open_selected(std::move(*request), job->follow, reading); failed != kExitOk) return failed;
    Reading& r = *reading;
    job->follow = r.follow();  // --where kept alive by the reading
    job->interest = r.interest();
    install_stop_handlers();
    auto mirrored = mirror_source(r.source(), *job);
    if (!mirrored) return runtime_error(mirrored.error());
    const std::uint64_t foreign = mirrored->follow.counters.foreign;
    fmt::print(stderr, "evring: mirrored {} events{}\n", mirrored->events,
               foreign == 0 ? std::string() : fmt::format(" ({} messages not evring's skipped)", foreign));
    return kExitOk;
}

Command add_mirror(CLI::App& app) {
    auto options = std::make_shared<MirrorOptions>();
    MirrorOptions& m = *options;
    auto* mirror = app.add_subcommand("mirror", "Write a relayed JetStream stream (or any source) into a local ring");
    mirror->add_option("SOURCE", m.stream,
                         "nats://HOST[:PORT]/STREAM, or a ring name or path, a snapshot or a recording")
        ->required();
    mirror->add_option("--to", m.to, "Ring to create: NAME or PATH, optionally NAME:DESC_SHIFT:PAYLOAD_SHIFT")
        ->required();
    m.select.add_range(*mirror, {.from = "oldest (default), latest, SEQNO, -N or a time", .until = nullptr});
    mirror->add_option("--seqno-tag", m.seqno_tag, "Store the source seqno in content_ext[INDEX]")
        ->type_name("INDEX");
    mirror->add_flag("--keep", m.keep, "Leave the ring file when the mirror exits");
    mirror->add_flag("--no-register", m.no_register,
                       "Do not announce this reader in the source ring's reader registry");
    m.select.add_filters(*mirror, {.type = nullptr, .flow = nullptr,
                                   .where = "Mirror only events this expression keeps (docs/cli.md)"});
    mirror->add_option("--schema", m.schema_file, "Schema file for --where and --keywords when the source has none")
        ->type_name("FILE");
    m.interest.add(*mirror);
    mirror->add_option("--assemble", m.assemble,
                       "Write whole span instances (block) as JSON, one ASSEMBLED_SPAN event each, instead of events")
        ->type_name("SPAN");
    mirror->add_option("--stage", m.stage, "With --assemble: write an instance once it reaches this stage (finalized)")
        ->type_name("NAME");
    mirror->add_flag("--no-payload", m.no_payload, "With --assemble: events without their payload hex");
    return {mirror, [options] { return run_mirror(*options); }};
}

}  // namespace evring::cli
