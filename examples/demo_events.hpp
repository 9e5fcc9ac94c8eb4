// The events the producer and consumer examples exchange: a made-up market
// feed described by schemas/demo.toml. The build generates demo_schema.hpp
// from that file (examples/meson.build, the snippet of docs/schema.md): the
// payload struct demo::Tick with its layout checked, the content type, the
// schema hash, the embedded schema (ring_content()) and the typed helpers
// publish_quote / publish_trade. This header adds what a schema does not say:
// the symbols' names and the checksum the consumer verifies.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "demo_schema.hpp"

namespace demo {

// Event types, as numbers (the schema's EventType).
inline constexpr std::uint16_t kQuote = static_cast<std::uint16_t>(EventType::QUOTE);
inline constexpr std::uint16_t kTrade = static_cast<std::uint16_t>(EventType::TRADE);

// Flow tags (content_ext indices; the schema names them symbol and venue).
inline constexpr std::size_t kFlowSymbol = 0;  // symbol index + 1
inline constexpr std::size_t kFlowVenue = 1;   // venue number

inline constexpr std::array<std::string_view, 4> kSymbols = {"ACME", "GLOBEX", "INITECH", "UMBRELLA"};

// Tick::name, a char[16] (NUL-padded), from a symbol's name and back.
inline void set_name(Tick& t, std::string_view name) noexcept {
    t.name = {};
    for (std::size_t i = 0; i < name.size() && i < t.name.size(); ++i) t.name[i] = name[i];
}
inline std::string_view name_of(const Tick& t) noexcept {
    std::size_t n = 0;
    while (n < t.name.size() && t.name[n] != '\0') ++n;
    return {t.name.data(), n};
}

// Tick::checksum: of the fields before it and the name.
inline std::uint64_t tick_checksum(const Tick& t) {
    std::uint64_t h = 1469598103934665603ull;
    auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 1099511628211ull; };
    mix(t.counter);
    mix(static_cast<std::uint64_t>(t.price));
    mix(t.quantity);
    for (char c : name_of(t)) mix(static_cast<unsigned char>(c));
    return h;
}

}  // namespace demo
