// Reading JetStream's answers to publications (publisher_impl.hpp).
//
// An answer is a small JSON object from the server:
//   {"stream":"S","seq":42}                       stored
//   {"stream":"S","seq":42,"duplicate":true}      already stored (Nats-Msg-Id)
//   {"error":{"code":400,"err_code":10070,"description":"wrong last msg ID: X"}, ...}
// or an empty message with status 503 (no responders: JetStream is not up).
// Only the fields above are read, by position of their keys.
#include <fmt/format.h>

#include <charconv>
#include <string_view>

#include "publisher_impl.hpp"

namespace evring::nats {
namespace {

// JetStream errors worth recovering from: the chain broke (a message before
// was lost), or JetStream is momentarily unavailable. Others are final.
constexpr int kWrongLastMsgId = 10070;
constexpr int kWrongLastSequence = 10071;
constexpr int kUnavailable = 503;

bool number_after(std::string_view text, std::string_view key, std::uint64_t& value) {
    std::size_t at = text.find(key);
    if (at == std::string_view::npos) return false;
    std::string_view rest = text.substr(at + key.size());
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == ':')) rest.remove_prefix(1);
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
    return ec == std::errc();
}

std::string_view string_after(std::string_view text, std::string_view key) {
    std::size_t at = text.find(key);
    if (at == std::string_view::npos) return {};
    std::size_t open = text.find('"', at + key.size());
    if (open == std::string_view::npos) return {};
    std::size_t close = text.find('"', open + 1);
    if (close == std::string_view::npos) return {};
    return text.substr(open + 1, close - open - 1);
}

}  // namespace

PublishAck parse_publish_ack(natsMsg* reply) {
    PublishAck ack;
    if (natsMsg_IsNoResponders(reply)) {
        ack.transient = true;
        ack.error = "JetStream did not answer (no responders: the server is starting or has no JetStream)";
        return ack;
    }
    const char* data = natsMsg_GetData(reply);
    const int size = natsMsg_GetDataLength(reply);
    std::string_view text = data != nullptr && size > 0 ? std::string_view(data, static_cast<std::size_t>(size))
                                                        : std::string_view();
    if (text.find("\"error\"") != std::string_view::npos) {
        std::uint64_t code = 0, err_code = 0;
        number_after(text, "\"code\"", code);
        number_after(text, "\"err_code\"", err_code);
        ack.transient = err_code == kWrongLastMsgId || err_code == kWrongLastSequence || code == kUnavailable;
        ack.error = fmt::format("{} [JetStream error {}]", string_after(text, "\"description\""), err_code);
        return ack;
    }
    if (!number_after(text, "\"seq\"", ack.stream_sequence)) {
        ack.transient = true;
        ack.error = fmt::format("unreadable acknowledgement '{}'", text.substr(0, 200));
        return ack;
    }
    ack.ok = true;
    ack.duplicate = text.find("\"duplicate\":true") != std::string_view::npos ||
                    text.find("\"duplicate\": true") != std::string_view::npos;
    return ack;
}

void StreamPublisher::Impl::take_ack(std::uint64_t send_id, const PublishAck& ack) {
    std::lock_guard lock(mutex);
    if (send_id < epoch_first_send_id) return;  // sent before the last recovery
    if (ack.ok)
        pop_confirmed(send_id);
    else if (ack.transient)
        schedule_recovery(ack.error);
    else
        fail(Error(EIO, fmt::format("the server refused a message for stream '{}': {}", options.stream.name,
                                    ack.error)));
    changed.notify_all();
}

void StreamPublisher::Impl::pop_confirmed(std::uint64_t send_id) {
    std::size_t n = 0;
    while (n < window.size() && window[n].send_id != 0 && window[n].send_id <= send_id) ++n;
    pop_front(n);
    while (!ack_requests.empty() && ack_requests.front().send_id <= send_id) ack_requests.pop_front();
}

void StreamPublisher::Impl::pop_front(std::size_t count) {
    for (; count > 0; --count) {
        PendingMessage& front = window.front();
        if (front.counted) window_bytes -= front.message.body.size();
        ++stats.messages_confirmed;
        // Keep small messages' buffers for reuse; let big ones go.
        if (spare.size() < 256 && front.message.body.capacity() <= (std::size_t{64} << 10)) {
            front.message.clear();
            spare.push_back(std::move(front.message));
        }
        window.pop_front();
    }
}

}  // namespace evring::nats
