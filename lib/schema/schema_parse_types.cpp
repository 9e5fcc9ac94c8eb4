// Types and enums of a schema being parsed (struct layouts: schema_parse_structs.cpp).
#include <algorithm>
#include <charconv>
#include <limits>

#include <fmt/format.h>

#include "schema/schema_parse_types.hpp"

namespace evring::detail {

namespace {

constexpr Scalar kScalars[] = {Scalar::U8,  Scalar::U16, Scalar::U32, Scalar::U64,  Scalar::I8,
                               Scalar::I16, Scalar::I32, Scalar::I64, Scalar::F32,  Scalar::F64,
                               Scalar::Bool, Scalar::U128, Scalar::U256};

std::optional<Scalar> scalar_named(std::string_view name) {
    for (Scalar s : kScalars)
        if (scalar_name(s) == name) return s;
    return std::nullopt;
}

std::uint32_t scalar_align(Scalar s) { return s == Scalar::U256 ? 8 : scalar_size(s); }

bool all_digits(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Parses decimal digits; nullopt when the value exceeds 64 bits.
std::optional<std::uint64_t> decimal(std::string_view digits) {
    std::uint64_t value = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
    return value;
}

bool is_builtin_type_name(std::string_view name) {
    if (scalar_named(name) || name == "address" || name == "bytes" || name == "char") return true;
    return name.size() > 5 && name.substr(0, 5) == "bytes" && all_digits(name.substr(5));
}

bool is_integer_scalar(Scalar s) { return s <= Scalar::I64; }

bool is_path(std::string_view text) {
    while (true) {
        const std::size_t dot = text.find('.');
        if (!is_identifier(text.substr(0, dot))) return false;
        if (dot == std::string_view::npos) return true;
        text.remove_prefix(dot + 1);
    }
}

}  // namespace

void TypeBuilder::add_enums(const toml::table& enums) {
    for (auto&& [key, node] : enums) {
        std::string name = ctx_.identifier_key(key, "enum name");
        if (is_builtin_type_name(name)) ctx_.fail(key.source(), fmt::format("'{}' is a built-in type", name));
        const std::string what = fmt::format("enum '{}'", name);
        const toml::table& table = ctx_.as_table(node, what);
        ctx_.check_keys(table, {"type", "values", "description"}, what);
        SchemaEnum e;
        e.name = name;
        e.doc = ctx_.optional_text(table, "description", "description");
        const toml::node& type_node = ctx_.required(table, "type", what);
        const std::string type = ctx_.string(type_node, "an enum's type");
        const auto scalar = scalar_named(type);
        if (!scalar || !is_integer_scalar(*scalar))
            ctx_.fail(type_node, fmt::format("{} has type '{}'; an enum's type is u8..u64 or i8..i64", what, type));
        e.underlying = *scalar;
        // TOML integers are 64-bit signed, so u64 values stop at 2^63-1.
        const unsigned bits = scalar_size(*scalar) * 8;
        const bool is_signed = e.is_signed();
        std::int64_t min = 0, max = std::numeric_limits<std::int64_t>::max();
        if (is_signed && bits < 64) {
            max = (std::int64_t{1} << (bits - 1)) - 1;
            min = -max - 1;
        } else if (is_signed) {
            min = std::numeric_limits<std::int64_t>::min();
        } else if (bits < 64) {
            max = (std::int64_t{1} << bits) - 1;
        }
        const toml::table& values = ctx_.as_table(ctx_.required(table, "values", what), "an enum's values");
        if (values.empty()) ctx_.fail(table, fmt::format("{} has no values", what));
        std::map<std::int64_t, std::string> seen;
        for (auto&& [value_key, value_node] : values) {
            std::string value_name = ctx_.identifier_key(value_key, "enum value name");
            const std::int64_t v = ctx_.integer_in(value_node, fmt::format("value of {}", value_name), min, max);
            if (auto [it, fresh] = seen.emplace(v, value_name); !fresh)
                ctx_.fail(value_node, fmt::format("duplicate value {} in {} ({} and {})", v, what, it->second,
                                                  value_name));
            e.values.push_back({std::move(value_name), static_cast<std::uint64_t>(v)});
        }
        if (auto [it, fresh] = type_names_.emplace(name, &node); !fresh)
            ctx_.fail(key.source(), fmt::format("duplicate type name '{}'", name));
        data_.enums.push_back(std::move(e));
    }
}

void TypeBuilder::declare_struct(StructDecl decl) {
    if (is_builtin_type_name(decl.name))
        ctx_.fail(*decl.where, fmt::format("'{}' is a built-in type", decl.name));
    if (auto it = type_names_.find(decl.name); it != type_names_.end())
        ctx_.fail(*decl.where, fmt::format("duplicate type name '{}' (also at {})", decl.name, ctx_.line_of(*it->second)));
    type_names_.emplace(decl.name, decl.where);
    decls_.push_back(std::move(decl));
}

std::optional<std::uint32_t> TypeBuilder::struct_index(std::string_view name) const {
    for (std::size_t i = 0; i < decls_.size(); ++i)
        if (decls_[i].name == name) return static_cast<std::uint32_t>(i);
    return std::nullopt;
}

void TypeBuilder::build_structs() {
    std::sort(decls_.begin(), decls_.end(), [](const StructDecl& a, const StructDecl& b) { return a.name < b.name; });
    data_.structs.assign(decls_.size(), SchemaStruct{});
    nesting_.assign(decls_.size(), 0);
    for (std::uint32_t i = 0; i < decls_.size(); ++i) build(i, 0);
}

TypeBuilder::TypeExpr TypeBuilder::parse_type_expr(const toml::node& node) const {
    const std::string text = ctx_.string(node, "a type");
    TypeExpr expr;
    const std::size_t open = text.find('[');
    expr.base = text.substr(0, open);
    if (!is_identifier(expr.base)) ctx_.fail(node, fmt::format("'{}' is not a type", text));
    if (open == std::string::npos) return expr;
    if (text.back() != ']' || text.find('[', open + 1) != std::string::npos)
        ctx_.fail(node, fmt::format("'{}' is not a type (arrays are T[N] or T[count_field]; for arrays of "
                                    "arrays, use a struct)", text));
    const std::string inner = text.substr(open + 1, text.size() - open - 2);
    if (all_digits(inner)) {
        const auto count = decimal(inner);
        if (!count || *count > kMaxSize)
            ctx_.fail(node, fmt::format("array length {} in '{}' is over 2^32-1", inner, text));
        if (*count == 0) ctx_.fail(node, fmt::format("array length 0 in '{}'", text));
        expr.suffix = TypeExpr::Suffix::Fixed;
        expr.count = *count;
    } else if (is_path(inner)) {
        expr.suffix = TypeExpr::Suffix::Count;
        expr.path = inner;
    } else {
        ctx_.fail(node, fmt::format("'{}' is not a type (the length must be a number or a field name)", text));
    }
    return expr;
}

TypeId TypeBuilder::intern(const SchemaType& t) {
    const auto key = std::make_tuple(static_cast<int>(t.kind), static_cast<int>(t.scalar), t.count, t.element, t.index);
    if (auto it = interned_.find(key); it != interned_.end()) return it->second;
    const auto id = static_cast<TypeId>(data_.types.size());
    data_.types.push_back(t);
    interned_.emplace(key, id);
    return id;
}

TypeId TypeBuilder::scalar_type(Scalar scalar) {
    SchemaType t;
    t.kind = TypeKind::Scalar;
    t.scalar = scalar;
    t.size = scalar_size(scalar);
    t.align = scalar_align(scalar);
    return intern(t);
}

TypeId TypeBuilder::bytes_type(const toml::node& where, std::uint64_t count) {
    if (count == 0 || count > kMaxSize) ctx_.fail(where, fmt::format("byte array length {} is not in 1..2^32-1", count));
    SchemaType t;
    t.kind = TypeKind::Bytes;
    t.size = static_cast<std::uint32_t>(count);
    t.count = t.size;
    return intern(t);
}

TypeId TypeBuilder::string_type(const toml::node& where, std::uint64_t length) {
    if (length == 0 || length > kMaxSize) ctx_.fail(where, fmt::format("string length {} is not in 1..2^32-1", length));
    SchemaType t;
    t.kind = TypeKind::String;
    t.size = static_cast<std::uint32_t>(length);
    t.count = t.size;
    return intern(t);
}

TypeId TypeBuilder::base_type(const toml::node& where, std::string_view base, int depth) {
    if (auto s = scalar_named(base)) return scalar_type(*s);
    if (base == "char") ctx_.fail(where, "'char' needs a length: char[N] is a NUL-padded string of N bytes");
    if (base == "address") return bytes_type(where, 20);
    if (base == "bytes") ctx_.fail(where, "'bytes' needs a length: bytesN, bytes[N] or bytes[count_field]");
    if (base.size() > 5 && base.substr(0, 5) == "bytes" && all_digits(base.substr(5))) {
        const auto count = decimal(base.substr(5));
        return bytes_type(where, count ? *count : kMaxSize + 1);
    }
    for (std::uint32_t i = 0; i < data_.enums.size(); ++i) {
        const SchemaEnum& e = data_.enums[i];
        if (e.name != base) continue;
        SchemaType t;
        t.kind = TypeKind::Enum;
        t.scalar = e.underlying;
        t.size = scalar_size(e.underlying);
        t.align = t.size;
        t.index = i;
        return intern(t);
    }
    if (auto index = struct_index(base)) {
        const StructDecl& decl = decls_[*index];
        if (decl.state == StructDecl::State::InProgress)
            ctx_.fail(where, fmt::format("struct '{}' contains itself", base));
        if (depth >= kMaxStructDepth)
            ctx_.fail(where, fmt::format("structs are nested more than {} levels deep", kMaxStructDepth));
        build(*index, depth + 1);
        const SchemaStruct& s = data_.structs[*index];
        if (!s.trailing.empty())
            ctx_.fail(where, fmt::format("struct '{}' has trailing arrays, so it can only be an event's payload, "
                                         "not a field or an array element", base));
        SchemaType t;
        t.kind = TypeKind::Struct;
        t.size = s.size;
        t.align = s.align;
        t.index = *index;
        return intern(t);
    }
    ctx_.fail(where, fmt::format("unknown type '{}'", base));
}

TypeId TypeBuilder::fixed_type(const toml::node& where, const TypeExpr& expr, int depth) {
    if (expr.suffix == TypeExpr::Suffix::None) return base_type(where, expr.base, depth);
    if (expr.base == "bytes") return bytes_type(where, expr.count);
    if (expr.base == "char") return string_type(where, expr.count);
    const TypeId element = base_type(where, expr.base, depth);
    const SchemaType& e = data_.types[element];
    if (expr.count * e.size > kMaxSize)
        ctx_.fail(where, fmt::format("array of {} x {} bytes is over 2^32-1 bytes", expr.count, e.size));
    SchemaType t;
    t.kind = TypeKind::Array;
    t.element = element;
    t.count = static_cast<std::uint32_t>(expr.count);
    t.size = static_cast<std::uint32_t>(expr.count * e.size);
    t.align = e.align;
    return intern(t);
}

}  // namespace evring::detail
