// The metrics server's connection policy. See metrics_guard.hpp for why.
#include "ops/metrics_guard.hpp"

#include <sys/socket.h>

namespace evring::cli {

void ConnectionGuard::shut_down(Entry& entry) {
    // The socket is still the connection's: libmicrohttpd closes it only
    // after its "closed" notification, which waits for our mutex.
    ::shutdown(entry.fd, SHUT_RDWR);
    entry.shut = true;
    --open_;
}

bool ConnectionGuard::admit() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (open_ < max_) return true;
    // Room is made by the connection waiting longest for a request (never
    // one being answered).
    Entry* oldest = nullptr;
    for (auto& [connection, entry] : table_)
        if (!entry.shut && !entry.answering && (oldest == nullptr || entry.since < oldest->since)) oldest = &entry;
    if (oldest == nullptr) return false;  // all being answered: this one is closed at once
    shut_down(*oldest);
    ++evicted_;
    return true;
}

void ConnectionGuard::started(const MHD_Connection* connection, int fd) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto [it, fresh] = table_.try_emplace(connection);
    if (!fresh && !it->second.shut) --open_;
    it->second = Entry{fd, Clock::now(), false, false};
    ++open_;
}

void ConnectionGuard::answering(const MHD_Connection* connection) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = table_.find(connection); it != table_.end()) it->second.answering = true;
}

void ConnectionGuard::answered(const MHD_Connection* connection) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = table_.find(connection); it != table_.end()) {
        it->second.answering = false;
        it->second.since = Clock::now();
    }
}

void ConnectionGuard::closed(const MHD_Connection* connection) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = table_.find(connection);
    if (it == table_.end()) return;
    if (!it->second.shut) --open_;
    table_.erase(it);
}

std::size_t ConnectionGuard::sweep() {
    std::lock_guard<std::mutex> lock(mutex_);
    const Clock::time_point now = Clock::now();
    std::size_t shut = 0;
    for (auto& [connection, entry] : table_) {
        if (entry.shut || now - entry.since <= request_time_) continue;
        shut_down(entry);
        ++shut;
    }
    timed_out_ += shut;
    return shut;
}

std::size_t ConnectionGuard::open() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return open_;
}

std::size_t ConnectionGuard::timed_out() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return timed_out_;
}

std::size_t ConnectionGuard::evicted() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return evicted_;
}

}  // namespace evring::cli
