// Connecting to a NATS server, and following its comings and goings. See
// nats_connection.hpp for the contract.
#include <fmt/format.h>

#include <cerrno>
#include <random>
#include <vector>

#include "connection_impl.hpp"

namespace evring::nats {
namespace {

// libnats callbacks: they run on libnats' threads and only touch the
// ConnectionEvents (atomics, or fields under its mutex).

void on_disconnected(natsConnection*, void* closure) {
    auto* events = static_cast<ConnectionEvents*>(closure);
    events->state.store(ConnectionState::Reconnecting);
    events->disconnects.fetch_add(1);
    std::lock_guard lock(events->mutex);
    events->changed.notify_all();
}

void on_reconnected(natsConnection*, void* closure) {
    auto* events = static_cast<ConnectionEvents*>(closure);
    events->state.store(ConnectionState::Connected);
    events->reconnects.fetch_add(1);
    std::lock_guard lock(events->mutex);
    events->changed.notify_all();
}

void on_closed(natsConnection*, void* closure) {
    auto* events = static_cast<ConnectionEvents*>(closure);
    events->state.store(ConnectionState::Closed);
    std::lock_guard lock(events->mutex);
    events->closed = true;
    events->changed.notify_all();
}

void on_async_error(natsConnection*, natsSubscription*, natsStatus status, void* closure) {
    auto* events = static_cast<ConnectionEvents*>(closure);
    std::lock_guard lock(events->mutex);
    events->last_async_error = natsStatus_GetText(status);
}

// Exponential back-off between reconnection attempts, with 10 % jitter so
// that many relays do not reconnect in step.
std::int64_t reconnect_delay(natsConnection*, int attempts, void* closure) {
    auto* events = static_cast<ConnectionEvents*>(closure);
    const std::int64_t min = events->wait_min.count(), max = events->wait_max.count();
    std::int64_t delay = min;
    for (int i = 1; i < attempts && delay < max; ++i) delay *= 2;
    if (delay > max) delay = max;
    thread_local std::minstd_rand jitter(std::random_device{}());
    return delay + static_cast<std::int64_t>(jitter() % static_cast<unsigned>(delay / 10 + 1));
}

Status configure(natsOptions* options, const Url& url, const ConnectOptions& settings, ConnectionEvents* events) {
    // Every server of a list: libnats connects to one of them, and after an
    // outage to any (also those the cluster announces).
    const std::vector<std::string> servers = url.server_urls();
    std::vector<const char*> pointers;
    for (const std::string& server : servers) pointers.push_back(server.c_str());
    natsStatus s = natsOptions_SetServers(options, pointers.data(), static_cast<int>(pointers.size()));
    if (s == NATS_OK) s = natsOptions_SetNoRandomize(options, true);  // the order given: nearest first
    if (s == NATS_OK) s = natsOptions_SetName(options, settings.name.c_str());
    if (s == NATS_OK) s = natsOptions_SetTimeout(options, settings.connect_timeout.count());
    if (s == NATS_OK) s = natsOptions_SetAllowReconnect(options, true);
    if (s == NATS_OK) s = natsOptions_SetMaxReconnect(options, -1);
    if (s == NATS_OK) s = natsOptions_SetCustomReconnectDelay(options, reconnect_delay, events);
    if (s == NATS_OK) s = natsOptions_SetDisconnectedCB(options, on_disconnected, events);
    if (s == NATS_OK) s = natsOptions_SetReconnectedCB(options, on_reconnected, events);
    if (s == NATS_OK) s = natsOptions_SetClosedCB(options, on_closed, events);
    if (s == NATS_OK) s = natsOptions_SetErrorHandler(options, on_async_error, events);
    // Requests in flight fail at once when the server goes, instead of
    // waiting out their timeout.
    if (s == NATS_OK) s = natsOptions_SetFailRequestsOnDisconnect(options, true);
    // A server that stops answering (a partition, not a closed socket) is
    // noticed after two missed pings.
    if (s == NATS_OK) s = natsOptions_SetPingInterval(options, 5000);
    if (s == NATS_OK) s = natsOptions_SetMaxPingsOut(options, 2);
    if (s != NATS_OK) return detail::nats_error(s, "setting connection options");
    return {};
}

}  // namespace

// libnats 3.4 (Debian 12's) finds an incoming message's subscription under
// the connection's lock, lets go of that lock, and only then locks the
// subscription, holding no reference to it (later versions take one). A
// subscription destroyed in between is used after it was freed: seen as an
// abort in natsConn_processMsg, and as a reader thread blocked for good on a
// destroyed mutex, so that closing the connection, which joins that thread,
// hung. The reader thread handles what the server sends in order, so the
// PONG answering a PING sent after the UNSUB is handled only after every
// message it had already taken in: once a flush returns, none is in hand.
// When the round trip fails (the server is away), the subscription is
// buried: destroyed after the connection is closed.
bool Connection::Impl::settle_unsubscribed() const noexcept {
    return connection != nullptr && natsConnection_FlushTimeout(connection, 2000) == NATS_OK;
}

void Connection::Impl::bury(natsSubscription* subscription) const {
    std::lock_guard lock(graveyard_mutex_);
    graveyard_.push_back(subscription);
}

Connection::Impl::~Impl() {
    if (jetstream != nullptr) jsCtx_Destroy(jetstream);
    if (connection != nullptr) {
        natsConnection_Close(connection);  // joins the reader thread: the buried can go
        for (natsSubscription* subscription : graveyard_) natsSubscription_Destroy(subscription);
        bool closed = false;
        {
            std::unique_lock lock(events->mutex);
            closed = events->changed.wait_for(lock, std::chrono::seconds(5), [&] { return events->closed; });
        }
        natsConnection_Destroy(connection);
        // Without the closed callback, libnats might still call back into
        // `events`: leave it allocated rather than risk a use after free.
        if (!closed) events = nullptr;
    }
    delete events;
}

Result<Connection> Connection::connect(const Url& url, const ConnectOptions& options) {
    auto impl = std::make_unique<Impl>();
    impl->url = url;
    impl->options = options;
    impl->events = new ConnectionEvents;
    impl->events->wait_min = std::max(options.reconnect_wait_min, std::chrono::milliseconds(1));
    impl->events->wait_max = std::max(options.reconnect_wait_max, impl->events->wait_min);
    if (options.connect_timeout.count() <= 0 || options.request_timeout.count() <= 0)
        return Error(EINVAL, "connect and request timeouts must be positive");

    natsOptions* nats_options = nullptr;
    if (natsStatus s = natsOptions_Create(&nats_options); s != NATS_OK)
        return detail::nats_error(s, "creating connection options");
    auto configured = configure(nats_options, url, options, impl->events);
    natsStatus s = NATS_OK;
    if (configured) s = natsConnection_Connect(&impl->connection, nats_options);
    natsOptions_Destroy(nats_options);
    if (!configured) return std::move(configured).error();
    if (s != NATS_OK) {
        impl->connection = nullptr;
        auto error = detail::nats_error(s, fmt::format("connecting to {} (within {} ms)", url.display(),
                                                        options.connect_timeout.count()));
        return error;
    }
    jsOptions js_options;
    jsOptions_Init(&js_options);
    js_options.Wait = options.request_timeout.count();
    if (natsStatus js = natsConnection_JetStream(&impl->jetstream, impl->connection, &js_options); js != NATS_OK)
        return detail::nats_error(js, fmt::format("opening JetStream on {}", url.display()));
    return Connection(std::move(impl));
}

Connection::Connection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Connection::Connection(Connection&&) noexcept = default;
Connection& Connection::operator=(Connection&&) noexcept = default;
Connection::~Connection() = default;

const Url& Connection::url() const { return impl_->url; }
const ConnectOptions& Connection::options() const { return impl_->options; }
ConnectionState Connection::state() const { return impl_->events->state.load(); }
std::uint64_t Connection::disconnects() const { return impl_->events->disconnects.load(); }

std::size_t Connection::max_payload() const {
    const std::int64_t limit = natsConnection_GetMaxPayload(impl_->connection);
    return limit > 0 ? static_cast<std::size_t>(limit) : 0;
}

}  // namespace evring::nats
