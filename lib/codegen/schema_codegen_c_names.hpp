// lib/codegen/schema_codegen_c_names.hpp — C names for a schema's types,
// constants, fields and helpers in a generated C header (private to
// schema_codegen_c*.cpp).
//
// C has one namespace for every type, function and constant a header
// declares, so each gets the header's prefix: `orders_fill` (types and
// functions), `ORDERS_FILL` (event types), `ORDERS_SIDE_BUY` (enumerators).
// Struct members only have to avoid keywords and the standard library's
// macros. Two schema names that end up spelled alike are refused, never
// renamed silently.
#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"
#include "evring/schema/schema.hpp"

namespace evring::detail {

class CNames {
public:
    // Fails when `prefix` is not a C identifier, or two names collide.
    static Result<CNames> make(const Schema& schema, const std::string& prefix);

    const std::string& prefix() const { return prefix_; }        // "orders"
    const std::string& upper() const { return upper_; }          // "ORDERS"
    const std::string& struct_name(std::uint32_t i) const { return structs_[i]; }
    const std::string& enum_name(std::uint32_t i) const { return enums_[i]; }
    const std::string& enumerator(std::uint32_t e, std::size_t v) const { return enumerators_[e][v]; }
    const std::string& event_constant(const SchemaEvent& e) const { return events_.at(e.number); }
    const std::string& helper(const SchemaEvent& e) const { return helpers_.at(e.number); }
    const std::string& flow_constant(std::size_t slot) const { return flow_[slot]; }  // empty: unnamed

    // A declaration of `declarator` with type `id`: "uint64_t gas", "uint8_t trader[20]",
    // "orders_level levels[4]"; with declarator "(*p)": a pointer to one.
    std::string declare(TypeId id, const std::string& declarator) const;
    // A struct member, enumerator suffix or parameter that is not a C or C++
    // keyword or a standard macro: those get a trailing '_'.
    static std::string member(std::string_view name);
    static std::string upper_case(std::string_view name);

private:
    explicit CNames(const Schema& schema) : schema_(&schema) {}
    const Schema* schema_;
    std::string prefix_, upper_;
    std::vector<std::string> structs_, enums_;
    std::vector<std::vector<std::string>> enumerators_;
    std::map<std::uint16_t, std::string> events_, helpers_;
    std::array<std::string, 4> flow_;
};

// Appends the typed write helpers (schema_codegen_c_write.cpp).
void append_c_write_helpers(std::string& out, const Schema& schema, const CNames& names);

}  // namespace evring::detail
