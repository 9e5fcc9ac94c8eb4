// C++ names for generated headers.
#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

#include "codegen/schema_codegen_names.hpp"
#include "schema/schema_std_macros.hpp"

namespace evring::detail {

namespace {

constexpr std::string_view kKeywords[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
    "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
    "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
    "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
    "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
    "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
    "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
    "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq"};

// Names the generated header defines itself.
constexpr std::string_view kReservedTypes[] = {"Flow", "EventType", "EventInfo", "PayloadCheck", "ReadStatus", "Unpacked",
                                               "PayloadView"};

std::string_view scalar_cpp(Scalar s) {
    static constexpr std::string_view names[] = {
        "std::uint8_t", "std::uint16_t", "std::uint32_t", "std::uint64_t", "std::int8_t", "std::int16_t",
        "std::int32_t", "std::int64_t", "float", "double", "bool", "evring::Uint128", "evring::Uint256"};
    return names[static_cast<std::size_t>(s)];
}

}  // namespace

std::string camel_case(std::string_view snake) {
    std::string out;
    bool upper = true;
    for (char c : snake) {
        if (c == '_') {
            upper = true;
            continue;
        }
        out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
        upper = false;
    }
    if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out.insert(0, "T");
    return out;
}

std::string CppNames::member(std::string_view name) {
    std::string out(name);
    if (std::find(std::begin(kKeywords), std::end(kKeywords), name) != std::end(kKeywords) ||
        is_standard_macro(name))
        out += '_';
    return out;
}

std::string CppNames::comment_text(std::string_view text) {
    std::string out;
    for (char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) out += fmt::format("\\x{:02x}", u);
        else out += c;
    }
    if (!out.empty() && out.back() == '\\') out += '.';
    return out;
}

// A type name (camel case) that is a standard macro (a struct 'EOF') gets a trailing '_'.
static std::string type_name_for(std::string_view schema_name) {
    std::string out = camel_case(schema_name);
    if (is_standard_macro(out)) out += '_';
    return out;
}

std::string CppNames::helper(std::string_view event_name) {
    std::string out = "publish_";
    for (char c : event_name) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

Result<CppNames> CppNames::make(const Schema& schema) {
    CppNames names(schema);
    std::map<std::string, std::string> taken;  // C++ name -> what it names
    for (auto reserved : kReservedTypes) taken.emplace(std::string(reserved), "the generated header");
    auto claim = [&taken](const std::string& cpp, const std::string& what) -> Status {
        if (auto [it, fresh] = taken.emplace(cpp, what); !fresh)
            return Error(0, fmt::format("{} and {} would both be named {} in C++", what, it->second, cpp));
        return {};
    };
    for (const auto& e : schema.enums()) {
        names.enums_.push_back(type_name_for(e.name));
        if (auto s = claim(names.enums_.back(), "enum '" + e.name + "'"); !s) return std::move(s).error();
    }
    for (const auto& s : schema.structs()) {
        names.structs_.push_back(type_name_for(s.name));
        if (auto r = claim(names.structs_.back(), "struct '" + s.name + "'"); !r) return std::move(r).error();
    }
    std::map<std::string, std::string> helpers;
    for (const auto& e : schema.events())
        if (auto [it, fresh] = helpers.emplace(helper(e.name), e.name); !fresh)
            return Error(0, fmt::format("events '{}' and '{}' would both get the helper {}", it->second, e.name,
                                        it->first));
    for (std::size_t i = 0; i < 4; ++i) {
        const std::string& tag = schema.flow_tags()[i];
        names.flow_[i] = tag.empty() ? fmt::format("ext{}", i) : member(tag);
    }
    for (std::size_t i = 0; i < 4; ++i)
        for (std::size_t j = i + 1; j < 4; ++j)
            if (names.flow_[i] == names.flow_[j])
                return Error(0, fmt::format("flow tags {} and {} would both be named {} in C++", i, j, names.flow_[i]));
    return names;
}

std::string CppNames::type(TypeId id) const {
    const SchemaType& t = schema_->type(id);
    switch (t.kind) {
    case TypeKind::Scalar: return std::string(scalar_cpp(t.scalar));
    case TypeKind::Bytes: return fmt::format("std::array<std::uint8_t, {}>", t.count);
    case TypeKind::Enum: return enums_[t.index];
    case TypeKind::Struct: return structs_[t.index];
    case TypeKind::Array: return fmt::format("std::array<{}, {}>", type(t.element), t.count);
    case TypeKind::String: return fmt::format("std::array<char, {}>", t.count);
    }
    return {};
}

std::string CppNames::element_type(const SchemaTrailing& t) const {
    return t.bytes || t.text ? std::string("std::uint8_t") : type(t.element);  // a string's bytes, as bytes[]
}

}  // namespace evring::detail
