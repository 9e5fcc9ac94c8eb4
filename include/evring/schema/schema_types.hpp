// evring/schema/schema_types.hpp — the C++ types of u128 and u256 fields in generated headers.
//
// `evring schema compile` maps schema types to C++ as follows: u8..u64 and
// i8..i64 to std::uintN_t / std::intN_t, f32/f64 to float/double, bool to
// bool, bytesN/address to std::array<std::uint8_t, N>, T[N] to
// std::array<T, N>, enums to `enum class` with the same underlying type, and
// u128/u256 to the two structs below. They have exactly the layout of the
// schema types (u128: 16 bytes aligned to 16, like unsigned __int128; u256:
// four 64-bit limbs, least significant first, aligned to 8), and they are
// plain structs so the generated headers compile without GNU extensions.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>

namespace evring {

struct alignas(16) Uint128 {
    std::uint64_t limbs[2];  // least significant first

    static constexpr Uint128 from(std::uint64_t value) noexcept { return {{value, 0}}; }
    friend constexpr bool operator==(const Uint128&, const Uint128&) = default;
};
static_assert(sizeof(Uint128) == 16 && alignof(Uint128) == 16);

struct Uint256 {
    std::uint64_t limbs[4];  // least significant first

    static constexpr Uint256 from(std::uint64_t value) noexcept { return {{value, 0, 0, 0}}; }
    friend constexpr bool operator==(const Uint256&, const Uint256&) = default;
};
static_assert(sizeof(Uint256) == 32 && alignof(Uint256) == 8);

}  // namespace evring
