// evring/nats/nats_connection.hpp — where a NATS server and a stream are
// (`nats://HOST:PORT/STREAM`), a connection to that server, and the
// JetStream streams on it.
//
//     auto url = evring::nats::parse_url("nats://127.0.0.1:4222/RING");
//     auto connection = evring::nats::Connection::connect(*url);
//     evring::nats::StreamSpec spec{.name = "RING", .prefix = "evring.ring"};
//     auto stream = connection->ensure_stream(spec);   // creates it when missing
//
// Contract:
// - connect() tries once, for at most `connect_timeout` per server: an
//   unreachable or silent server is an error naming the URL (credentials left
//   out) and the reason, never a hang. A URL listing several servers of one
//   cluster tries them in the order given. Once connected, a lost server is
//   reconnected to in the background with exponential back-off
//   (reconnect_wait_min doubling up to reconnect_wait_max, with jitter),
//   forever, trying every listed server and those the cluster announces;
//   state() and disconnects() tell the publisher and the reader about outages.
// - Every JetStream request (stream info, create, message get) waits at most
//   `request_timeout`.
// - ensure_stream() creates a missing stream with the defaults of StreamSpec
//   (file storage, subjects PREFIX.>, a duplicate window of 30 s, no limits,
//   direct get allowed). An existing stream is validated, not changed: it must
//   be writable (not sealed, not a mirror), retain by limits, and capture every
//   subject under PREFIX; anything else is an error saying what differs.
// - message_limit() is the largest message (headers, subject and body) that
//   both the server (max_payload) and the stream (max_msg_size) accept.
//
// Thread safety: a Connection may be shared by threads (libnats connections
// are thread-safe); the publisher and the stream reader each hold a pointer
// to one and must not outlive it. The stream functions are setup calls.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"

namespace evring::nats {

// ---- The URL: where a server and a stream are. parse_url() reads one;
// its error names the text and what is wrong with it.
//
// Grammar (docs/distributed.md):
//
//   nats://[CREDENTIALS@]SERVER[,SERVER]...[/STREAM]
//   SERVER      HOST[:PORT]; several are servers of one cluster, tried in
//               turn (at most kMaxServers)
//   HOST        a DNS name (letters, digits, '-', '.'), an IPv4 address, or an
//               IPv6 address in brackets ("[::1]")
//   PORT        1..65535, 4222 when absent
//   CREDENTIALS "user:password" or a token, passed to every server, never shown
//   STREAM      a JetStream stream name: printable ASCII without ' ', '.',
//               '*', '>', '/', '\' (at most 255 bytes); absent or empty when
//               the caller names the stream otherwise
//
// Only the nats:// scheme is accepted (TLS needs certificates this parser
// cannot carry). Anything else is an error naming the text (credentials
// masked) and the first thing wrong with it. parse_url and
// validate_stream_name are pure functions on values.

inline constexpr std::uint16_t kDefaultNatsPort = 4222;
inline constexpr std::size_t kMaxStreamNameSize = 255;
inline constexpr std::size_t kMaxServers = 32;

struct ServerAddress {
    std::string host;  // without brackets for IPv6
    std::uint16_t port = kDefaultNatsPort;
};

struct Url {
    std::string host;  // the first server; without brackets for IPv6
    std::uint16_t port = kDefaultNatsPort;
    std::vector<ServerAddress> more_servers;  // the others of a list, in order
    std::string credentials;  // "user:password" or a token; empty when none
    std::string stream;       // empty when the URL has no stream

    // "nats://[credentials@]host:port" of the first server, for the client library.
    std::string server_url() const;
    // The same for every server of the list, the first first.
    std::vector<std::string> server_urls() const;
    // "nats://host:port[,host:port]...[/stream]" with credentials left out, for messages.
    std::string display() const;
};

Result<Url> parse_url(std::string_view text);

// A JetStream stream name as the server accepts it (see the grammar above);
// the error names `name` and the offending character.
Status validate_stream_name(std::string_view name);

// ---- The connection.

struct ConnectOptions {
    std::chrono::milliseconds connect_timeout{2000};
    std::chrono::milliseconds request_timeout{5000};
    std::chrono::milliseconds reconnect_wait_min{100};
    std::chrono::milliseconds reconnect_wait_max{5000};
    std::string name = "evring";  // how the server lists this client
};

enum class ConnectionState : std::uint8_t {
    Connected,
    Reconnecting,  // the server went away; libnats is trying again with back-off
    Closed,        // gone for good (destroyed, or the server refused us)
};

// The most replicas JetStream keeps of a stream.
inline constexpr int kMaxReplicas = 5;

// How a stream is created when missing (docs/distributed.md, "Streams").
struct StreamSpec {
    std::string name;
    std::string prefix;  // the stream captures PREFIX.>
    std::chrono::seconds duplicate_window{30};
    std::int64_t max_bytes = -1;  // -1: no limit
    std::int64_t max_messages = -1;
    std::chrono::seconds max_age{0};  // 0: no limit
    int replicas = 1;                 // 3 on a three-node cluster
    bool memory_storage = false;      // file storage unless asked
    bool create = true;               // false: the stream must exist
    // Not empty: the stream carries this span's assembled instances as JSON
    // (`evring relay --assemble`), said in its description; an existing
    // stream must say the same, and a relay of events refuses such a stream.
    std::string assembled_span;
};

struct StreamInfo {
    std::string name;
    std::vector<std::string> subjects;
    std::uint64_t messages = 0;
    std::uint64_t bytes = 0;
    std::uint64_t first_sequence = 0;  // 0 when empty
    std::uint64_t last_sequence = 0;
    std::int64_t first_time_nanos = 0;
    std::int64_t last_time_nanos = 0;
    std::int64_t created_nanos = 0;  // tells a re-created stream from the old one
    std::int64_t duplicate_window_nanos = 0;
    std::int32_t max_message_size = -1;  // -1: no limit of its own
    int replicas = 1;
    std::string leader;  // the server (its server_name) leading a clustered stream; "" otherwise
    bool file_storage = true;
    bool allow_direct = false;
    bool limits_retention = true;
    bool writable = true;  // not sealed, not a mirror
    // The span whose assembled instances the stream carries as JSON (relay
    // --assemble, read from its description); empty for a stream of events.
    // evring's stream readers refuse such a stream: read it with a NATS client.
    std::string assembled_span;
};

class Connection {
public:
    static Result<Connection> connect(const Url& url, const ConnectOptions& options = {});
    Connection(Connection&&) noexcept;
    Connection& operator=(Connection&&) noexcept;
    ~Connection();

    const Url& url() const;
    const ConnectOptions& options() const;
    ConnectionState state() const;
    std::uint64_t disconnects() const;  // times the server was lost since connect()
    std::size_t max_payload() const;    // the server's limit per message

    // The stream, or an error with errno ENOENT when there is none.
    Result<StreamInfo> stream_info(std::string_view stream) const;
    Result<StreamInfo> ensure_stream(const StreamSpec& spec) const;
    Status delete_stream(std::string_view stream) const;
    // The largest message the server and `stream` both accept.
    std::size_t message_limit(const StreamInfo& stream) const;

    struct Impl;  // lib/nats/connection_impl.hpp
    Impl& impl() const { return *impl_; }

private:
    explicit Connection(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace evring::nats
