// Opening a reader's consumers: the start position and the ordered
// consumers. See nats_reader.hpp and reader_impl.hpp.
#include <fmt/format.h>

#include <cerrno>

#include "reader_impl.hpp"
#include "stream_inspect.hpp"

namespace evring::nats {

// Where a consumer starts delivering; `start_sequence`: the stream sequence
// a StreamSequence or SourceSeqno start was resolved to.
void set_consumer_start(jsConsumerConfig& config, const StartAt& start, std::uint64_t start_sequence) {
    switch (start.kind) {
    case StartKind::Oldest: config.DeliverPolicy = js_DeliverAll; break;
    case StartKind::New: config.DeliverPolicy = js_DeliverNew; break;
    case StartKind::Time:
        config.DeliverPolicy = js_DeliverByStartTime;
        config.OptStartTime = static_cast<std::int64_t>(start.value);
        break;
    case StartKind::StreamSequence:
    case StartKind::SourceSeqno:
        config.DeliverPolicy = js_DeliverByStartSequence;
        config.OptStartSeq = start_sequence;
        break;
    }
}
namespace {

// How many messages a source seqno bisection may probe past one that
// carries no sequence number (announcements, schema chunks, deleted ones).
constexpr std::uint64_t kProbeAhead = 64;
constexpr std::chrono::seconds kConsumerHeartbeat{1};

// The prefix of a stream made by a relay: its one subject, PREFIX.>.
Result<std::string> prefix_of(const StreamInfo& info) {
    for (const std::string& subject : info.subjects)
        if (subject.size() > 2 && subject.ends_with(".>")) return subject.substr(0, subject.size() - 2);
    return Error(EINVAL, fmt::format("stream '{}' captures no subjects of the form PREFIX.>; it was not made by "
                                     "evring relay (or name the relay's subject prefix)",
                                     info.name));
}

// A ring set's stream interleaves its members: looking for one member's
// message probes this many ahead (a member quiet for longer is taken as
// not reached there, which can only start the reader earlier).
constexpr std::uint64_t kMemberProbeAhead = 1024;

// The first source seqno carried at or after stream sequence `sequence`
// (probing a few messages ahead), of `member`'s messages only when given; 0
// when none within reach.
Result<std::uint64_t> seqno_at(const Connection::Impl& connection, const StreamInfo& info, std::uint64_t sequence,
                               std::uint64_t& found_at, std::optional<std::uint32_t> member) {
    const std::uint64_t end = std::min(info.last_sequence, sequence + (member ? kMemberProbeAhead : kProbeAhead));
    for (std::uint64_t s = sequence; s <= end; ++s) {
        auto fetched = detail::fetch_message(connection, info.name, s);
        if (!fetched) {
            if (fetched.error().errno_value() == ENOENT) continue;
            return std::move(fetched).error();
        }
        if (!fetched->valid()) continue;
        if (member && fetched->decoded.member != member) continue;
        if (std::uint64_t last = fetched->decoded.last_seqno(); last != 0) {
            found_at = s;
            return last;
        }
    }
    return std::uint64_t{0};
}

Status subscribe(const Connection::Impl& connection, const ReaderOptions& options, std::uint64_t start_sequence,
                 ReaderLane& lane) {
    jsSubOptions sub_options;
    jsSubOptions_Init(&sub_options);
    sub_options.Stream = options.stream.c_str();
    sub_options.Ordered = true;
    // The server's heartbeat to an ordered consumer: missing ones tell
    // libnats that the consumer went with its server (a cluster node lost),
    // and it is re-created from the next stream sequence. libnats' default,
    // 5 s, kept a reader idle for 10-15 s after a node was killed.
    sub_options.Config.Heartbeat = std::chrono::nanoseconds(kConsumerHeartbeat).count();
    jsConsumerConfig& config = sub_options.Config;
    set_consumer_start(config, options.start, start_sequence);
    jsErrCode code = static_cast<jsErrCode>(0);
    natsStatus s = js_SubscribeSync(&lane.subscription, connection.jetstream, lane.filter.c_str(), nullptr,
                                    &sub_options, &code);
    if (s == NATS_OK) s = natsSubscription_SetPendingLimits(lane.subscription, 1 << 18, 256 << 20);
    if (s != NATS_OK)
        return detail::nats_error(s, fmt::format("consuming '{}' from stream '{}' on {}", lane.filter,
                                                 options.stream, connection.where()),
                                  code);
    return {};
}

// A set's stream starting at the event at `sequence`: as a set read from
// MEMBER:SEQNO starts every other member at that event's time
// (RingSetSource::seek_member), the events just before it stamped at that
// very nanosecond (lower members, first in the merge's tie order) are read
// too. Looks back at most kProbeAhead messages.
Result<std::uint64_t> back_over_ties(const Connection::Impl& connection, const StreamInfo& info,
                                     std::uint64_t sequence) {
    auto at = detail::fetch_message(connection, info.name, sequence);
    if (!at) return std::move(at).error();
    const std::uint64_t time = at->decoded.event.record_epoch_nanos;
    std::uint64_t start = sequence;
    for (std::uint64_t s = sequence; s > info.first_sequence && sequence - s < kProbeAhead;) {
        --s;
        auto fetched = detail::fetch_message(connection, info.name, s);
        if (!fetched) {
            if (fetched.error().errno_value() == ENOENT) continue;
            return std::move(fetched).error();
        }
        if (!fetched->valid() || fetched->decoded.kind != MessageKind::Event) continue;
        if (fetched->decoded.event.record_epoch_nanos != time) break;
        start = s;
    }
    return start;
}

}  // namespace

Result<std::uint64_t> locate_source_seqno(const Connection::Impl& connection, const StreamInfo& info,
                                          std::uint64_t seqno, std::optional<std::uint32_t> member) {
    if (info.messages == 0) return info.last_sequence + 1;
    // The smallest stream sequence whose message (of `member`, when given)
    // carries seqnos reaching `seqno`. A member's messages are in its own
    // sequence order, so the test is monotonic in the stream sequence.
    std::uint64_t low = info.first_sequence, high = info.last_sequence + 1;
    while (low < high) {
        const std::uint64_t middle = low + (high - low) / 2;
        std::uint64_t found_at = 0;
        auto last = seqno_at(connection, info, middle, found_at, member);
        if (!last) return std::move(last).error();
        if (*last == 0 || *last >= seqno)
            high = middle;
        else
            low = found_at + 1;
    }
    if (member && low <= info.last_sequence) {
        // `low` is just past the member's message before; the other members'
        // messages up to its own one come earlier in the merge: start there.
        std::uint64_t found_at = 0;
        auto last = seqno_at(connection, info, low, found_at, member);
        if (!last) return std::move(last).error();
        if (*last != 0) return back_over_ties(connection, info, found_at);
    }
    return low;
}

void StreamReader::Impl::close_subscriptions() noexcept {
    if (subscriptions_closed) return;
    subscriptions_closed = true;
    for (ReaderLane& lane : lanes)
        if (lane.subscription != nullptr) {
            retired.push_back(lane.subscription);
            lane.subscription = nullptr;
        }
    // Some were unsubscribed already (an outage); a second time is refused, harmlessly.
    if (retired.empty()) return;  // nothing subscribed: no round trip
    for (natsSubscription* subscription : retired) natsSubscription_Unsubscribe(subscription);
    if (connection->settle_unsubscribed()) return;
    // Not known to be out of libnats's hands: destroyed with the connection.
    for (natsSubscription* subscription : retired) connection->bury(subscription);
    retired.clear();
}

// Destroyed here only when libnats is known to hold none of them (else the
// connection took them: close_subscriptions).
StreamReader::Impl::~Impl() {
    close_subscriptions();
    for (natsSubscription* subscription : retired) natsSubscription_Destroy(subscription);
}

// The relay's prefix: the stream's one subject, PREFIX.>.
Result<std::string> stream_prefix(const StreamInfo& info) { return prefix_of(info); }

Result<std::unique_ptr<StreamReader::Impl>> open_impl(const Connection& connection, ReaderOptions options,
                                                      std::optional<Announcement> ring) {
    auto info = connection.stream_info(options.stream);
    if (!info) return std::move(info).error();
    SubjectLayout layout;
    layout.prefix = options.prefix;
    if (auto s = validate_subject_layout(layout); !s) return std::move(s).error();
    if (!options.event_subject.empty() && !options.event_subject.starts_with(options.prefix + "."))
        return Error(EINVAL, fmt::format("event subject '{}' is not under the stream's prefix '{}'",
                                         options.event_subject, options.prefix));

    auto impl = std::make_unique<StreamReader::Impl>();
    impl->connection = &connection.impl();
    impl->connection_handle = &connection;
    impl->stream_created_nanos = info->created_nanos;
    impl->filtered = !options.event_subject.empty();
    impl->ring = std::move(ring);

    std::uint64_t start_sequence = options.start.value;
    if (options.start.kind == StartKind::StreamSequence && start_sequence == 0) start_sequence = 1;
    if (options.start.kind == StartKind::SourceSeqno) {
        auto located = locate_source_seqno(connection.impl(), *info, options.start.value, options.start.member);
        if (!located) return std::move(located).error().context("finding where to start");
        start_sequence = std::max<std::uint64_t>(*located, 1);
        // A set's member: its seqnos are the ones expected first; every other
        // member starts at its first message there (process()).
        impl->member = options.start.member.value_or(0);
        impl->expected = options.start.value;
        impl->start_floor = options.start.value;
    }
    if (!options.durable.empty()) {
        options.event_subject.clear();  // a named reader: one lane, every message
        // Created at a stream sequence, not "new": the server reports an ack
        // floor of 0 until something is acknowledged, and the start
        // sequence is then what durable_open() resumes from.
        if (options.start.kind == StartKind::New) {
            options.start = StartAt::stream_sequence(info->last_sequence + 1);
            start_sequence = info->last_sequence + 1;
        }
    }
    impl->lanes.resize(options.event_subject.empty() ? 1 : 2);
    impl->lanes[0].filter = options.event_subject.empty() ? stream_subject(options.prefix) : options.event_subject;
    if (impl->lanes.size() == 2) impl->lanes[1].filter = control_filter(options.prefix);
    impl->options = std::move(options);
    if (!impl->options.durable.empty()) {
        impl->reconnects_seen = connection.impl().events->reconnects.load(std::memory_order_relaxed);
        auto floor = subscribe_durable(connection.impl(), impl->options, start_sequence, impl->lanes[0]);
        if (!floor) return std::move(floor).error();
        // Before any acknowledgement the server says 0: the start is the floor.
        const bool by_sequence = impl->options.start.kind == StartKind::StreamSequence ||
                                 impl->options.start.kind == StartKind::SourceSeqno;
        impl->acked_through = std::max(*floor, by_sequence && start_sequence > 0 ? start_sequence - 1 : 0);
    }
    for (ReaderLane& lane : impl->lanes)
        if (impl->options.durable.empty())
            if (auto s = subscribe(connection.impl(), impl->options, start_sequence, lane); !s)
                return std::move(s).error();
    impl->idle_since = std::chrono::steady_clock::now();
    return impl;
}

// A ring set's stream: the event `back` events before its newest (0: the
// newest), as its member and seqno. Every event of a set is its own message
// (a set's stream has no batches; a chunked event counts once, by its first
// chunk). Looks at most 256 messages past those events; nullopt when the
// stream holds no event in reach.
Result<std::optional<StartAt>> set_event_back(const Connection& connection, const std::string& stream,
                                              std::uint64_t back) {
    auto info = connection.stream_info(stream);
    if (!info) return std::move(info).error();
    std::optional<StartAt> found;
    std::uint64_t seen = 0, other = 0;
    for (std::uint64_t s = info->last_sequence; s >= info->first_sequence && s > 0 && other <= 256; --s) {
        auto fetched = detail::fetch_message(connection.impl(), info->name, s);
        if (!fetched) {
            if (fetched.error().errno_value() == ENOENT) continue;
            return std::move(fetched).error();
        }
        const DecodedMessage& m = fetched->decoded;
        if (!fetched->valid() || m.kind != MessageKind::Event || !m.member || m.chunk != 0) {
            ++other;
            continue;
        }
        found = StartAt::member_seqno(*m.member, m.event.seqno);
        if (seen++ == back) break;
    }
    return found;
}

Result<std::uint64_t> newest_source_seqno(const Connection& connection, const std::string& stream) {
    auto info = connection.stream_info(stream);
    if (!info) return std::move(info).error();
    const std::uint64_t stop = info->last_sequence > 256 ? info->last_sequence - 256 : 0;
    for (std::uint64_t s = info->last_sequence; s > stop && s >= info->first_sequence && s > 0; --s) {
        auto fetched = detail::fetch_message(connection.impl(), info->name, s);
        if (!fetched) {
            if (fetched.error().errno_value() == ENOENT) continue;
            return std::move(fetched).error();
        }
        if (fetched->valid() && fetched->decoded.last_seqno() != 0 &&
            fetched->decoded.kind != MessageKind::Gap)
            return fetched->decoded.last_seqno();
    }
    return std::uint64_t{0};
}

}  // namespace evring::nats
