// C names for generated C headers (schema_codegen_c_names.hpp).
#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "codegen/schema_codegen_c_names.hpp"
#include "codegen/schema_codegen_names.hpp"
#include "schema/schema_data.hpp"

namespace evring::detail {

namespace {

// C's keywords that C++ lacks (C11 and C23; C++'s are escaped by CppNames::member).
constexpr std::string_view kCOnlyKeywords[] = {
    "_Alignas", "_Alignof", "_Atomic", "_BitInt", "_Bool", "_Complex", "_Decimal128", "_Decimal32",
    "_Decimal64", "_Generic", "_Imaginary", "_Noreturn", "_Static_assert", "_Thread_local", "restrict",
    "typeof", "typeof_unqual"};

// The names the header defines besides the schema's, after the prefix.
constexpr std::string_view kOwnLower[] = {"schema_text", "schema_hash", "writer_options", "event_name", "event_type"};
constexpr std::string_view kOwnUpper[] = {"CONTENT_TYPE", "CONTENT_NAME", "PAYLOAD_ALIGNMENT", "SCHEMA_HASH_HEX",
                                          "SCHEMA_H"};

std::string_view scalar_c(Scalar s) {
    static constexpr std::string_view names[] = {"uint8_t", "uint16_t", "uint32_t", "uint64_t", "int8_t",
                                                 "int16_t", "int32_t",  "int64_t",  "float",    "double",
                                                 "bool",    "evring_u128", "evring_u256"};
    return names[static_cast<std::size_t>(s)];
}

std::string lower_case(std::string_view name) {
    std::string out(name);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

}  // namespace

std::string CNames::member(std::string_view name) {
    std::string out = CppNames::member(name);
    if (out == name && std::find(std::begin(kCOnlyKeywords), std::end(kCOnlyKeywords), name) != std::end(kCOnlyKeywords))
        out += '_';
    return out;
}

std::string CNames::upper_case(std::string_view name) {
    std::string out(name);
    for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

Result<CNames> CNames::make(const Schema& schema, const std::string& prefix) {
    if (!is_identifier(prefix) || member(prefix) != prefix)
        return Error(0, fmt::format("'{}' is not a C name to start the header's names with (a C keyword or a "
                                    "standard library macro is not one either); give another with --namespace",
                                    CppNames::comment_text(prefix)));
    CNames names(schema);
    names.prefix_ = prefix;
    names.upper_ = upper_case(prefix);
    std::map<std::string, std::string> taken;  // C name -> what it names
    auto claim = [&taken](const std::string& c, const std::string& what) -> Status {
        if (auto [it, fresh] = taken.emplace(c, what); !fresh)
            return Error(0, fmt::format("{} and {} would both be named {} in C", what, it->second, c));
        return {};
    };
    for (auto own : kOwnLower) taken.emplace(fmt::format("{}_{}", prefix, own), "the generated header");
    for (auto own : kOwnUpper) taken.emplace(fmt::format("{}_{}", names.upper_, own), "the generated header");
    for (std::uint32_t i = 0; i < schema.enums().size(); ++i) {
        const SchemaEnum& e = schema.enums()[i];
        names.enums_.push_back(fmt::format("{}_{}", prefix, e.name));
        if (auto s = claim(names.enums_.back(), "enum '" + e.name + "'"); !s) return std::move(s).error();
        names.enumerators_.emplace_back();
        for (const auto& v : e.values) {
            names.enumerators_.back().push_back(upper_case(fmt::format("{}_{}_{}", prefix, e.name, v.name)));
            if (auto s = claim(names.enumerators_.back().back(), fmt::format("value {} of enum '{}'", v.name, e.name)); !s)
                return std::move(s).error();
        }
    }
    for (const auto& s : schema.structs()) {
        names.structs_.push_back(fmt::format("{}_{}", prefix, s.name));
        if (auto r = claim(names.structs_.back(), "struct '" + s.name + "'"); !r) return std::move(r).error();
    }
    for (const auto& e : schema.events()) {
        const std::string constant = upper_case(fmt::format("{}_{}", prefix, e.name));
        const std::string helper = fmt::format("{}_record_{}", prefix, lower_case(e.name));
        if (auto s = claim(constant, "event '" + e.name + "'"); !s) return std::move(s).error();
        if (auto s = claim(helper, "the helper of event '" + e.name + "'"); !s) return std::move(s).error();
        names.events_[e.number] = constant;
        names.helpers_[e.number] = helper;
    }
    for (std::size_t i = 0; i < 4; ++i) {
        const std::string& tag = schema.flow_tags()[i];
        if (tag.empty()) continue;
        names.flow_[i] = upper_case(fmt::format("{}_flow_{}", prefix, tag));
        if (auto s = claim(names.flow_[i], "flow tag '" + tag + "'"); !s) return std::move(s).error();
    }
    return names;
}

std::string CNames::declare(TypeId id, const std::string& declarator) const {
    const SchemaType& t = schema_->type(id);
    switch (t.kind) {
    case TypeKind::Scalar: return fmt::format("{} {}", scalar_c(t.scalar), declarator);
    case TypeKind::Bytes: return fmt::format("uint8_t {}[{}]", declarator, t.count);
    case TypeKind::String: return fmt::format("char {}[{}]", declarator, t.count);
    case TypeKind::Enum: return fmt::format("{} {}", enums_[t.index], declarator);
    case TypeKind::Struct: return fmt::format("{} {}", structs_[t.index], declarator);
    case TypeKind::Array: return declare(t.element, fmt::format("{}[{}]", declarator, t.count));
    }
    return {};
}

}  // namespace evring::detail
