// Fuzz target: filter expressions (where.hpp). The input is an expression,
// optionally followed by a NUL byte, two bytes of event type and payload
// bytes. An expression is compiled against the built-in Monad schema; it must
// be refused with "bad --where '...': at N: reason", or compile and then
// evaluate over the payload (as that event type, and as every type with the
// payload cut short) without reading out of bounds.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "schema/schema_builtin.hpp"
#include "query/where.hpp"
#include "exercise.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const evring::Schema schema = evring::builtin_schema("monad-exec-v1").value();
    const void* nul = std::memchr(data, 0, size);
    const std::size_t text_size = nul ? static_cast<std::size_t>(static_cast<const std::uint8_t*>(nul) - data) : size;
    auto where = evring::compile_where(std::string_view(reinterpret_cast<const char*>(data), text_size), schema);
    if (!where) {
        const std::string& message = where.error().message();
        EVRING_FUZZ_CHECK(message.rfind("bad --where '", 0) == 0 && message.find("': at ") != std::string::npos);
        evring::fuzz::tally("where", &message);
        return 0;
    }
    evring::fuzz::tally("where", nullptr);
    const std::size_t rest = nul ? size - text_size - 1 : 0;
    const std::uint8_t* tail = data + (size - rest);
    evring::SourceEvent event;
    event.payload_state = evring::PayloadState::Ok;
    if (rest >= 2) std::memcpy(&event.descriptor.event_type, tail, 2);
    const auto* payload = reinterpret_cast<const std::byte*>(tail) + (rest >= 2 ? 2 : rest);
    const std::size_t payload_size = rest >= 2 ? rest - 2 : 0;
    for (std::size_t cut = 0; cut <= payload_size; cut += 1 + payload_size / 8) {
        event.payload = std::span<const std::byte>(payload, payload_size - cut);
        (void)(*where)->matches(event);
        for (std::uint16_t type = 0; type < 26; ++type) {
            event.descriptor.event_type = type;
            (void)(*where)->matches(event);
        }
    }
    return 0;
}
