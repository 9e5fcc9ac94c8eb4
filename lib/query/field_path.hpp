// lib/query/field_path.hpp — a payload field path written as text, parsed as
// filter expressions write it (NAME ('.' NAME | '[' INDEX ']')*), for the
// one walk of lib/schema/schema_field_path.hpp, which this brings in.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "evring/error.hpp"
#include "evring/schema/schema.hpp"
#include "query/where_ast.hpp"
#include "schema/schema_field_path.hpp"

namespace evring::detail {

// The steps of a path written as text; an Error ("bad OPTION 'TEXT': at N: reason")
// when it is not a path (an operator, a literal, an unclosed bracket).
Result<std::vector<WherePathStep>> parse_field_path(std::string_view text, std::string_view option);

}  // namespace evring::detail
