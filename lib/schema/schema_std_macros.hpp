// lib/schema/schema_std_macros.hpp — names a generated header must not use as they
// are, because the C or C++ standard library defines them as macros
// (private to the code generator and the schema lint).
#pragma once

#include <string_view>

namespace evring::detail {

bool is_standard_macro(std::string_view name) noexcept;
// For the test that keeps the table sorted (it is binary-searched).
bool standard_macros_are_sorted() noexcept;

}  // namespace evring::detail
