// run_relay (lib/nats/nats_relay.hpp): open the source, connect, find
// the stream's resume point, then the library's follow loop into RelaySink.
#include "nats/nats_relay.hpp"

#include <fmt/format.h>

#include <cerrno>

#include "registry/reader_kinds.hpp"
#include "sink/registering_sink.hpp"
#include "evring/source/source_open.hpp"
#include "relay_durability.hpp"
#include "relay_sink.hpp"
#include "source/source_renamed.hpp"

namespace evring::nats {
namespace {

// Where the follow loop starts. A stream ending with this ring instance is
// resumed at its next sequence number, whatever options.start says; a stream
// whose next number lies beyond what a finished source holds has nothing left.
struct StartPlan {
    Position start;
    std::optional<std::uint64_t> resume_next;
    bool nothing_left = false;
    // A ring set resumed at its last relayed event: that event, read again
    // to position the other members, is not published twice.
    std::optional<std::pair<std::uint32_t, std::uint64_t>> skip;
};

Result<StartPlan> plan_start(StreamPublisher& publisher, EventSource& source, const RelayOptions& options) {
    StartPlan plan{options.start, std::nullopt, false, std::nullopt};
    auto resume = publisher.resume_point();
    if (!resume) return Error(resume.error().errno_value(), fmt::format("stream '{}': {}", options.stream,
                                                                  resume.error().message()));
    if (resume->skipped != 0 && options.log)
        options.log(fmt::format("stream '{}' ends with {} messages that are not evring's; passed over",
                                options.stream, resume->skipped));
    if (resume->state != ResumeState::ThisInstance) return plan;
    plan.resume_next = resume->next_seqno;
    if (source.identity().members) {
        // A ring set: the stream ends with member M's seqno N - 1 (an event,
        // or the end of a gap). The merge starts again there
        // (Position::member_seqno: member M at that seqno, every other member
        // at its event's time), and that event is not published again: what
        // the merge handed out before it was relayed. An event of a lower
        // member stamped at that very nanosecond may go twice; the stream's
        // duplicate window drops it (its message id names member and seqno).
        // After a gap, member M starts past it. After an announcement alone,
        // nothing was relayed: start where asked.
        if (!resume->member) return plan;
        const std::uint64_t last = resume->next_seqno - 1;
        if (resume->last_was_event && last >= 1) {
            plan.start = Position::member_seqno(*resume->member, last);
            plan.skip = std::pair<std::uint32_t, std::uint64_t>(*resume->member, last);
        } else {
            plan.start = Position::member_seqno(*resume->member, resume->next_seqno);
        }
        return plan;
    }
    plan.start = Position::seqno(resume->next_seqno);
    if (!source.live()) {
        // A finished source refuses a start past its newest event: ask for it first.
        auto moved = source.seek(Position::latest());
        if (!moved) return std::move(moved).error();
        if (resume->next_seqno > source.next_seqno()) plan.nothing_left = true;
    }
    return plan;
}

// An existing stream is used as it is: say so when it keeps fewer or more
// copies than asked for, and when it cannot keep what the server
// acknowledged through a restart or a crash (relay_durability.hpp).
void warn_about_stream(const Connection& connection, const RelayOptions& options) {
    if (!options.log) return;
    auto info = connection.stream_info(options.stream);
    if (!info) return;
    if (options.stream_spec.replicas > 1 && info->replicas != options.stream_spec.replicas)
        options.log(fmt::format("stream '{}' exists with {} replica(s), not {}: it is used as it is", options.stream,
                                info->replicas, options.stream_spec.replicas));
    if (auto warning = durability_warning(*info, options.server_syncs_writes)) options.log(*warning);
}

PublisherOptions publisher_options(const RelayOptions& options, const EventSource& source) {
    PublisherOptions p;
    p.ring = ring_identity(source, source.identity().path);
    p.subjects.prefix = options.prefix.empty() ? default_prefix(options.stream) : options.prefix;
    p.subjects.flow_tag = options.flow_token;
    p.stream = options.stream_spec;
    p.stream.name = options.stream;
    p.stream.prefix = p.subjects.prefix;
    p.allow_other_ring = options.allow_other_ring;
    p.filtered = !options.filter.accepts_everything() || options.where != nullptr;
    p.members = source.identity().members;
    // A batch carries one run of sequence numbers; a set's members each count
    // their own, so its events travel one per message.
    p.events_per_message = options.events_per_message == 0 || p.members ? 1 : options.events_per_message;
    return p;
}

}  // namespace

std::string default_prefix(std::string_view stream) { return fmt::format("evring.{}", stream); }

RingIdentity ring_identity(const EventSource& source, std::string_view name) {
    const SourceIdentity& id = source.identity();
    RingIdentity ring;
    ring.name = std::string(name.substr(0, kMaxRingNameSize));
    ring.instance = fmt::format("{:016x}", id.instance);
    ring.content_type = id.content_type;
    ring.schema_hash = id.schema_hash;
    ring.size = id.ring_size;
    return ring;
}

Result<RelayResult> run_relay(const RelayOptions& options) {
    if (auto s = validate_stream_name(options.stream); !s) return std::move(s).error();
    auto opened = open_source(options.source, options.source_options);
    if (!opened) return std::move(opened).error();
    return run_relay(options, std::move(opened).value());
}

Result<RelayResult> run_relay(const RelayOptions& options, std::unique_ptr<EventSource> source) {
    if (auto s = validate_stream_name(options.stream); !s) return std::move(s).error();

    auto connection = Connection::connect(options.url, options.connect);
    if (!connection) return std::move(connection).error();
    auto publisher = StreamPublisher::open(*connection, publisher_options(options, *source));
    if (!publisher) return std::move(publisher).error();
    warn_about_stream(*connection, options);

    auto plan = plan_start(*publisher, *source, options);
    if (!plan) return std::move(plan).error();
    RelayResult result;
    result.resumed = plan->resume_next.has_value();
    if (plan->nothing_left) {
        if (options.log)
            options.log(fmt::format("stream '{}' already holds every event of '{}'", options.stream,
                                    source->identity().path));
        result.publisher = publisher->stats();
        return result;
    }

    FollowOptions follow_options;
    follow_options.start = plan->start;
    follow_options.filter = options.filter;
    follow_options.where = options.where;
    follow_options.payloads = PayloadRead::Copy;
    follow_options.follow_name = follows_names(*source);  // a live ring or ring set
    follow_options.reopen = options.source_options;
    follow_options.stop_flag = options.stop_flag;

    detail::RelaySink sink(*publisher, options);
    sink.set_resume(plan->resume_next);
    if (plan->skip) sink.skip_once(plan->skip->first, plan->skip->second);
    RegisteringSink seen(sink,
                         {options.reader_name, reader_kinds::kRelay,
                          fmt::format("-> {} {}", options.url.display(), options.stream)},
                         options.register_reader);
    seen.set_interest(options.interest);
    sink.set_keep_alive([&seen] { seen.keep_alive(); });
    auto followed = follow(source, follow_options, seen);
    Status finished = sink.finish();
    result.publisher = publisher->stats();
    result.first_seqno = sink.first_seqno();
    result.resume_gap = sink.resume_gap();
    result.outages = sink.outages();
    if (const Error* failure = sink.failure())
        return Error(failure->errno_value(), fmt::format("relaying into stream '{}' on {}: {}", options.stream,
                                                  options.url.display(), failure->message()));
    if (!followed) return std::move(followed).error();
    result.follow = std::move(followed).value();
    if (!finished)
        return Error(finished.error().errno_value(),
                     fmt::format("stopping: not every message was acknowledged by {} (a restarted relay resumes "
                                 "where the stream ends): {}", options.url.display(), finished.error().message()));
    return result;
}

}  // namespace evring::nats
