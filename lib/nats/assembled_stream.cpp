// The stream side of relay --assemble (assembled_stream.hpp).
#include "assembled_stream.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <thread>

namespace evring::nats::detail {

std::optional<std::uint64_t> label_of_name(std::string_view name, std::string_view span) {
    if (name.size() <= span.size() + 1 || !name.starts_with(span) || name[span.size()] != ':') return std::nullopt;
    const std::string_view rest = name.substr(span.size() + 1);
    std::uint64_t label = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), label);
    if (ec != std::errc() || end == rest.data() || end == rest.data() + rest.size() || *end != ':')
        return std::nullopt;
    return label;
}

Result<AssembledTail> read_assembled_tail(const Connection::Impl& connection, const StreamInfo& info,
                                          std::string_view span) {
    AssembledTail tail;
    if (info.messages == 0) return tail;
    const std::uint64_t first = std::max<std::uint64_t>(info.first_sequence, 1);
    std::uint64_t passed = 0;  // messages without an id of the span
    for (std::uint64_t at = info.last_sequence; at >= first && passed < kAssembledTailScan; --at) {
        auto message = get_message(connection, info.name, at);
        if (!message) {
            if (message.error().errno_value() == ENOENT) continue;  // deleted
            return std::move(message).error().context("reading where the stream of assembled instances ends");
        }
        const char* id = nullptr;
        const bool has = natsMsgHeader_Get(message->get(), "Nats-Msg-Id", &id) == NATS_OK && id != nullptr;
        const auto label = has ? label_of_name(id, span) : std::nullopt;
        if (!label) {
            ++passed;
            continue;
        }
        if (tail.any && *label != tail.label) break;  // past the newest label: done
        tail.any = true;
        tail.label = *label;
        tail.names.emplace(id);
    }
    return tail;
}

namespace {

// Failures that pass: the server is away or busy, and libnats reconnects.
bool passing(natsStatus s) {
    return s == NATS_TIMEOUT || s == NATS_NO_RESPONDERS || s == NATS_CONNECTION_DISCONNECTED || s == NATS_IO_ERROR;
}

bool stopped(const std::atomic<bool>* stop) { return stop != nullptr && stop->load(std::memory_order_relaxed); }

}  // namespace

Result<Published> publish_assembled(const Connection::Impl& connection, const std::string& subject,
                                    const std::string& name, const std::string& body,
                                    const std::atomic<bool>* stop) {
    jsPubOptions options;
    jsPubOptions_Init(&options);
    options.MsgId = name.c_str();
    auto wait = std::chrono::milliseconds(100);
    while (!stopped(stop)) {
        jsPubAck* ack = nullptr;
        jsErrCode code = static_cast<jsErrCode>(0);
        const natsStatus s = js_Publish(&ack, connection.jetstream, subject.c_str(), body.data(),
                                        static_cast<int>(body.size()), &options, &code);
        if (s == NATS_OK) {
            const bool duplicate = ack != nullptr && ack->Duplicate;
            jsPubAck_Destroy(ack);
            return duplicate ? Published::Duplicate : Published::Stored;
        }
        if (!passing(s))
            return nats_error(s, fmt::format("publishing {} ({} bytes) on {}", name, body.size(), connection.where()),
                              code);
        // Asked again with the same id: a message the server stored but did not confirm is not stored twice.
        std::this_thread::sleep_for(wait);
        wait = std::min(wait * 2, std::chrono::milliseconds(2000));
    }
    return Published::Stopped;
}

}  // namespace evring::nats::detail
