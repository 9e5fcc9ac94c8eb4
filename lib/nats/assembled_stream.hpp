// The stream side of relay --assemble (assembled_relay.hpp): where a stream
// of assembled instances ends, and publishing one instance. Private to lib/nats.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "connection_impl.hpp"

namespace evring::nats::detail {

// What the stream already holds of `span`: the newest label and the names
// (message ids) of that label's instances in it.
struct AssembledTail {
    bool any = false;  // false: nothing of the span yet
    std::uint64_t label = 0;
    std::set<std::string> names;

    // An instance the stream has already: a lower label, or one of the newest label's names.
    bool holds(std::uint64_t instance_label, const std::string& name) const {
        return any && (instance_label < label || (instance_label == label && names.contains(name)));
    }
};

// How far back from the stream's end the tail is looked for: messages
// without an id of the span (another client's) are passed over.
inline constexpr std::uint64_t kAssembledTailScan = 256;

Result<AssembledTail> read_assembled_tail(const Connection::Impl& connection, const StreamInfo& info,
                                          std::string_view span);

// The label in a message id "SPAN:LABEL:ID:STATE", when it is one of `span`.
std::optional<std::uint64_t> label_of_name(std::string_view name, std::string_view span);

enum class Published : std::uint8_t { Stored, Duplicate, Stopped };

// Publishes `body` on `subject` with Nats-Msg-Id `name`, asking again while
// the server does not answer (the id keeps a repeat out of the stream) until
// `stop` is set; any other refusal is an error.
Result<Published> publish_assembled(const Connection::Impl& connection, const std::string& subject,
                                    const std::string& name, const std::string& body,
                                    const std::atomic<bool>* stop);

}  // namespace evring::nats::detail
