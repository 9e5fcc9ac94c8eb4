// The events the producer and consumer examples exchange: a made-up market
// feed. Both sides include this header; the schema hash below stands for
// "this exact payload layout and numbering" and changes whenever they change.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace demo {

inline constexpr std::uint16_t kContentType = 0x4445;  // "DE": demo events, not a standard type
inline constexpr std::array<std::uint8_t, 32> kSchemaHash = {
    0x64, 0x65, 0x6d, 0x6f, 0x2d, 0x66, 0x65, 0x65, 0x64, 0x2d, 0x76, 0x31, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01};

// Event types.
inline constexpr std::uint16_t kQuote = 2;
inline constexpr std::uint16_t kTrade = 3;

// Flow tags (content_ext indices).
inline constexpr std::size_t kFlowSymbol = 0;  // symbol index + 1
inline constexpr std::size_t kFlowVenue = 1;   // venue number

inline constexpr std::array<std::string_view, 4> kSymbols = {"ACME", "GLOBEX", "INITECH", "UMBRELLA"};

// Payload of both event types; the symbol's name follows it.
struct Tick {
    std::uint64_t counter;   // per-producer event number
    std::int64_t price;      // in 1e-4 units
    std::uint32_t quantity;
    std::uint32_t name_length;
    std::uint64_t checksum;  // of the fields above and the name
};

inline std::uint64_t tick_checksum(const Tick& t, std::string_view name) {
    std::uint64_t h = 1469598103934665603ull;
    auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 1099511628211ull; };
    mix(t.counter);
    mix(static_cast<std::uint64_t>(t.price));
    mix(t.quantity);
    mix(t.name_length);
    for (char c : name) mix(static_cast<unsigned char>(c));
    return h;
}

}  // namespace demo
