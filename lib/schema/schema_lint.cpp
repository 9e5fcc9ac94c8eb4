// What `evring schema check` warns about (schema_lint.hpp).
#include <fmt/format.h>

#include "evring/format.hpp"
#include "schema/schema_lint.hpp"
#include "schema/schema_std_macros.hpp"

namespace evring {

namespace {

void reserved_numbers(const Schema& schema, std::vector<std::string>& out) {
    if (!schema.describes().empty()) return;  // it describes another implementation's rings
    const std::uint16_t type = schema.content_type();
    if (type == static_cast<std::uint16_t>(ContentType::Test))
        out.push_back("content type 1 is reserved for tests and examples; an application's own type keeps its "
                      "rings apart from them");
    else if (type == static_cast<std::uint16_t>(ContentType::Execution))
        out.push_back("content type 2 is the execution events of the reference system (built-in schemas "
                      "monad-exec-v1 and monad-exec-old); readers will take this ring for one of those");
    else if (type == static_cast<std::uint16_t>(ContentType::Performance))
        out.push_back("content type 3 is reserved (performance events)");
    const SchemaEvent* first = schema.event(kRecordErrorEventType);
    if (first != nullptr && first->name != "RECORD_ERROR")
        out.push_back(fmt::format("event type 1 is '{}', but every ring evring writes uses 1 for RECORD_ERROR "
                                  "(recorded in place of an event too large for the ring)",
                                  first->name));
}

void macro_names(const Schema& schema, std::vector<std::string>& out) {
    auto check = [&out](const std::string& name, const std::string& what) {
        if (detail::is_standard_macro(name))
            out.push_back(fmt::format("{} '{}' is a macro of the C/C++ standard library; a generated header "
                                      "names it '{}_'",
                                      what, name, name));
    };
    if (detail::is_standard_macro(schema.content_name()))
        out.push_back(fmt::format("content_name '{}' is a macro of the C/C++ standard library, so it cannot be "
                                  "a generated header's namespace: give `schema compile` a --namespace",
                                  schema.content_name()));
    for (const auto& e : schema.events()) check(e.name, "event");
    for (const auto& e : schema.enums()) {
        check(e.name, "enum");
        for (const auto& v : e.values) check(v.name, fmt::format("enum {} value", e.name));
    }
    for (const auto& s : schema.structs()) {
        check(s.name, "struct");
        for (const auto& f : s.fields) check(f.name, fmt::format("field {}", s.name));
        for (const auto& t : s.trailing) check(t.name, fmt::format("field {}", s.name));
    }
    for (const auto& tag : schema.flow_tags())
        if (!tag.empty()) check(tag, "flow tag");
}

}  // namespace

std::vector<std::string> schema_warnings(const Schema& schema) {
    std::vector<std::string> out;
    reserved_numbers(schema, out);
    macro_names(schema, out);
    return out;
}

}  // namespace evring
