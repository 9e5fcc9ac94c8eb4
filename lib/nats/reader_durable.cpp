// A named reader's position on the server: the JetStream durable consumer
// behind StreamReader's DurableSource side (nats_reader.hpp,
// include/evring/source/durable_source.hpp; docs/named-readers.md, "Streams").
//
// Why the consumer is re-created at each run, from the old one's ack floor,
// rather than bound again: a push consumer redelivers what it delivered
// unacknowledged only after its AckWait, so a reader restarted after
// SIGKILL would wait that long for the uncommitted tail. The ack floor is
// read first (durable_open), and the new consumer starts just after it.
//
// Redelivery while a reader runs: AckWait is long (kAckWait) and
// MaxAckPending unlimited, so a slow reader (digest commits only at its end)
// is neither stalled nor flooded; a message redelivered anyway (a reader
// SIGSTOPped for longer than AckWait) has a stream sequence at or below the
// lane's newest and receive() drops it (reader_merge.cpp), so nothing is
// handed out twice.
#include <fmt/format.h>

#include <cerrno>

#include "reader_impl.hpp"
#include "stream_inspect.hpp"

namespace evring::nats {
namespace {

constexpr const char* kDescription = "evring named reader";
constexpr std::chrono::minutes kAckWait{10};
constexpr std::chrono::seconds kHeartbeat{1};
constexpr std::int64_t kAckTimeoutMillis = 5000;
// Creating the consumer again after an outage: attempts (one per read
// while connected) before the reader fails.
constexpr int kRecoverAttempts = 600;
// How far back from the ack floor to look for a message that says which
// source seqno it is at (the floor may be an announcement or a schema).
constexpr std::uint64_t kFloorProbe = 64;
// A ring set's stream, one event a message: how far back to look for each
// member's newest event at or below the floor. A member with none in reach
// (quiet for that long) resumes at its next message, with no hole check.
constexpr std::uint64_t kMemberFloorProbe = 1024;

struct ConsumerInfoDeleter {
    void operator()(jsConsumerInfo* info) const { jsConsumerInfo_Destroy(info); }
};
using ConsumerInfoPtr = std::unique_ptr<jsConsumerInfo, ConsumerInfoDeleter>;

// JetStream refuses '.', '*', '>' and white space in a consumer's name;
// evring's reader names allow '.'.
Status check_durable_name(std::string_view name, std::string_view stream) {
    for (char c : name)
        if (c == '.' || c == '*' || c == '>' || c == ' ' || c == '\t')
            return Error(EINVAL, fmt::format("reader '{}' cannot name a JetStream durable consumer on stream '{}': "
                                             "JetStream refuses '{}' in a consumer's name (use a name of letters, "
                                             "digits, '_' and '-')",
                                             name, stream, c));
    return {};
}

// The consumer is evring's named reader of this stream: a push consumer
// acknowledging all up to a message, over the whole stream, with our
// description. Anything else is another client's and is never touched.
Status check_ours(const jsConsumerInfo& info, std::string_view name, const ReaderOptions& options,
                  std::string_view where) {
    const jsConsumerConfig* c = info.Config;
    const std::string subject = stream_subject(options.prefix);
    std::string why;
    if (c == nullptr) why = "no configuration";
    else if (c->Description == nullptr || std::string_view(c->Description) != kDescription)
        why = fmt::format("its description is '{}'", c->Description ? c->Description : "");
    else if (c->DeliverSubject == nullptr || *c->DeliverSubject == '\0') why = "it is a pull consumer";
    else if (c->AckPolicy != js_AckAll) why = "its acknowledgement policy is not 'all'";
    else if (c->FilterSubject == nullptr || subject != c->FilterSubject) why = "it filters another subject";
    if (why.empty()) return {};
    return Error(EEXIST, fmt::format("stream '{}' on {} has a consumer '{}' that evring did not make ({}): refused, "
                                     "it is left as it is; use another reader name, or delete that consumer",
                                     options.stream, where, name, why));
}

}  // namespace

Result<std::uint64_t> subscribe_durable(const Connection::Impl& connection, const ReaderOptions& options,
                                        std::uint64_t start_sequence, ReaderLane& lane) {
    const std::string what = fmt::format("durable consumer '{}' of stream '{}' on {}", options.durable,
                                         options.stream, connection.where());
    jsErrCode code = static_cast<jsErrCode>(0);
    natsStatus s = js_DeleteConsumer(connection.jetstream, options.stream.c_str(), options.durable.c_str(), nullptr,
                                     &code);
    if (s != NATS_OK && s != NATS_NOT_FOUND && code != JSConsumerNotFoundErr)
        return detail::nats_error(s, "deleting " + what, code);
    natsInbox* inbox = nullptr;
    if (s = natsInbox_Create(&inbox); s != NATS_OK) return detail::nats_error(s, "creating an inbox for " + what);
    jsConsumerConfig config;
    jsConsumerConfig_Init(&config);
    config.Durable = options.durable.c_str();
    config.Description = kDescription;
    config.DeliverSubject = inbox;
    config.FilterSubject = lane.filter.c_str();
    config.AckPolicy = js_AckAll;
    config.AckWait = std::chrono::nanoseconds(kAckWait).count();
    config.MaxAckPending = -1;  // unlimited: see the file comment
    config.MaxDeliver = -1;
    config.Heartbeat = std::chrono::nanoseconds(kHeartbeat).count();
    set_consumer_start(config, options.start, start_sequence);
    code = static_cast<jsErrCode>(0);
    jsConsumerInfo* raw = nullptr;
    s = js_AddConsumer(&raw, connection.jetstream, options.stream.c_str(), &config, nullptr, &code);
    ConsumerInfoPtr created(raw);
    natsInbox_Destroy(inbox);
    if (s != NATS_OK) return detail::nats_error(s, "creating " + what, code);
    const std::uint64_t floor = created ? created->AckFloor.Stream : 0;
    jsSubOptions sub_options;
    jsSubOptions_Init(&sub_options);
    sub_options.Stream = options.stream.c_str();
    sub_options.Consumer = options.durable.c_str();
    sub_options.ManualAck = true;
    code = static_cast<jsErrCode>(0);
    s = js_SubscribeSync(&lane.subscription, connection.jetstream, lane.filter.c_str(), nullptr, &sub_options, &code);
    if (s == NATS_OK) s = natsSubscription_SetPendingLimits(lane.subscription, 1 << 18, 256 << 20);
    if (s != NATS_OK) return detail::nats_error(s, "reading " + what, code);
    return floor;
}

Status StreamReader::Impl::recover_durable(ReaderLane& lane) {
    if (lane.subscription != nullptr) {
        natsSubscription_Unsubscribe(lane.subscription);  // binds, never deletes, the consumer
        retired.push_back(lane.subscription);
        lane.subscription = nullptr;
    }
    if (!recovering) {
        // What was taken already comes again and is dropped (receive());
        // what is buffered past it is taken again as it comes.
        recovering = true;
        lane.buffered.clear();
        lane.last_received = taken_through;
        max_received = taken_through;
        for (Unacked& u : unacked) u.reply.clear();  // the old consumer's: acknowledging by them would mislead the new one
    }
    if (connection_handle->state() != ConnectionState::Connected) return {};
    // After the floor; where it was created (a time, the oldest) when there is none yet.
    ReaderOptions again = options;
    if (acked_through != 0) again.start = StartAt::stream_sequence(acked_through + 1);
    reconnects_seen = connection->events->reconnects.load(std::memory_order_relaxed);
    auto floor = subscribe_durable(*connection, again, acked_through + 1, lane);
    if (!floor) {
        if (lane.subscription != nullptr) {
            retired.push_back(lane.subscription);
            lane.subscription = nullptr;
        }
        // The server may be starting again (JetStream not ready): tried again at the next read.
        if (++recover_failures < kRecoverAttempts) return {};
        return std::move(floor).error().context("creating the durable consumer again after an outage");
    }
    recovering = false;
    recovered = true;
    recover_failures = 0;
    ++stats.reconnects;
    return {};
}

void StreamReader::Impl::redelivered(const ReceivedMessage& received) {
    const char* reply = natsMsg_GetReply(received.message.get());
    if (reply == nullptr) return;
    for (auto it = unacked.rbegin(); it != unacked.rend() && it->sequence >= received.sequence; ++it)
        if (it->sequence == received.sequence) {
            it->reply = reply;
            return;
        }
}

void StreamReader::Impl::note_unacked() {
    if (options.durable.empty()) return;
    Unacked u;
    u.sequence = current.sequence;
    taken_through = current.sequence;
    if (const char* reply = natsMsg_GetReply(current.message.get()); reply != nullptr) u.reply = reply;
    if (have_current) {  // decoded; else another client's message: it carries no event of ours
        if (!instance.empty() && decoded.instance != instance) ++epoch;
        if (decoded.kind == MessageKind::Event || decoded.kind == MessageKind::Batch) u.last_seqno = decoded.last_seqno();
        u.member = decoded.member.value_or(0);
    }
    u.epoch = epoch;
    unacked.push_back(std::move(u));
}

Status StreamReader::Impl::acknowledge(std::uint64_t last, std::uint32_t of_member) {
    // Messages are handed out in stream order: the newest message of
    // `of_member` ending at or below `last` is handed out whole, and so is every
    // message before it, of any member (a ring set's stream). Messages
    // without events go with the ones before them; those of an older ring
    // instance (epoch) were all read. An entry without a reply (the consumer
    // was created again and has not delivered it again yet) cannot be
    // acknowledged, nor dropped.
    std::size_t end = 0;
    for (std::size_t i = 0; i < unacked.size(); ++i) {
        const Unacked& u = unacked[i];
        if (u.epoch != epoch) {
            end = i + 1;
        } else if (u.last_seqno == 0) {
            if (end == i) end = i + 1;
        } else if (u.member == of_member) {
            if (u.last_seqno > last) break;  // not handed out whole, nor anything after it
            end = i + 1;
        }
    }
    std::size_t through = 0;
    const Unacked* ack = nullptr;
    for (std::size_t i = 0; i < end; ++i)
        if (!unacked[i].reply.empty()) {
            ack = &unacked[i];
            through = i + 1;
        }
    if (ack == nullptr) return {};
    natsMsg* answer = nullptr;
    const natsStatus s = natsConnection_RequestString(&answer, connection->connection, ack->reply.c_str(), "+ACK",
                                                      kAckTimeoutMillis);
    natsMsg_Destroy(answer);
    if (s != NATS_OK)
        return detail::nats_error(s, fmt::format("acknowledging stream '{}' up to message {} to durable consumer '{}' "
                                                 "on {}",
                                                 options.stream, ack->sequence, options.durable, connection->where()));
    acked_through = std::max(acked_through, ack->sequence);
    unacked.erase(unacked.begin(), unacked.begin() + static_cast<std::ptrdiff_t>(through));
    return {};
}

Result<DurableResume> StreamReader::durable_open(std::string_view name, bool start_over) {
    if (auto s = check_durable_name(name, options_.stream); !s) return std::move(s).error();
    const Connection::Impl& connection = connection_->impl();
    DurableResume resume;
    resume.where = fmt::format("durable consumer '{}' of stream '{}' on {}", name, options_.stream, connection.where());
    options_.durable = std::string(name);
    event_subject_.clear();  // one lane, every message: the follow loop filters
    jsConsumerInfo* raw = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    const natsStatus s =
        js_GetConsumerInfo(&raw, connection.jetstream, options_.stream.c_str(), options_.durable.c_str(), nullptr, &code);
    ConsumerInfoPtr info(raw);
    if (s == NATS_NOT_FOUND || code == JSConsumerNotFoundErr) return resume;
    if (s != NATS_OK) return detail::nats_error(s, "looking up " + resume.where, code);
    if (auto ours = check_ours(*info, name, options_, connection.where()); !ours) return std::move(ours).error();
    resume.existed = true;
    resume.unacked = static_cast<std::uint64_t>(std::max<std::int64_t>(info->NumAckPending, 0));
    // Nothing acknowledged yet: the server says 0, and the consumer's own
    // start is the position (a sequence; a time is asked again as a time).
    const jsConsumerConfig& config = *info->Config;
    resume.floor_sequence = info->AckFloor.Stream;
    if (resume.floor_sequence == 0 && config.DeliverPolicy == js_DeliverByStartSequence && config.OptStartSeq > 0)
        resume.floor_sequence = config.OptStartSeq - 1;
    if (start_over) return resume;
    resume.resumed = true;
    resume_start_ = StartAt::stream_sequence(resume.floor_sequence + 1);
    if (resume.floor_sequence == 0 && config.DeliverPolicy == js_DeliverByStartTime) {
        resume_start_ = StartAt::time(static_cast<std::uint64_t>(config.OptStartTime));
        return resume;  // where that is, the server finds
    }
    // Which source seqno the floor is at: its message's last, or of one just
    // before it; none down to the stream's first message: before any event.
    // A ring set's stream: each member's, looking further back.
    auto stream = connection_->stream_info(options_.stream);
    if (!stream) return std::move(stream).error();
    const bool members = identity_.members;
    resume_instance_.clear();
    const std::uint64_t reach = members ? kMemberFloorProbe : kFloorProbe;
    const std::uint64_t stop = resume.floor_sequence > reach ? resume.floor_sequence - reach : 0;
    resume.floor_known = stop < std::max<std::uint64_t>(stream->first_sequence, 1);  // unless one is found
    for (std::uint64_t at = resume.floor_sequence; at > stop && at >= stream->first_sequence; --at) {
        auto fetched = detail::fetch_message(connection, options_.stream, at);
        if (!fetched) {
            if (fetched.error().errno_value() == ENOENT) continue;
            return std::move(fetched).error().context("reading the ack floor of " + resume.where);
        }
        const DecodedMessage& m = fetched->decoded;
        if (!fetched->valid() || m.last_seqno() == 0) continue;
        if (resume_instance_.empty()) {
            resume.floor_seqno = m.last_seqno();
            resume.floor_known = true;
            resume_instance_ = std::string(m.instance);
        } else if (m.instance != resume_instance_) {
            break;  // an older instance's: its seqnos are not the resumed one's
        }
        if (!members) break;
        const std::uint32_t member = m.member.value_or(0);
        if (member > kMaxMember) continue;
        if (member >= resume.floor_members.size()) resume.floor_members.resize(member + 1, 0);
        if (resume.floor_members[member] == 0) resume.floor_members[member] = m.last_seqno();
    }
    resume_members_ = resume.floor_members;
    resume_seqno_ = resume.floor_seqno;
    return resume;
}

Status StreamReader::durable_commit(std::uint64_t last, std::uint32_t member) {
    if (!impl_ || options_.durable.empty()) return {};
    return impl_->acknowledge(last, member);
}

}  // namespace evring::nats
