// Reading single messages of a stream. See stream_inspect.hpp.
#include "stream_inspect.hpp"

#include <fmt/format.h>

#include <cerrno>

namespace evring::nats::detail {
namespace {

FetchedMessage decode_fetched(MessagePtr message) {
    FetchedMessage fetched;
    fetched.sequence = natsMsg_GetSequence(message.get());
    fetched.time_nanos = natsMsg_GetTime(message.get());
    fetched.wire = wire_view(message.get());
    fetched.decoding = decode_message(fetched.wire, fetched.decoded);
    fetched.message = std::move(message);
    return fetched;
}

}  // namespace

Result<FetchedMessage> fetch_message(const Connection::Impl& connection, std::string_view stream,
                                     std::uint64_t sequence) {
    auto message = get_message(connection, stream, sequence);
    if (!message) return std::move(message).error();
    return decode_fetched(std::move(*message));
}

Result<FetchedMessage> fetch_last_on(const Connection::Impl& connection, std::string_view stream,
                                     const std::string& subject) {
    const std::string name(stream);
    natsMsg* raw = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    natsStatus s = js_GetLastMsg(&raw, connection.jetstream, name.c_str(), subject.c_str(), nullptr, &code);
    if (s != NATS_OK)
        return nats_error(s, fmt::format("getting the last message on '{}' of stream '{}' on {}", subject, name,
                                         connection.where()),
                          code);
    return decode_fetched(MessagePtr(raw));
}

Result<FetchedMessage> fetch_next_on(const Connection::Impl& connection, std::string_view stream,
                                     const std::string& subject, std::uint64_t from) {
    const std::string name(stream);
    jsDirectGetMsgOptions options;
    jsDirectGetMsgOptions_Init(&options);
    options.Sequence = from;
    options.NextBySubject = subject.c_str();
    natsMsg* raw = nullptr;
    natsStatus s = js_DirectGetMsg(&raw, connection.jetstream, name.c_str(), nullptr, &options);
    if (s == NATS_NOT_FOUND)
        return Error(ENOENT, fmt::format("no message on '{}' of stream '{}' from {}", subject, name, from));
    if (s != NATS_OK)
        return nats_error(s, fmt::format("getting the next message on '{}' of stream '{}' on {}", subject, name,
                                         connection.where()));
    return decode_fetched(MessagePtr(raw));
}

namespace {

bool is_announcement(const FetchedMessage& m) { return m.valid() && m.decoded.kind == MessageKind::Announcement; }

// The newest valid announcement, read forwards through the subject's
// messages (few: one per relay run on a new ring instance); nullopt when
// none, or when the stream does not allow direct gets.
std::optional<Announcement> newest_valid_announcement(const Connection::Impl& connection, std::string_view stream,
                                                      const std::string& subject) {
    std::optional<Announcement> newest;
    std::uint64_t from = 1;
    for (std::size_t i = 0; i < kMaxAnnouncementsScanned; ++i) {
        auto next = fetch_next_on(connection, stream, subject, from);
        if (!next || next->sequence < from) break;
        if (is_announcement(*next)) newest = next->decoded.announcement;
        from = next->sequence + 1;
    }
    return newest;
}

}  // namespace

Result<std::optional<Announcement>> latest_announcement(const Connection::Impl& connection,
                                                        std::string_view stream, std::string_view prefix) {
    const std::string subject = control_subject(prefix, MessageKind::Announcement);
    auto fetched = fetch_last_on(connection, stream, subject);
    if (!fetched) {
        if (fetched.error().errno_value() == ENOENT) return std::optional<Announcement>();
        return std::move(fetched).error();
    }
    if (is_announcement(*fetched)) return std::optional<Announcement>(fetched->decoded.announcement);
    // Another client's message on the announcement subject hides the relay's.
    return newest_valid_announcement(connection, stream, subject);
}

}  // namespace evring::nats::detail
