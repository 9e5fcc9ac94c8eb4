// Publishing into the stream: the window, the chain of expected message ids,
// back-pressure and batches. See nats_publisher.hpp and the invariants in
// publisher_impl.hpp.
#include <fmt/format.h>

#include <cerrno>

#include "evring/clock.hpp"
#include "publisher_impl.hpp"

namespace evring::nats {
namespace {

std::uint64_t now_nanos() { return wall_clock_nanos(); }

}  // namespace

// --- Under the lock -------------------------------------------------------

void StreamPublisher::Impl::fail(Error error) {
    if (!failure) failure = std::move(error);
}

void StreamPublisher::Impl::schedule_recovery(std::string reason) {
    if (needs_recovery) return;
    needs_recovery = true;
    recovery_reason = std::move(reason);
}

PendingMessage& StreamPublisher::Impl::add_entry() {
    PendingMessage& entry = window.emplace_back();
    if (!spare.empty()) {
        entry.message = std::move(spare.back());
        spare.pop_back();
    }
    return entry;
}

void StreamPublisher::Impl::send(PendingMessage& entry, bool want_ack) {
    if (!entry.counted) {
        entry.counted = true;
        window_bytes += entry.message.body.size();
    }
    if (needs_recovery) return;  // recovery sends it, in order
    entry.send_id = next_send_id++;
    if (++since_ack_request >= options.ack_every) want_ack = true;
    char reply[96];
    if (want_ack) {
        since_ack_request = 0;
        ack_requests.push_back(AckRequest{entry.send_id, Clock::now()});
        auto out = fmt::format_to_n(reply, sizeof reply - 1, "{}{}", reply_prefix, entry.send_id);
        *out.out = '\0';
    }
    entry.chained_to = chain;
    chain = entry.message.msg_id;
    natsStatus s = detail::publish(connection->connection, entry.message, want_ack ? reply : nullptr,
                                   entry.chained_to);
    ++stats.messages_sent;
    stats.bytes_sent += entry.message.body.size();
    if (s != NATS_OK) schedule_recovery(fmt::format("publishing failed: {}", natsStatus_GetText(s)));
}

void StreamPublisher::Impl::request_barrier() {
    if (!ack_requests.empty() || window.empty() || needs_recovery) return;
    PendingMessage& last = window.back();
    if (last.send_id == 0) return;
    // The same message again, chained to the same message: the server
    // answers "duplicate" when the first copy is stored (the chain stays as
    // it is), or stores it now when the first copy was lost.
    chain = last.chained_to;
    send(last, true);
}

PublishStatus StreamPublisher::Impl::ready(std::unique_lock<std::mutex>& lock, std::size_t messages,
                                           std::size_t bytes) {
    if (failure) return PublishStatus::Failed;
    const std::uint64_t disconnects = connection_handle->disconnects();
    if (disconnects != seen_disconnects) {
        seen_disconnects = disconnects;
        schedule_recovery("the connection to the server was lost");
    }
    if (!ack_requests.empty() && Clock::now() - ack_requests.front().sent_at > options.ack_timeout)
        schedule_recovery(fmt::format("no acknowledgement within {} ms", options.ack_timeout.count()));
    if (needs_recovery) {
        if (Clock::now() < next_recovery || connection_handle->state() != ConnectionState::Connected)
            return PublishStatus::Outage;
        recover(lock);
        if (failure) return PublishStatus::Failed;
        if (needs_recovery) return PublishStatus::Outage;
    }
    if (!window.empty() && (window.size() + messages > options.max_unacked_messages ||
                            window_bytes + bytes > options.max_unacked_bytes))
        return PublishStatus::WindowFull;
    return PublishStatus::Ok;
}

PublishStatus StreamPublisher::Impl::send_batch(std::unique_lock<std::mutex>& lock) {
    if (batch.batch_count == 0) return PublishStatus::Ok;
    PublishStatus s = ready(lock, 1, batch.body.size());
    if (s != PublishStatus::Ok) return s;
    encoder.finish_batch(batch);
    PendingMessage& entry = add_entry();
    std::swap(entry.message, batch);
    batch.clear();
    send(entry, false);
    return PublishStatus::Ok;
}

// --- The API ---------------------------------------------------------------

PublishStatus StreamPublisher::publish_event(const EventDescriptor& event, std::span<const std::byte> payload,
                                            std::optional<std::uint32_t> member) {
    Impl& p = *impl_;
    std::unique_lock lock(p.mutex);
    if (p.options.events_per_message > 1 && !member) {
        if (p.batch.batch_count >= p.options.events_per_message ||
            (p.batch.batch_count > 0 && !p.encoder.add_to_batch(event, payload, p.batch))) {
            // The open batch is full: it goes first, then this event starts the next.
            if (PublishStatus s = p.send_batch(lock); s != PublishStatus::Ok) return s;
        } else if (p.batch.batch_count > 0) {
            ++p.stats.events;
            return PublishStatus::Ok;
        }
        if (PublishStatus s = p.ready(lock, 1, 0); s != PublishStatus::Ok) return s;
        p.encoder.begin_batch(p.batch);
        if (p.encoder.add_to_batch(event, payload, p.batch)) {
            ++p.stats.events;
            return PublishStatus::Ok;
        }
        p.batch.clear();  // too big for any batch: it travels alone, chunked
    }
    const std::uint32_t chunks = p.encoder.event_chunks(payload.size());
    PublishStatus s = p.ready(lock, chunks, sizeof event + payload.size());
    if (s != PublishStatus::Ok) return s;
    for (std::uint32_t chunk = 0; chunk < chunks; ++chunk) {
        PendingMessage& entry = p.add_entry();
        p.encoder.encode_event(event, payload, chunk, entry.message, member);
        p.send(entry, false);
    }
    ++p.stats.events;
    if (chunks > 1) ++p.stats.chunked_events;
    return PublishStatus::Ok;
}

PublishStatus StreamPublisher::publish_gap(std::uint64_t first_seqno, std::uint64_t count, GapReason reason,
                                          std::optional<std::uint32_t> member) {
    if (first_seqno == 0 || count == 0 || first_seqno > kMaxSeqno || count > kMaxSeqno - first_seqno + 1) {
        std::lock_guard lock(impl_->mutex);
        impl_->fail(Error(EINVAL, fmt::format("impossible gap of {} from sequence number {}", count, first_seqno)));
        return PublishStatus::Failed;
    }
    Impl& p = *impl_;
    std::unique_lock lock(p.mutex);
    if (PublishStatus s = p.send_batch(lock); s != PublishStatus::Ok) return s;
    if (PublishStatus s = p.ready(lock, 1, sizeof(GapRecord)); s != PublishStatus::Ok) return s;
    PendingMessage& entry = p.add_entry();
    p.encoder.encode_gap(first_seqno, count, reason, now_nanos(), entry.message, member);
    p.send(entry, false);
    ++p.stats.gaps;
    p.stats.lost_in_gaps += count;
    return PublishStatus::Ok;
}

PublishStatus StreamPublisher::announce_ring(std::uint64_t first_seqno) {
    Impl& p = *impl_;
    std::unique_lock lock(p.mutex);
    if (PublishStatus s = p.send_batch(lock); s != PublishStatus::Ok) return s;
    if (PublishStatus s = p.ready(lock, 1, sizeof(AnnouncementBody)); s != PublishStatus::Ok) return s;
    const std::uint32_t flags = (p.options.filtered ? kAnnounceFiltered : 0) |
                                (p.options.events_per_message > 1 && !p.options.members ? kAnnounceBatched : 0) |
                                (p.options.members ? kAnnounceMembers : 0);
    PendingMessage& entry = p.add_entry();
    p.encoder.encode_announcement(first_seqno == 0 ? 1 : first_seqno, flags, now_nanos(), entry.message);
    p.send(entry, true);
    return PublishStatus::Ok;
}

PublishStatus StreamPublisher::switch_ring(RingIdentity ring, std::uint64_t first_seqno) {
    Impl& p = *impl_;
    {
        std::unique_lock lock(p.mutex);
        if (p.failure) return PublishStatus::Failed;
        auto valid = validate_ring_identity(ring);
        if (valid && ring.name != p.encoder.ring().name && !p.options.allow_other_ring)
            valid = Error(EEXIST, fmt::format("ring '{}' is not the ring '{}' this publisher relays", ring.name,
                                              p.encoder.ring().name));
        if (!valid) {
            p.fail(std::move(valid).error());
            return PublishStatus::Failed;
        }
        // The old instance's batched events go first.
        if (PublishStatus s = p.send_batch(lock); s != PublishStatus::Ok) return s;
        p.encoder.set_ring(std::move(ring));
    }
    return announce_ring(first_seqno);
}

PublishStatus StreamPublisher::publish_schema(std::span<const std::byte> blob) {
    Impl& p = *impl_;
    if (blob.empty() || blob.size() > kMaxSchemaSize) {
        std::lock_guard lock(p.mutex);
        p.fail(Error(EINVAL, fmt::format("a schema blob of {} bytes (1 to {} bytes expected)", blob.size(),
                                         kMaxSchemaSize)));
        return PublishStatus::Failed;
    }
    std::unique_lock lock(p.mutex);
    if (PublishStatus s = p.send_batch(lock); s != PublishStatus::Ok) return s;
    const std::uint32_t chunks = p.encoder.schema_chunks(blob.size());
    if (PublishStatus s = p.ready(lock, chunks, blob.size()); s != PublishStatus::Ok) return s;
    for (std::uint32_t chunk = 0; chunk < chunks; ++chunk) {
        PendingMessage& entry = p.add_entry();
        p.encoder.encode_schema(blob, chunk, entry.message);
        p.send(entry, chunk + 1 == chunks);
    }
    return PublishStatus::Ok;
}

PublishStatus StreamPublisher::send_pending() {
    Impl& p = *impl_;
    std::unique_lock lock(p.mutex);
    if (PublishStatus s = p.send_batch(lock); s != PublishStatus::Ok) return s;
    PublishStatus s = p.ready(lock, 0, 0);
    p.request_barrier();
    return s == PublishStatus::WindowFull ? PublishStatus::Ok : s;
}

PublishStatus StreamPublisher::wait_ready(std::chrono::milliseconds timeout) {
    Impl& p = *impl_;
    const auto deadline = Impl::Clock::now() + timeout;
    std::unique_lock lock(p.mutex);
    for (;;) {
        PublishStatus s = p.ready(lock, 1, 0);
        if (s == PublishStatus::Ok || s == PublishStatus::Failed) return s;
        p.request_barrier();  // a full window drains only if an acknowledgement is on its way
        const auto now = Impl::Clock::now();
        if (now >= deadline) return s;
        // Wake for acknowledgements, and every 20 ms for the connection's state.
        p.changed.wait_until(lock, std::min(deadline, now + std::chrono::milliseconds(20)));
    }
}

Status StreamPublisher::flush(std::chrono::milliseconds timeout) {
    Impl& p = *impl_;
    const auto deadline = Impl::Clock::now() + timeout;
    std::unique_lock lock(p.mutex);
    for (;;) {
        PublishStatus s = p.send_batch(lock);
        if (s == PublishStatus::Ok || s == PublishStatus::WindowFull) s = p.ready(lock, 0, 0);
        if (s == PublishStatus::Failed) return *p.failure;
        if (p.batch.batch_count == 0 && p.window.empty()) return {};
        if (s != PublishStatus::Outage) p.request_barrier();
        const auto now = Impl::Clock::now();
        if (now >= deadline)
            return Error(ETIMEDOUT,
                         fmt::format("{} messages to stream '{}' not acknowledged within {} ms{}", p.window.size(),
                                     p.options.stream.name, timeout.count(),
                                     p.needs_recovery ? fmt::format(" ({})", p.recovery_reason) : std::string()));
        p.changed.wait_until(lock, std::min(deadline, now + std::chrono::milliseconds(20)));
    }
}

}  // namespace evring::nats
