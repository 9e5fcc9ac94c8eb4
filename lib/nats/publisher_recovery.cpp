// After an outage, and when a relay starts: asking the stream what it holds.
// See nats_publisher.hpp ("Delivery", "Outages").
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>

#include "publisher_impl.hpp"
#include "stream_inspect.hpp"

namespace evring::nats {
namespace {

// How far back resume_point() looks past messages that say nothing about
// sequence numbers (a schema's chunks, deleted messages).
constexpr std::uint64_t kResumeLookBack = 256;

}  // namespace

// The Nats-Msg-Ids of the stream's last message and of its newest evring
// message, passing over (a bounded number of) messages another client
// published after it; "" when there is none within reach.
Result<StreamPublisher::Impl::StreamEnd> StreamPublisher::Impl::stream_end(const StreamInfo& info) const {
    StreamEnd end;
    const std::uint64_t stop = info.last_sequence > kResumeLookBack ? info.last_sequence - kResumeLookBack : 0;
    for (std::uint64_t seq = info.last_sequence; seq > stop && seq >= info.first_sequence; --seq) {
        auto message = detail::get_message(*connection, info.name, seq);
        if (!message) {
            if (message.error().errno_value() == ENOENT) continue;  // deleted
            return std::move(message).error();
        }
        const WireMessage wire = detail::wire_view(message->get());
        if (seq == info.last_sequence) end.last_id = std::string(wire.msg_id);
        if (is_evring_message(wire)) {
            end.last_evring_id = std::string(wire.msg_id);
            break;
        }
    }
    return end;
}

void StreamPublisher::Impl::recover(std::unique_lock<std::mutex>& lock) {
    // The requests run without the lock, so acknowledgements keep coming in;
    // the caller's thread is the only one that adds to the window meanwhile.
    const std::string stream = options.stream.name;
    lock.unlock();
    auto info = connection_handle->stream_info(stream);
    StreamEnd end;
    if (info && info->messages > 0) {
        auto found = stream_end(*info);
        if (found)
            end = std::move(*found);
        else
            info = std::move(found).error();
    }
    lock.lock();

    if (!info) {
        if (info.error().errno_value() == ENOENT) {
            fail(Error(ENOENT, fmt::format("stream '{}' was deleted under the relay", stream)));
            return;
        }
        next_recovery = Clock::now() + backoff;
        backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
        recovery_reason = info.error().message();
        return;
    }
    if (info->created_nanos != stream_created_nanos) {
        fail(Error(ESTALE, fmt::format("stream '{}' was deleted and created again under the relay: the events "
                                       "relayed before are gone",
                                       stream)));
        return;
    }
    // Everything up to the stream's last evring message (when it is one of
    // ours) arrived; the rest chains on the stream's last message, whoever
    // published it.
    if (!end.last_evring_id.empty()) {
        auto stored = std::find_if(window.begin(), window.end(),
                                   [&](const PendingMessage& e) { return e.message.msg_id == end.last_evring_id; });
        if (stored != window.end()) pop_front(static_cast<std::size_t>(stored - window.begin()) + 1);
    }
    // The rest goes again, in order, chained on the stream's last message.
    chain = end.last_id;
    epoch_first_send_id = next_send_id;
    ack_requests.clear();
    since_ack_request = 0;
    needs_recovery = false;
    backoff = std::chrono::milliseconds(100);
    ++stats.recoveries;
    for (PendingMessage& entry : window) entry.send_id = 0;
    for (std::size_t i = 0; i < window.size() && !needs_recovery; ++i) {
        send(window[i], i + 1 == window.size());
        ++stats.republished;
    }
    changed.notify_all();
}

Result<ResumePoint> StreamPublisher::resume_point() {
    const Impl& p = *impl_;
    const std::string& stream = p.options.stream.name;
    auto info = p.connection_handle->stream_info(stream);
    if (!info) return std::move(info).error();
    ResumePoint point;
    point.last_stream_sequence = info->last_sequence;
    auto announced = detail::latest_announcement(*p.connection, stream, p.options.subjects.prefix);
    if (!announced) return std::move(announced).error();
    point.latest_announcement = *announced;
    if (info->messages == 0) return point;

    const std::string_view instance = p.encoder.ring().instance;
    const std::uint64_t stop = info->last_sequence > kResumeLookBack ? info->last_sequence - kResumeLookBack : 0;
    for (std::uint64_t seq = info->last_sequence; seq > stop && seq >= info->first_sequence; --seq) {
        auto fetched = detail::fetch_message(*p.connection, stream, seq);
        if (!fetched) {
            if (fetched.error().errno_value() == ENOENT) continue;  // deleted
            return std::move(fetched).error();
        }
        if (!fetched->valid()) {  // not ours (another client's, or damaged): says nothing
            ++point.skipped;
            continue;
        }
        const DecodedMessage& d = fetched->decoded;
        if (d.instance != instance) {
            point.state = ResumeState::OtherInstance;
            return point;
        }
        point.state = ResumeState::ThisInstance;
        switch (d.kind) {
        case MessageKind::Event:  // an event cut short resumes at itself
            point.next_seqno = d.chunk + 1 == d.chunk_count ? d.event.seqno + 1 : d.event.seqno;
            point.member = d.member;
            point.last_was_event = d.chunk + 1 == d.chunk_count;
            return point;
        case MessageKind::Gap:
            point.next_seqno = d.last_seqno() + 1;
            point.member = d.member;
            return point;
        case MessageKind::Batch: point.next_seqno = d.last_seqno() + 1; return point;
        case MessageKind::Announcement: point.next_seqno = d.announcement.first_seqno; return point;
        case MessageKind::Schema: continue;  // follows the announcement
        }
    }
    if (point.skipped == info->messages) {  // nothing but stray messages: nothing to resume
        point.state = ResumeState::Empty;
        return point;
    }
    return Error(EBADMSG, fmt::format("the last {} messages of stream '{}' do not say where ring instance '{}' "
                                      "ended ({} of them not evring's or not valid)",
                                      kResumeLookBack, stream, instance, point.skipped));
}

}  // namespace evring::nats
