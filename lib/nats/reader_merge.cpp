// Taking messages from the reader's lanes in stream order, and noticing a
// stream deleted or re-created under the reader. See reader_impl.hpp.
#include <fmt/format.h>

#include <cerrno>
#include <thread>

#include "reader_impl.hpp"
#include "stream_inspect.hpp"

namespace evring::nats {
namespace {

constexpr std::size_t kLaneBuffer = 8192;                // messages held per lane
constexpr std::chrono::seconds kStreamCheckInterval{2};  // while idle

}  // namespace

SourceStep StreamReader::Impl::fail(Error e) {
    if (!failed) {
        failed = true;
        error = std::move(e);
    }
    return SourceStep::Failed;
}

Status StreamReader::Impl::receive(ReaderLane& lane, std::int64_t wait_millis) {
    const bool durable = !options.durable.empty();
    if (durable &&
        (recovering || connection->events->reconnects.load(std::memory_order_relaxed) != reconnects_seen)) {
        if (auto s = recover_durable(lane); !s) return s;
        if (lane.subscription == nullptr) return {};  // tried again at the next read
    }
    while (lane.buffered.size() < kLaneBuffer) {
        natsMsg* raw = nullptr;
        natsStatus s = natsSubscription_NextMsg(&raw, lane.subscription, wait_millis);
        wait_millis = 0;  // wait once at most
        if (s == NATS_TIMEOUT) break;
        if (s == NATS_MISMATCH || s == NATS_MISSED_HEARTBEAT || s == NATS_SLOW_CONSUMER) {
            // libnats re-creates the ordered consumer; the stream check
            // tells whether the stream itself went. A durable one is
            // created again here (reader_durable.cpp).
            idle_since = {};
            if (durable) return recover_durable(lane);
            break;
        }
        if (s != NATS_OK) {
            if (connection_handle->state() != ConnectionState::Connected) break;  // an outage: wait
            return detail::nats_error(s, fmt::format("reading stream '{}' on {}", options.stream, connection->where()));
        }
        ReceivedMessage received;
        received.message.reset(raw);
        jsMsgMetaData* meta = nullptr;
        if (natsMsg_GetMetaData(&meta, raw) != NATS_OK) continue;  // not a stream message (a status)
        received.sequence = meta->Sequence.Stream;
        received.time_nanos = meta->Timestamp;
        jsMsgMetaData_Destroy(meta);
        if (received.sequence <= lane.last_received) {  // re-delivered after a consumer reset, or AckWait
            if (durable) redelivered(received);
            continue;
        }
        lane.last_received = received.sequence;
        max_received = std::max(max_received, received.sequence);
        lane.buffered.push_back(std::move(received));
    }
    return {};
}

Status StreamReader::Impl::drain() {
    for (ReaderLane& lane : lanes)
        if (auto s = receive(lane, 0); !s) return s;
    return {};
}

Status StreamReader::Impl::confirm(ReaderLane& lane) {
    // Everything any lane received so far was stored before this question.
    const std::uint64_t received_before = max_received;
    auto last = detail::fetch_last_on(*connection, options.stream, lane.filter);
    std::uint64_t lane_last = 0;
    if (last) {
        lane_last = last->sequence;
    } else if (last.error().errno_value() != ENOENT) {
        return std::move(last).error();
    }
    if (lane.last_received >= lane_last) lane.confirmed_through = std::max(lane.confirmed_through, received_before);
    return {};
}

Result<bool> StreamReader::Impl::take_next() {
    if (lanes.size() == 1) {
        if (lanes[0].buffered.empty()) return false;
        current = std::move(lanes[0].buffered.front());
        lanes[0].buffered.pop_front();
        return true;
    }
    ReaderLane& events = lanes[0];
    ReaderLane& control = lanes[1];
    ReaderLane* pick = nullptr;
    if (!events.buffered.empty() && !control.buffered.empty()) {
        pick = events.buffered.front().sequence < control.buffered.front().sequence ? &events : &control;
    } else if (!events.buffered.empty() || !control.buffered.empty()) {
        ReaderLane& full = events.buffered.empty() ? control : events;
        ReaderLane& empty = events.buffered.empty() ? events : control;
        const std::uint64_t head = full.buffered.front().sequence;
        if (empty.confirmed_through < head) {
            if (auto s = confirm(empty); !s) return std::move(s).error();
            if (empty.confirmed_through < head) return false;  // its messages are on the way
        }
        pick = &full;
    }
    if (pick == nullptr) return false;
    current = std::move(pick->buffered.front());
    pick->buffered.pop_front();
    return true;
}

SourceStep StreamReader::Impl::check_stream() {
    const auto now = std::chrono::steady_clock::now();
    if (now - idle_since < kStreamCheckInterval) return SourceStep::NotReady;
    idle_since = now;
    if (connection_handle->state() != ConnectionState::Connected) return SourceStep::NotReady;
    auto info = connection_handle->stream_info(options.stream);
    if (!info) {
        if (info.error().errno_value() == ENOENT)
            return fail(Error(ENOENT, fmt::format("stream '{}' on {} was deleted under the reader", options.stream,
                                                  connection->where())));
        return SourceStep::NotReady;  // a passing failure: asked again later
    }
    if (info->created_nanos != stream_created_nanos)
        return fail(Error(ESTALE, fmt::format("stream '{}' on {} was deleted and created again under the reader",
                                              options.stream, connection->where())));
    return SourceStep::NotReady;
}

void StreamReader::Impl::wait(std::chrono::nanoseconds timeout) {
    Impl& r = *this;
    if (r.failed || r.have_current) return;
    // Block on a lane with nothing buffered: with two lanes, one may hold
    // messages that wait for the other's (see reader_impl.hpp).
    ReaderLane* empty = nullptr;
    for (ReaderLane& lane : r.lanes)
        if (lane.buffered.empty() && empty == nullptr) empty = &lane;
    if (empty == nullptr) return;
    if (empty->subscription == nullptr) {  // a durable lane waiting for its server (recover_durable)
        std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(timeout, std::chrono::milliseconds(100)));
        if (auto s = r.receive(*empty, 0); !s) r.fail(std::move(s).error());
        return;
    }
    const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count();
    if (auto s = r.receive(*empty, std::max<std::int64_t>(millis, 1)); !s) r.fail(std::move(s).error());
}

}  // namespace evring::nats
