// Small helpers over libnats messages and statuses (connection_impl.hpp).
#include <fmt/format.h>

#include <cerrno>
#include <charconv>

#include "connection_impl.hpp"

namespace evring::nats::detail {
namespace {

int errno_for(natsStatus status, jsErrCode code) {
    if (code == JSStreamNotFoundErr || code == JSNoMessageFoundErr || status == NATS_NOT_FOUND) return ENOENT;
    switch (status) {
    case NATS_TIMEOUT: return ETIMEDOUT;
    case NATS_NO_SERVER: return ECONNREFUSED;
    case NATS_CONNECTION_CLOSED:
    case NATS_CONNECTION_DISCONNECTED:
    case NATS_STALE_CONNECTION: return ENOTCONN;
    case NATS_NO_RESPONDERS: return EAGAIN;
    case NATS_CONNECTION_AUTH_FAILED:
    case NATS_NOT_PERMITTED: return EACCES;
    case NATS_INVALID_ARG: return EINVAL;
    default: return EIO;
    }
}

std::string_view header(natsMsg* message, const char* name) {
    const char* value = nullptr;
    if (natsMsgHeader_Get(message, name, &value) != NATS_OK || value == nullptr) return {};
    return value;
}

}  // namespace

Error nats_error(natsStatus status, std::string_view what, jsErrCode code) {
    std::string message = fmt::format("{}: {}", what, natsStatus_GetText(status));
    natsStatus last = NATS_OK;
    const char* detail = nats_GetLastError(&last);
    if (detail != nullptr && *detail != '\0' && last == status && message.find(detail) == std::string::npos)
        message += fmt::format(" ({})", detail);
    if (status == NATS_NO_SERVER) message += " (nothing answers at that address)";
    if (status == NATS_NO_RESPONDERS) message += " (is JetStream enabled on the server?)";
    if (code != 0) message += fmt::format(" [JetStream error {}]", static_cast<int>(code));
    return Error(errno_for(status, code), std::move(message));
}

WireMessage wire_view(natsMsg* message) {
    WireMessage wire;
    const char* subject = natsMsg_GetSubject(message);
    wire.subject = subject != nullptr ? subject : "";
    wire.msg_id = header(message, kMsgIdHeader);
    wire.ring = header(message, kRingHeader);
    if (!wire.ring.empty()) {  // other messages need no more lookups
        wire.event = header(message, kEventHeader);
        if (wire.event.empty()) {
            wire.gap = header(message, kGapHeader);
            wire.announce = header(message, kAnnounceHeader);
            wire.schema = header(message, kSchemaHeader);
            wire.batch = header(message, kBatchHeader);
        }
        wire.chunk = header(message, kChunkHeader);
        wire.member = header(message, kMemberHeader);
    }
    const char* data = natsMsg_GetData(message);
    const int size = natsMsg_GetDataLength(message);
    if (data != nullptr && size > 0)
        wire.body = {reinterpret_cast<const std::byte*>(data), static_cast<std::size_t>(size)};
    return wire;
}

natsStatus publish(natsConnection* connection, const OutgoingMessage& message, const char* reply,
                   const std::string& expected_last_msg_id) {
    natsMsg* raw = nullptr;
    natsStatus s = natsMsg_Create(&raw, message.subject.c_str(), reply,
                                  reinterpret_cast<const char*>(message.body.data()),
                                  static_cast<int>(message.body.size()));
    if (s != NATS_OK) return s;
    MessagePtr owned(raw);
    s = natsMsgHeader_Set(raw, kMsgIdHeader, message.msg_id.c_str());
    for (const auto& h : message.headers) {
        if (s != NATS_OK) break;
        s = natsMsgHeader_Set(raw, h.name, h.value.c_str());
    }
    if (s == NATS_OK && !expected_last_msg_id.empty())
        s = natsMsgHeader_Set(raw, kExpectedLastMsgIdHeader, expected_last_msg_id.c_str());
    if (s == NATS_OK) s = natsConnection_PublishMsg(connection, raw);
    return s;
}

Result<MessagePtr> get_message(const Connection::Impl& connection, std::string_view stream,
                               std::uint64_t sequence) {
    const std::string name(stream);
    natsMsg* raw = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    natsStatus s = js_GetMsg(&raw, connection.jetstream, name.c_str(), sequence, nullptr, &code);
    if (s != NATS_OK)
        return nats_error(s, fmt::format("getting message {} of stream '{}' on {}", sequence, name,
                                         connection.where()),
                          code);
    return MessagePtr(raw);
}

}  // namespace evring::nats::detail
