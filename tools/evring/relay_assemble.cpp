// evring relay SRC --assemble SPAN [--stage S]: the options, the source's
// schema (the read pipeline, read/reading.hpp), then the library's relay of
// assembled instances
// (lib/nats/assembled_relay.hpp).
#include <fmt/format.h>

#include "commands.hpp"
#include "evring/query/span_reader.hpp"
#include "nats/assembled_relay.hpp"
#include "nats/nats_relay.hpp"
#include "nats_cmd.hpp"
#include "open.hpp"
#include "ops/stop.hpp"
#include "output/escape.hpp"
#include "output/values.hpp"

namespace evring::cli {
namespace {

// What a relay of events takes and a relay of instances cannot: whole
// instances leave nothing out, and their messages are not batches.
Status check_assemble_options(const RelayCommandOptions& o) {
    const char* clash = o.batch                    ? "--batch"
                        : o.flow_subject           ? "--flow-subject"
                        : !o.select.types.empty()  ? "--type"
                        : !o.select.flows.empty()  ? "--flow"
                        : o.select.where           ? "--where"
                        : o.interest.given()       ? "--keywords or --level"
                        : o.allow_other_ring       ? "--allow-other-ring"
                                                   : nullptr;
    if (clash == nullptr) return {};
    return Error(EINVAL, fmt::format("--assemble publishes whole instances; it does not go with {}", clash));
}

Result<nats::AssembledRelayOptions> plan_assembled(const RelayCommandOptions& options) {
    if (auto s = check_assemble_options(options); !s) return std::move(s).error();
    nats::AssembledRelayOptions relay;
    if (auto s = plan_relay_target(options, relay); !s) return std::move(s).error();
    relay.span = *options.assemble;
    relay.stage = options.stage;
    relay.json.payload_hex = !options.no_payload;
    return relay;
}

}  // namespace

int run_assembled_relay_command(RelayCommandOptions& options) {
    auto plan = plan_assembled(options);
    if (!plan) return usage_error(plan.error());
    if (!wait_to_relay(options)) return kExitOk;  // interrupted
    ReadRequest request;
    request.location = options.ring;
    request.source = plan->source_options;
    if (!options.schema_file.empty()) request.schema_file = options.schema_file;
    std::unique_ptr<Reading> reading;
    if (int failed = open_selected(std::move(request), {}, reading); failed != kExitOk) return failed;
    Reading& r = *reading;
    if (r.schema() == nullptr)
        return usage_error(Error(EINVAL, fmt::format("--assemble needs the source's schema; '{}' has none (give "
                                                     "--schema FILE)",
                                                     options.ring)));
    // Checked before connecting: a span or stage the schema lacks is the caller's mistake.
    if (auto made = SpanReader::make(*r.schema(), plan->span, plan->stage); !made)
        return usage_error(Error(EINVAL, fmt::format("bad --assemble: {}", made.error().message())));
    auto result = nats::run_assembled_relay(*plan, std::move(r.source()), *r.schema());
    if (!result) return runtime_error(result.error());
    const AssemblerCounts& c = result->counts;
    fmt::print(stderr,
               "evring: published {} {} instances ({} already in the stream skipped, {} dropped as duplicates; "
               "{} abandoned, {} broken by a gap); {} left unfinished\n",
               result->published, plan->span, result->skipped, result->duplicates, c.abandoned, c.broken,
               c.unfinished);
    return kExitOk;
}

}  // namespace evring::cli
