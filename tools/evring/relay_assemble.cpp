// evring relay SRC --assemble SPAN [--stage S]: the options, the source's
// schema (the read pipeline, read/reading.hpp), then the library's relay of
// assembled instances
// (lib/nats/assembled_relay.hpp).
#include <fmt/format.h>

#include "commands.hpp"
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
    auto url = nats::parse_url(options.to);
    if (!url) return Error(EINVAL, fmt::format("bad --to: {}", url.error().message()));
    relay.url = *url;
    relay.stream = options.stream.empty() ? url->stream : options.stream;
    if (relay.stream.empty())
        return Error(EINVAL, "no stream: give --stream NAME (or nats://HOST:PORT/STREAM in --to)");
    if (auto s = nats::validate_stream_name(relay.stream); !s)
        return Error(EINVAL, fmt::format("bad --stream: {}", s.error().message()));
    if (options.subject) relay.prefix = *options.subject;
    relay.span = *options.assemble;
    relay.stage = options.stage;
    relay.json.payload_hex = !options.no_payload;
    if (auto s = options.heal.apply(relay.source_options, false); !s) return std::move(s).error();
    auto start = parse_start(options.select.from, "--from");
    if (!start) return std::move(start).error();
    if (start->kind != Position::Kind::Oldest && start->kind != Position::Kind::Latest &&
        start->kind != Position::Kind::Seqno)
        return Error(EINVAL, fmt::format("bad --from '{}': the relay starts at oldest, latest or a SEQNO",
                                         printable(options.select.from)));
    relay.start = *start;
    if (options.replicas) {
        auto replicas = parse_int_in("--replicas", *options.replicas, 1, nats::kMaxReplicas);
        if (!replicas) return std::move(replicas).error();
        relay.stream_spec.replicas = *replicas;
    }
    relay.register_reader = !options.no_register;
    relay.stop_flag = &stop_flag();
    relay.log = [](std::string_view text) { fmt::print(stderr, "evring: {}\n", printable(text)); };
    return relay;
}

}  // namespace

int run_assembled_relay_command(RelayCommandOptions& options) {
    auto plan = plan_assembled(options);
    if (!plan) return usage_error(plan.error());
    install_stop_handlers();
    if (options.wait) {  // the wait of watch and record (follow.hpp)
        FollowOptions follow;
        follow.stop_flag = &stop_flag();
        if (!wait_for_name(options.ring, follow, report_error)) return kExitOk;  // interrupted
    }
    ReadRequest request;
    request.location = options.ring;
    request.source = plan->source_options;
    if (!options.schema_file.empty()) request.schema_file = options.schema_file;
    auto reading = open_reading(std::move(request), {});
    if (!reading) return runtime_error(reading.error());
    Reading& r = **reading;
    if (auto s = r.find_schema(); !s) return runtime_error(s.error());
    if (!r.schema_warning().empty()) report_error(r.schema_warning());
    if (r.schema() == nullptr)
        return usage_error(Error(EINVAL, fmt::format("--assemble needs the source's schema; '{}' has none (give "
                                                     "--schema FILE)",
                                                     options.ring)));
    // Checked before connecting: a span or stage the schema lacks is the caller's mistake.
    if (auto made = SpanAssembler::make(*r.schema(), plan->span, plan->stage); !made)
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
