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

Result<std::optional<Announcement>> latest_announcement(const Connection::Impl& connection,
                                                        std::string_view stream, std::string_view prefix) {
    auto fetched = fetch_last_on(connection, stream, control_subject(prefix, MessageKind::Announcement));
    if (!fetched) {
        if (fetched.error().errno_value() == ENOENT) return std::optional<Announcement>();
        return std::move(fetched).error();
    }
    if (!fetched->valid() || fetched->decoded.kind != MessageKind::Announcement)
        return std::optional<Announcement>();
    return std::optional<Announcement>(fetched->decoded.announcement);
}

}  // namespace evring::nats::detail
