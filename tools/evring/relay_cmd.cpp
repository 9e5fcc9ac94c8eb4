// evring relay: options, then the library's relay (evring/nats_relay.hpp),
// which runs the follow loop into a JetStream stream publisher.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "escape.hpp"
#include "event_format.hpp"
#include "evring/nats_relay.hpp"
#include "evring/nats_source.hpp"
#include "nats_cmd.hpp"
#include "stop.hpp"
#include "values.hpp"

namespace evring::cli {
namespace {

Result<nats::RelayOptions> plan_relay(const RelayCommandOptions& options) {
    nats::RelayOptions relay;
    relay.source = options.ring;
    auto url = nats::parse_url(options.to);
    if (!url) return Error(EINVAL, fmt::format("bad --to: {}", url.error().message()));
    relay.url = *url;
    relay.stream = options.stream.empty() ? url->stream : options.stream;
    if (relay.stream.empty())
        return Error(EINVAL, "no stream: give --stream NAME (or nats://HOST:PORT/STREAM in --to)");
    if (auto s = nats::validate_stream_name(relay.stream); !s)
        return Error(EINVAL, fmt::format("bad --stream: {}", s.error().message()));
    if (options.subject) relay.prefix = *options.subject;
    auto start = parse_start(options.from, "--from");
    if (!start) return std::move(start).error();
    if (start->kind != Position::Kind::Oldest && start->kind != Position::Kind::Latest &&
        start->kind != Position::Kind::Seqno)
        return Error(EINVAL, fmt::format("bad --from '{}': the relay starts at oldest, latest or a SEQNO",
                                         printable(options.from)));
    relay.start = *start;
    for (const auto& flow : options.flows)
        if (auto s = add_flow(relay.filter, flow); !s) return std::move(s).error();
    for (const auto& type : options.types) {
        auto parsed = parse_event_type(0, type);
        if (!parsed)
            return Error(EINVAL, fmt::format("bad --type '{}': expected an event type number (0-65535) or "
                                             "RECORD_ERROR", printable(type)));
        relay.filter.types.add(*parsed);
    }
    if (options.flow_subject) {
        auto index = parse_int_in("--flow-subject", *options.flow_subject, 0, 3);
        if (!index) return std::move(index).error();
        relay.flow_token = *index;
    }
    if (options.batch) {
        auto batch = parse_int_in("--batch", *options.batch, 1, static_cast<int>(nats::kMaxBatchCount));
        if (!batch) return std::move(batch).error();
        relay.events_per_message = static_cast<std::uint32_t>(*batch);
    }
    if (options.replicas) {
        auto replicas = parse_int_in("--replicas", *options.replicas, 1, nats::kMaxReplicas);
        if (!replicas) return std::move(replicas).error();
        relay.stream_spec.replicas = *replicas;
    }
    relay.allow_other_ring = options.allow_other_ring;
    relay.register_reader = !options.no_register;
    relay.stop_flag = &stop_flag();
    relay.log = [](std::string_view text) { fmt::print(stderr, "evring: {}\n", printable(text)); };
    return relay;
}

}  // namespace

int run_relay_command(const RelayCommandOptions& options) {
    auto plan = plan_relay(options);
    if (!plan) return usage_error(plan.error());
    install_stop_handlers();
    if (options.wait) {  // the wait of watch and record (follow.hpp)
        FollowOptions follow;
        follow.stop_flag = &stop_flag();
        if (!wait_for_name(options.ring, follow, report_error)) return kExitOk;  // interrupted
    }
    auto result = nats::run_relay(*plan);
    if (!result) return runtime_error(result.error());
    const nats::PublisherStats& s = result->publisher;
    fmt::print(stderr,
               "evring: relayed {} events and {} gap messages ({} seqnos lost) in {} messages, {} re-published, "
               "{} outages\n",
               s.events, s.gaps, s.lost_in_gaps, s.messages_confirmed, s.republished, result->outages);
    return kExitOk;
}

Command add_relay(CLI::App& app) {
    auto options = std::make_shared<RelayCommandOptions>();
    RelayCommandOptions& r = *options;
    auto* relay = app.add_subcommand("relay", "Publish a ring's events to a NATS JetStream stream");
    relay->add_option("RING", r.ring, "Ring name or path (or a snapshot or recording)")->required();
    relay->add_option("--to", r.to,
                        "The server, or servers of one cluster: nats://[USER:PASSWORD@]HOST[:PORT][,HOST[:PORT]]..."
                        "[/STREAM]")
        ->required();
    relay->add_option("--stream", r.stream, "JetStream stream (created when missing)");
    relay->add_option("--subject", r.subject, "Subject prefix (default evring.STREAM)")->type_name("PREFIX");
    relay->add_option("--from", r.from,
                        "oldest (default), latest or SEQNO, when the stream does not yet hold this ring "
                        "(otherwise the relay resumes where the stream ends)");
    relay->add_option("--type", r.types, "Relay only this event type (repeatable)")->allow_extra_args(false);
    relay->add_option("--flow", r.flows, "Relay only events with content_ext[INDEX] == VALUE (repeatable)")
        ->type_name("INDEX=VALUE")
        ->allow_extra_args(false);
    relay->add_option("--flow-subject", r.flow_subject, "Subjects also carry content_ext[INDEX]")
        ->type_name("INDEX");
    relay->add_option("--batch", r.batch,
                        "Events per message (default 64; 1: one message per event, filterable by subject)")
        ->type_name("N");
    relay->add_option("--replicas", r.replicas,
                        "Replicas of the stream when the relay creates it (default 1; 3 on a three-node cluster)")
        ->type_name("N");
    relay->add_flag("--allow-other-ring", r.allow_other_ring, "Relay into a stream holding another ring's events");
    relay->add_flag("--no-register", r.no_register, kNoRegisterHelp);
    relay->add_flag("--wait", r.wait, kWaitHelp);
    return {relay, [options] { return run_relay_command(*options); }};
}

}  // namespace evring::cli
