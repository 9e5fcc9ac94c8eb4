// evring/nats/nats_connection.hpp — where a NATS server and a stream are: `nats://HOST:PORT/STREAM`.
//
//     auto url = evring::nats::parse_url("nats://127.0.0.1:4222/ORDERS");
//     if (!url) die(url.error().message());   // names the text and what is wrong
//     connect(url->server_url()); ... url->stream ...
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
// masked) and the first thing wrong with it.
//
// Thread safety: pure functions on values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"

namespace evring::nats {

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

}  // namespace evring::nats
