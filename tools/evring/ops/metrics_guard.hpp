// tools/evring/ops/metrics_guard.hpp — the metrics server's connection policy
// (`evring metrics --listen`, metrics.cpp): how long a request may take, how
// many connections are open at once, and which one makes room.
//
// Why a policy of our own. libmicrohttpd bounds a connection's idle time, not
// a request's total time: a client sending one byte of its request head every
// 2 s is never idle. 273 such clients held every connection slot, and
// libmicrohttpd at its limit stops accepting, so a scraper's connect timed
// out. So the server keeps its own table of connections, fed by
// libmicrohttpd's callbacks, and applies:
// - A total bound per request (kRequestTime): from the connection's start, or
//   the end of its previous answer, to the end of its answer. Past it the
//   connection is shut down (sweep(), which the serving loop calls every
//   200 ms), however steadily the client trickles bytes.
// - A cap on connections open at once (kMaxConnections). A new connection at
//   the cap makes room by shutting down the connection that has waited
//   longest for a request head (a silent, slow or idle keep-alive client);
//   only when every open connection is being answered at that moment is the
//   new one closed at once. Never does one wait in the listen backlog: the
//   cap is ours, far below libmicrohttpd's own limit (which would stop
//   accepting). A scraper sends its request as it connects and is answered
//   within milliseconds, so slow clients, however many, only ever evict each
//   other: a slow client never costs another scraper's time.
// Shutting a connection down is shutdown(2) of its socket, under the table's
// mutex; libmicrohttpd then reads the end of the stream and closes it. The
// table forgets a connection in libmicrohttpd's "closed" notification, which
// libmicrohttpd makes before it closes the socket, so the socket shut down
// is always the connection's own, never a descriptor number reused since.
//
// Thread safety: every member takes the table's mutex; libmicrohttpd calls
// from its threads, sweep() from the serving loop.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>

struct MHD_Connection;

namespace evring::cli {

inline constexpr std::size_t kMaxConnections = 256;
inline constexpr std::chrono::seconds kRequestTime{5};

class ConnectionGuard {
public:
    using Clock = std::chrono::steady_clock;

    explicit ConnectionGuard(std::size_t max_connections = kMaxConnections,
                             Clock::duration request_time = kRequestTime)
        : max_(max_connections), request_time_(request_time) {}

    // A new connection (libmicrohttpd's accept policy): true to take it
    // (after making room when at the cap), false to close it at once.
    bool admit();
    void started(const MHD_Connection* connection, int fd);
    // Its request head is complete: it is being answered.
    void answering(const MHD_Connection* connection);
    // Its request completed: the next one's time starts now.
    void answered(const MHD_Connection* connection);
    void closed(const MHD_Connection* connection);
    // Shuts down the connections past their request's bound; how many.
    std::size_t sweep();

    // Connections open and not shut down by us.
    std::size_t open() const;
    // Shut down so far: past their bound, or to make room.
    std::size_t timed_out() const;
    std::size_t evicted() const;

private:
    struct Entry {
        int fd = -1;
        Clock::time_point since;  // its request's start
        bool answering = false;
        bool shut = false;  // shut down by us; still in the table until closed
    };
    void shut_down(Entry& entry);

    const std::size_t max_;
    const Clock::duration request_time_;
    mutable std::mutex mutex_;
    std::map<const MHD_Connection*, Entry> table_;
    std::size_t open_ = 0;  // entries not shut
    std::size_t timed_out_ = 0;
    std::size_t evicted_ = 0;
};

}  // namespace evring::cli
