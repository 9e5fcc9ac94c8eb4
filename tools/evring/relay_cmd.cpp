// evring relay: options, then the library's relay (lib/nats/nats_relay.hpp),
// which runs the follow loop into a JetStream stream publisher.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "heal_option.hpp"
#include "output/escape.hpp"
#include "output/event_format.hpp"
#include "nats/assembled_relay.hpp"
#include "nats/nats_relay.hpp"
#include "evring/nats/nats_source.hpp"
#include "nats_cmd.hpp"
#include "open.hpp"
#include "ops/stop.hpp"
#include "output/values.hpp"

namespace evring::cli {

template <class Relay>
Status plan_relay_target(const RelayCommandOptions& options, Relay& relay) {
    auto url = nats::parse_url(options.to);
    if (!url) return Error(EINVAL, fmt::format("bad --to: {}", url.error().message()));
    relay.url = *url;
    relay.stream = options.stream.empty() ? url->stream : options.stream;
    if (relay.stream.empty())
        return Error(EINVAL, "no stream: give --stream NAME (or nats://HOST:PORT/STREAM in --to)");
    if (auto s = nats::validate_stream_name(relay.stream); !s)
        return Error(EINVAL, fmt::format("bad --stream: {}", s.error().message()));
    if (options.subject) relay.prefix = *options.subject;
    if (auto s = options.heal.apply(relay.source_options, false); !s) return s;
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
    return {};
}

template Status plan_relay_target(const RelayCommandOptions&, nats::RelayOptions&);
template Status plan_relay_target(const RelayCommandOptions&, nats::AssembledRelayOptions&);

namespace {

Result<nats::RelayOptions> plan_relay(const RelayCommandOptions& options) {
    nats::RelayOptions relay;
    relay.source = options.ring;
    if (auto s = plan_relay_target(options, relay); !s) return std::move(s).error();
    if (auto s = options.select.check_filters(relay.filter); !s) return std::move(s).error();
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
    relay.allow_other_ring = options.allow_other_ring;
    relay.server_syncs_writes = options.server_syncs;
    return relay;
}

}  // namespace

Result<ReadRequest> filters_request(const std::string& location, const std::string& schema_file,
                                    const EventSelection& select, const InterestOption& interest, bool no_register,
                                    const char* reader_name) {
    auto asked = interest.request();
    if (!asked) return std::move(asked).error();
    ReadRequest request;
    request.location = location;
    request.schema = SchemaNeed::WhenAsked;
    if (!schema_file.empty()) request.schema_file = schema_file;
    request.selection = &select;
    request.scope = SelectionScope::Filters;
    request.interest = *asked;
    request.interest_names = interest.names();
    if (!no_register) request.reader = ReaderInfo{reader_name, 0, ""};  // the library registers it itself
    return request;
}

bool wait_to_relay(const RelayCommandOptions& options) {
    install_stop_handlers();
    if (!options.wait) return true;
    FollowOptions follow;  // the wait of watch and record (follow.hpp)
    follow.stop_flag = &stop_flag();
    return wait_for_name(options.ring, follow, report_error);
}

int run_relay_command(RelayCommandOptions& options) {
    if (options.assemble) return run_assembled_relay_command(options);
    if (!options.stage.empty() || options.no_payload)
        return usage_error(Error(EINVAL, "--stage and --no-payload go with --assemble SPAN"));
    auto plan = plan_relay(options);
    if (!plan) return usage_error(plan.error());
    auto request = filters_request(options.ring, options.schema_file, options.select, options.interest,
                                   options.no_register, "relay");
    if (!request) return usage_error(request.error());
    request->source = plan->source_options;
    if (!wait_to_relay(options)) return kExitOk;  // interrupted
    // Opened once: names are looked up in the source the relay then reads.
    FollowOptions follow;
    follow.filter = plan->filter;
    std::unique_ptr<Reading> reading;
    if (int failed = open_selected(std::move(*request), follow, reading); failed != kExitOk) return failed;
    Reading& r = *reading;
    plan->filter = r.follow().filter;
    plan->where = r.follow().where;  // kept alive by the reading
    if (r.interest()) plan->interest = *r.interest();
    auto result = nats::run_relay(*plan, std::move(r.source()));
    if (!result) return runtime_error(result.error());
    const nats::PublisherStats& s = result->publisher;
    fmt::print(stderr,
               "evring: relayed {} events and {} gap messages ({} seqnos lost) in {} messages, {} re-published, "
               "{} outages{}\n",
               s.events, s.gaps, s.lost_in_gaps, s.messages_confirmed, s.republished, result->outages,
               healed_words(result->follow.counters.healed, "relay"));
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
    r.select.add_range(*relay, {.from = "oldest (default), latest or SEQNO, when the stream does not yet hold this "
                                        "ring (otherwise the relay resumes where the stream ends)",
                                .until = nullptr, .count = nullptr});
    r.select.add_filters(*relay, {.type = "Relay only this event type (name or number; repeatable)",
                                  .flow = "Relay only events with content_ext[INDEX] == VALUE; INDEX may be a flow "
                                          "tag's name (repeatable)",
                                  .where = nullptr});
    relay->add_option("--flow-subject", r.flow_subject, "Subjects also carry content_ext[INDEX]")
        ->type_name("INDEX");
    relay->add_option("--batch", r.batch,
                        "Events per message (default 64; 1: one message per event, filterable by subject)")
        ->type_name("N");
    relay->add_option("--replicas", r.replicas,
                        "Replicas of the stream when the relay creates it (default 1; 3 on a three-node cluster)")
        ->type_name("N");
    relay->add_flag("--allow-other-ring", r.allow_other_ring, "Relay into a stream holding another ring's events");
    relay->add_flag("--server-syncs", r.server_syncs,
                    "The server syncs every write to disk (sync_interval: always): no durability warning");
    relay->add_flag("--no-register", r.no_register, kNoRegisterHelp);
    relay->add_flag("--wait", r.wait, kWaitHelp);
    r.heal.add(*relay, false);
    r.select.add_filters(*relay, {.type = nullptr, .flow = nullptr,
                                  .where = "Relay only events this expression keeps (docs/cli.md)"});
    relay->add_option("--schema", r.schema_file, "Schema file for --where and --keywords when the ring has none")->type_name("FILE");
    r.interest.add(*relay);
    relay->add_option("--assemble", r.assemble,
                      "Publish whole span instances (block) as JSON, one message each, instead of events")
        ->type_name("SPAN");
    relay->add_option("--stage", r.stage, "With --assemble: publish an instance once it reaches this stage (finalized)")
        ->type_name("NAME");
    relay->add_flag("--no-payload", r.no_payload, "With --assemble: events without their payload hex");
    return {relay, [options] { return run_relay_command(*options); }};
}

}  // namespace evring::cli
