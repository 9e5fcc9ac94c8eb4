// evring mirror SOURCE --to RING --assemble SPAN [--stage S]: the options,
// the source's schema (the read pipeline, read/reading.hpp), then the
// library's mirror of assembled instances
// (lib/record/assembled_mirror.hpp).
#include <fmt/format.h>

#include "commands.hpp"
#include "evring/query/span_reader.hpp"
#include "nats_cmd.hpp"
#include "open.hpp"
#include "ops/stop.hpp"
#include "record/assembled_mirror.hpp"

namespace evring::cli {
namespace {

// Whole instances leave nothing out and do not stop inside one.
Status check_assemble_options(const MirrorOptions& o) {
    const char* clash = o.select.count       ? "--count"
                        : o.select.where     ? "--where"
                        : o.seqno_tag        ? "--seqno-tag (an event is an instance, not a source event)"
                        : o.interest.given() ? "--keywords or --interest-level"
                                             : nullptr;
    if (clash == nullptr) return {};
    return Error(EINVAL, fmt::format("--assemble writes whole instances; it does not go with {}", clash));
}

}  // namespace

int run_assembled_mirror(const MirrorOptions& options) {
    if (auto s = check_assemble_options(options); !s) return usage_error(s.error());
    auto job = plan_mirror(options);
    if (!job) return usage_error(job.error());
    ReadRequest request;
    request.location = options.stream;
    if (!options.schema_file.empty()) request.schema_file = options.schema_file;
    std::unique_ptr<Reading> reading;
    if (int failed = open_selected(std::move(request), {}, reading); failed != kExitOk) return failed;
    Reading& r = *reading;
    const Schema* schema = r.schema();
    if (schema == nullptr)
        return usage_error(Error(EINVAL, fmt::format("--assemble needs the source's schema; '{}' has none (give "
                                                     "--schema FILE)",
                                                     options.stream)));
    const AssembledMirror assemble{*options.assemble, options.stage, {.payload_hex = !options.no_payload}};
    if (auto made = SpanReader::make(*schema, assemble.span, assemble.stage); !made)
        return usage_error(Error(EINVAL, fmt::format("bad --assemble: {}", made.error().message())));
    install_stop_handlers();
    auto mirrored = mirror_assembled(r.source(), *job, *schema, assemble);
    if (!mirrored) return runtime_error(mirrored.error());
    const AssemblerCounts& c = mirrored->counts;
    fmt::print(stderr,
               "evring: mirrored {} {} instances ({} abandoned, {} broken by a gap); {} left unfinished\n",
               mirrored->mirrored.events, assemble.span, c.abandoned, c.broken, c.unfinished);
    return kExitOk;
}

}  // namespace evring::cli
