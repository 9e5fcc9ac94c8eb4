// lib/codegen/schema_codegen_names.hpp — C++ names for a schema's types, fields and
// events in a generated header (private to schema_codegen*.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"
#include "evring/schema/schema.hpp"

namespace evring::detail {

class CppNames {
public:
    // Fails when two names collide once spelled for C++.
    static Result<CppNames> make(const Schema& schema);

    const std::string& struct_name(std::uint32_t index) const { return structs_[index]; }
    const std::string& enum_name(std::uint32_t index) const { return enums_[index]; }
    const std::string& flow_member(std::size_t slot) const { return flow_[slot]; }
    // The C++ spelling of a type ("std::uint64_t", "std::array<std::uint8_t, 20>", "BlockTag").
    std::string type(TypeId id) const;
    // The element type of a trailing array.
    std::string element_type(const SchemaTrailing& t) const;
    // A field, enumerator or parameter name that is not a C++ keyword or a
    // macro of the standard library (schema_std_macros.hpp): those get a trailing '_'.
    static std::string member(std::string_view name);
    // "publish_" + the event name in lower case.
    static std::string helper(std::string_view event_name);
    // Text that is safe in a // comment: control characters (a newline would
    // end the comment and inject code, a NUL is dropped by the compiler) as
    // \xNN, and a backslash that ends the text (it would splice the next
    // line into the comment) followed by a '.'.
    static std::string comment_text(std::string_view text);

private:
    explicit CppNames(const Schema& schema) : schema_(&schema) {}
    const Schema* schema_;
    std::vector<std::string> structs_;
    std::vector<std::string> enums_;
    std::array<std::string, 4> flow_;
};

std::string camel_case(std::string_view snake);

// Appends the publish_<event> helpers (schema_codegen_publish.cpp).
void append_publish_helpers(std::string& out, const Schema& schema, const CppNames& names);
// Appends check_payload_size and publish_checked (schema_codegen_check.cpp).
void append_payload_checks(std::string& out, const Schema& schema);
// Appends unpack, read and view (schema_codegen_read.cpp).
void append_typed_reads(std::string& out);

}  // namespace evring::detail
