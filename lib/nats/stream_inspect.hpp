// Reading single messages of a stream by sequence or subject, decoded: what
// the publisher's resume query and the stream reader's start positions use.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "connection_impl.hpp"

namespace evring::nats::detail {

struct FetchedMessage {
    MessagePtr message;  // owns the bytes `wire` and `decoded` point into
    WireMessage wire;
    DecodedMessage decoded;
    Status decoding;  // decode_message's verdict
    std::uint64_t sequence = 0;
    std::int64_t time_nanos = 0;

    bool is_evring() const { return is_evring_message(wire); }
    bool valid() const { return decoding.ok(); }
};

// The message at `sequence` (ENOENT when there is none: deleted, or outside
// the stream).
Result<FetchedMessage> fetch_message(const Connection::Impl& connection, std::string_view stream,
                                     std::uint64_t sequence);
// The newest message on `subject` (ENOENT when there is none).
Result<FetchedMessage> fetch_last_on(const Connection::Impl& connection, std::string_view stream,
                                     const std::string& subject);
// The first message on `subject` at or after stream sequence `from` (ENOENT
// when there is none; a direct get: the stream must allow them).
Result<FetchedMessage> fetch_next_on(const Connection::Impl& connection, std::string_view stream,
                                     const std::string& subject, std::uint64_t from);
// How many announcements latest_announcement reads past another client's
// message on their subject, at most.
inline constexpr std::size_t kMaxAnnouncementsScanned = 4096;
// The stream's newest announcement, if it has one that decodes (passing
// over other clients' messages on the announcement subject).
Result<std::optional<Announcement>> latest_announcement(const Connection::Impl& connection,
                                                        std::string_view stream, std::string_view prefix);

}  // namespace evring::nats::detail
