// Opening a StreamPublisher: the stream, the checks that the relay may write
// there, and the acknowledgement subscription. See nats_publisher.hpp.
#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "publisher_impl.hpp"
#include "stream_inspect.hpp"

namespace evring::nats {
namespace {

// libnats calls this for every acknowledgement, on its own thread. The reply
// subject ends in the send id the publication asked with.
void on_ack(natsConnection*, natsSubscription*, natsMsg* reply, void* closure) {
    detail::MessagePtr owned(reply);
    std::string_view subject = natsMsg_GetSubject(reply);
    std::uint64_t send_id = 0;
    std::size_t dot = subject.rfind('.');
    if (dot == std::string_view::npos) return;
    auto [end, ec] = std::from_chars(subject.data() + dot + 1, subject.data() + subject.size(), send_id);
    if (ec != std::errc()) return;
    static_cast<StreamPublisher::Impl*>(closure)->take_ack(send_id, parse_publish_ack(reply));
}

void on_subscription_done(void* closure) {
    auto* impl = static_cast<StreamPublisher::Impl*>(closure);
    std::lock_guard lock(impl->mutex);
    impl->subscription_done = true;
    impl->changed.notify_all();
}

std::uint32_t announce_flags(const PublisherOptions& options) {
    return (options.filtered ? kAnnounceFiltered : 0) | (options.events_per_message > 1 ? kAnnounceBatched : 0);
}

// The stream must be a relay's (announced), or hold nothing that is not
// evring's; of this ring unless allowed; with this relay's subject layout and
// batching. Stray messages in a relay's stream are passed over (readers skip
// them too), so one of them never stops a relay from starting again.
Status check_stream_content(const Connection::Impl& connection, const PublisherOptions& options,
                            const StreamInfo& info) {
    if (info.messages == 0) return {};
    auto announced = detail::latest_announcement(connection, info.name, options.subjects.prefix);
    if (!announced) return std::move(announced).error();
    if (!*announced) {
        auto last = detail::fetch_message(connection, info.name, info.last_sequence);
        if (!last && last.error().errno_value() != ENOENT) return std::move(last).error();
        if (last && !last->is_evring())
            return Error(EINVAL, fmt::format("stream '{}' on {} holds messages that are not evring's (message {} "
                                             "on '{}') and no relayed ring: choose another stream",
                                             info.name, connection.where(), info.last_sequence,
                                             last->wire.subject.substr(0, 80)));
        return {};
    }
    const Announcement& a = **announced;
    if (a.ring.name != options.ring.name && !options.allow_other_ring)
        return Error(EEXIST, fmt::format("stream '{}' on {} holds the events of ring '{}', not '{}': relay into "
                                         "another stream, or allow another ring's events to follow",
                                         info.name, connection.where(), a.ring.name, options.ring.name));
    Encoder probe(options.ring, options.subjects, kMinMessageLimit);
    OutgoingMessage mine;
    probe.encode_announcement(1, announce_flags(options), 0, mine);
    AnnouncementBody body;
    std::memcpy(&body, mine.body.data(), sizeof body);
    const int flow = body.flow_token == kNoFlowToken ? -1 : body.flow_token;
    const std::uint32_t layout_flags = kAnnounceTypeNames | kAnnounceBatched;
    if (a.flow_token != flow || (a.flags & layout_flags) != (body.flags & layout_flags))
        return Error(EINVAL, fmt::format("stream '{}' on {} uses another subject layout or batching (flow tag in "
                                         "subjects: {}, type names: {}, batches: {}); a stream keeps one",
                                         info.name, connection.where(), a.flow_token,
                                         (a.flags & kAnnounceTypeNames) != 0, (a.flags & kAnnounceBatched) != 0));
    return {};
}

}  // namespace

StreamPublisher::Impl::Impl(const Connection& handle, PublisherOptions opts, std::size_t max_body)
    : connection(&handle.impl()),
      connection_handle(&handle),
      options(std::move(opts)),
      encoder(options.ring, options.subjects, max_body) {}

StreamPublisher::Impl::~Impl() {
    if (ack_subscription == nullptr) return;
    // Stop acknowledgements before this object goes: unsubscribe, then wait
    // for libnats to say it will not call on_ack again.
    natsSubscription_Unsubscribe(ack_subscription);
    bool done = false;
    {
        std::unique_lock lock(mutex);
        done = changed.wait_for(lock, std::chrono::seconds(5), [&] { return subscription_done; });
    }
    // Destroyed only when libnats cannot touch it any more; else with the connection.
    if (connection->settle_unsubscribed() && done) natsSubscription_Destroy(ack_subscription);
    else connection->bury(ack_subscription);
}

Result<StreamPublisher> StreamPublisher::open(const Connection& connection, PublisherOptions options) {
    if (auto s = validate_ring_identity(options.ring); !s) return std::move(s).error();
    if (auto s = validate_subject_layout(options.subjects); !s) return std::move(s).error();
    if (options.max_unacked_messages == 0 || options.max_unacked_bytes == 0 || options.ack_every == 0 ||
        options.events_per_message == 0 || options.events_per_message > kMaxBatchCount)
        return Error(EINVAL, "publisher window, acknowledgement interval and batch size must be positive (batches "
                             "of at most 65536 events)");
    options.stream.prefix = options.subjects.prefix;
    auto info = connection.ensure_stream(options.stream);
    if (!info) return std::move(info).error();
    const std::size_t limit = connection.message_limit(*info);
    if (limit < kMinMessageLimit)
        return Error(EINVAL, fmt::format("{} and stream '{}' accept messages of {} bytes at most; the relay needs "
                                         "{} at least",
                                         connection.url().display(), info->name, limit, kMinMessageLimit));
    if (auto s = check_stream_content(connection.impl(), options, *info); !s) return std::move(s).error();

    auto impl = std::make_unique<Impl>(connection, std::move(options), limit - kHeaderAllowance);
    impl->message_limit = limit;
    impl->stream_created_nanos = info->created_nanos;
    if (info->messages > 0) {  // chained to the stream's last message, whoever published it
        auto last = detail::get_message(connection.impl(), info->name, info->last_sequence);
        if (!last && last.error().errno_value() != ENOENT) return std::move(last).error();
        if (last) impl->chain = std::string(detail::wire_view(last->get()).msg_id);
    }
    impl->seen_disconnects = connection.disconnects();

    natsInbox* inbox = nullptr;
    if (natsStatus s = natsInbox_Create(&inbox); s != NATS_OK) return detail::nats_error(s, "creating an inbox");
    impl->reply_prefix = fmt::format("{}.", reinterpret_cast<const char*>(inbox));
    natsInbox_Destroy(inbox);
    const std::string subject = impl->reply_prefix + "*";
    natsConnection* nc = connection.impl().connection;
    natsStatus s = natsConnection_Subscribe(&impl->ack_subscription, nc, subject.c_str(), on_ack, impl.get());
    if (s == NATS_OK) s = natsSubscription_SetPendingLimits(impl->ack_subscription, -1, -1);
    if (s == NATS_OK) s = natsSubscription_SetOnCompleteCB(impl->ack_subscription, on_subscription_done, impl.get());
    if (s != NATS_OK) return detail::nats_error(s, "subscribing to publication acknowledgements");
    return StreamPublisher(std::move(impl));
}

StreamPublisher::StreamPublisher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
StreamPublisher::StreamPublisher(StreamPublisher&&) noexcept = default;
StreamPublisher& StreamPublisher::operator=(StreamPublisher&&) noexcept = default;
StreamPublisher::~StreamPublisher() = default;

std::size_t StreamPublisher::message_limit() const { return impl_->message_limit; }
const RingIdentity& StreamPublisher::ring() const { return impl_->encoder.ring(); }

const Error* StreamPublisher::failure() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->failure ? &*impl_->failure : nullptr;
}

PublisherStats StreamPublisher::stats() const {
    std::lock_guard lock(impl_->mutex);
    PublisherStats stats = impl_->stats;
    stats.window_messages = impl_->window.size();
    stats.window_bytes = impl_->window_bytes;
    return stats;
}

std::string_view describe(PublishStatus status) noexcept {
    switch (status) {
    case PublishStatus::Ok: return "ok";
    case PublishStatus::WindowFull: return "window full";
    case PublishStatus::Outage: return "outage";
    case PublishStatus::Failed: return "failed";
    }
    return "unknown";
}

}  // namespace evring::nats
