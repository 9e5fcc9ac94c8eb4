// Private to lib/: the parsed form of a filter expression (where.hpp), made by
// where_parse.cpp and compiled against a schema by where.cpp.
//
// Thread safety: plain values.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"
#include "schema/schema_field_path.hpp"

namespace evring::detail {

using U256 = std::array<std::uint64_t, 4>;  // little-endian limbs
__extension__ using Int128 = __int128;          // GCC and Clang on x86-64
__extension__ using UInt128 = unsigned __int128;

struct WhereLiteral {
    enum class Kind : std::uint8_t { Number, String, Name };
    Kind kind = Kind::Number;
    bool negative = false;          // Number: a leading '-'
    bool fits = true;               // Number: below 2^256
    U256 number{};                  // Number: the magnitude
    bool is_hex = false;            // Number written 0x...
    bool fraction = false;          // Number written with a fraction (123.5): only for floating fields
    double real = 0;                // Number: its value as a double (sign included)
    std::vector<std::uint8_t> bytes;  // 0x with whole bytes, or a String's bytes
    std::string name;               // Name; also the text as written
    std::size_t at = 0;             // 1-based column
};

// A step of an operand's field path: the one walk's (schema_field_path.hpp).
using WherePathStep = FieldPathStep;

enum class WhereOp : std::uint8_t { Eq, Ne, Lt, Le, Gt, Ge, In, Prefix, Truth };

struct WhereNode {
    enum class Kind : std::uint8_t { And, Or, Not, Test };
    Kind kind = Kind::Test;
    std::unique_ptr<WhereNode> a, b;
    // Test:
    std::vector<WherePathStep> path;  // the operand
    std::string operand;              // as written
    std::size_t at = 0;
    WhereOp op = WhereOp::Truth;
    std::vector<WhereLiteral> literals;
};

// "bad --where 'EXPR': at COLUMN: reason" (EXPR shortened when long).
Error where_error(std::string_view option, std::string_view text, std::size_t at, std::string_view reason);

Result<std::unique_ptr<WhereNode>> parse_where(std::string_view text, std::string_view option);

}  // namespace evring::detail
