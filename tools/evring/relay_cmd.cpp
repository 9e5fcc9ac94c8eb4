// evring relay: options, then the library's relay (evring/nats/nats_relay.hpp),
// which runs the follow loop into a JetStream stream publisher.
#include <fmt/format.h>

#include "commands.hpp"
#include "output/escape.hpp"
#include "output/event_format.hpp"
#include "evring/nats/nats_relay.hpp"
#include "evring/nats/nats_source.hpp"
#include "evring/schema/schema_resolve.hpp"
#include "nats_cmd.hpp"
#include "open.hpp"
#include "ops/stop.hpp"
#include "output/values.hpp"

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

void add_nats_commands(CLI::App& app, NatsCommands& c) {
    RelayCommandOptions& r = c.relay_options;
    c.relay = app.add_subcommand("relay", "Publish a ring's events to a NATS JetStream stream");
    c.relay->add_option("RING", r.ring, "Ring name or path (or a snapshot or recording)")->required();
    c.relay->add_option("--to", r.to,
                        "The server, or servers of one cluster: nats://[USER:PASSWORD@]HOST[:PORT][,HOST[:PORT]]..."
                        "[/STREAM]")
        ->required();
    c.relay->add_option("--stream", r.stream, "JetStream stream (created when missing)");
    c.relay->add_option("--subject", r.subject, "Subject prefix (default evring.STREAM)")->type_name("PREFIX");
    c.relay->add_option("--from", r.from,
                        "oldest (default), latest or SEQNO, when the stream does not yet hold this ring "
                        "(otherwise the relay resumes where the stream ends)");
    c.relay->add_option("--type", r.types, "Relay only this event type (repeatable)")->allow_extra_args(false);
    c.relay->add_option("--flow", r.flows, "Relay only events with content_ext[INDEX] == VALUE (repeatable)")
        ->type_name("INDEX=VALUE")
        ->allow_extra_args(false);
    c.relay->add_option("--flow-subject", r.flow_subject, "Subjects also carry content_ext[INDEX]")
        ->type_name("INDEX");
    c.relay->add_option("--batch", r.batch,
                        "Events per message (default 64; 1: one message per event, filterable by subject)")
        ->type_name("N");
    c.relay->add_option("--replicas", r.replicas,
                        "Replicas of the stream when the relay creates it (default 1; 3 on a three-node cluster)")
        ->type_name("N");
    c.relay->add_flag("--allow-other-ring", r.allow_other_ring, "Relay into a stream holding another ring's events");
    c.relay->add_flag("--no-register", r.no_register, "Do not announce this reader in the ring's reader registry");
    c.relay->add_flag("--wait", r.wait, "Wait for the ring to be created when it does not exist yet");
    c.relay->add_option("--where", r.where, "Relay only events this expression keeps (docs/cli.md)")
        ->type_name("EXPR");
    c.relay->add_option("--schema", r.schema_file, "Schema file for --where when the ring has none")
        ->type_name("FILE");

    MirrorOptions& m = c.mirror_options;
    c.mirror = app.add_subcommand("mirror", "Write a relayed JetStream stream (or any source) into a local ring");
    c.mirror->add_option("SOURCE", m.stream,
                         "nats://HOST[:PORT]/STREAM, or a ring name or path, a snapshot or a recording")
        ->required();
    c.mirror->add_option("--to", m.to, "Ring to create: NAME or PATH, optionally NAME:DESC_SHIFT:PAYLOAD_SHIFT")
        ->required();
    c.mirror->add_option("--from", m.from, "oldest (default), latest, SEQNO, -N or a time");
    c.mirror->add_option("--count", m.count, "Stop after N events")->type_name("N");
    c.mirror->add_option("--seqno-tag", m.seqno_tag, "Store the source seqno in content_ext[INDEX]")
        ->type_name("INDEX");
    c.mirror->add_flag("--keep", m.keep, "Leave the ring file when the mirror exits");
    c.mirror->add_flag("--no-register", m.no_register,
                       "Do not announce this reader in the source ring's reader registry");
    c.mirror->add_option("--where", m.where, "Mirror only events this expression keeps (docs/cli.md)")
        ->type_name("EXPR");
    c.mirror->add_option("--schema", m.schema_file, "Schema file for --where when the source has none")
        ->type_name("FILE");
}

int run_relay_command(const RelayCommandOptions& options) {
    auto plan = plan_relay(options);
    if (!plan) return usage_error(plan.error());
    install_stop_handlers();
    if (options.wait) {  // the wait of watch and record (follow.hpp)
        FollowOptions follow;
        follow.stop_flag = &stop_flag();
        if (!wait_for_name(options.ring, follow, report_error)) return kExitOk;  // interrupted
    }
    // --where: compiled against the ring's schema (its span labels looked up
    // in it) before the relay opens it for itself.
    std::unique_ptr<EventPredicate> where;
    if (options.where) {
        auto source = open_for_command(options.ring, {});
        if (!source) return runtime_error(source.error());
        auto found = resolve_schema(**source, {.schema_file = options.schema_file});
        if (!found) return runtime_error(found.error());
        if (!found->warning.empty()) report_error(found->warning);
        FollowOptions follow;
        if (auto s = compile_where_option(follow, options.where, found->schema ? &*found->schema : nullptr, where,
                                          source->get());
            !s)
            return usage_error(s.error());
        plan->where = where.get();
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

}  // namespace evring::cli
