// Types, enums and struct layouts of a schema being parsed.
#include <algorithm>
#include <charconv>
#include <limits>

#include <fmt/format.h>

#include "schema_parse_types.hpp"

namespace evring::detail {

namespace {

constexpr std::uint64_t kMaxSize = UINT32_MAX;
constexpr std::uint32_t kMaxAlign = 4096;

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
    if (scalar_named(name) || name == "address" || name == "bytes") return true;
    return name.size() > 5 && name.substr(0, 5) == "bytes" && all_digits(name.substr(5));
}

bool is_integer_scalar(Scalar s) { return s <= Scalar::I64; }
bool is_unsigned_integer(Scalar s) { return s <= Scalar::U64; }

bool is_path(std::string_view text) {
    while (true) {
        const std::size_t dot = text.find('.');
        if (!is_identifier(text.substr(0, dot))) return false;
        if (dot == std::string_view::npos) return true;
        text.remove_prefix(dot + 1);
    }
}

std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
    return (value + alignment - 1) / alignment * alignment;
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

TypeId TypeBuilder::base_type(const toml::node& where, std::string_view base, int depth) {
    if (auto s = scalar_named(base)) return scalar_type(*s);
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

std::optional<std::uint32_t> TypeBuilder::alignment_key(const toml::table& table, std::string_view what) const {
    const toml::node* node = table.get("align");
    if (node == nullptr) return std::nullopt;
    const std::int64_t a = ctx_.integer_in(*node, what, 1, kMaxAlign);
    if ((a & (a - 1)) != 0) ctx_.fail(*node, fmt::format("{} {} is not a power of two", what, a));
    return static_cast<std::uint32_t>(a);
}

void TypeBuilder::check_new_member(const SchemaStruct& out, const toml::node& where, const std::string& name) const {
    bool taken = out.field(name) != nullptr;
    for (const auto& t : out.trailing) taken = taken || t.name == name;
    if (taken) ctx_.fail(where, fmt::format("duplicate field name '{}' in struct '{}'", name, out.name));
}

int TypeBuilder::nesting_of(const SchemaStruct& s) const {
    int deepest = 0;
    auto visit = [&](TypeId id) {
        while (data_.types[id].kind == TypeKind::Array) id = data_.types[id].element;
        if (data_.types[id].kind == TypeKind::Struct) deepest = std::max(deepest, nesting_[data_.types[id].index]);
    };
    for (const auto& f : s.fields) visit(f.type);
    for (const auto& t : s.trailing) visit(t.element);
    return deepest + 1;
}

void TypeBuilder::build(std::uint32_t index, int depth) {
    StructDecl& decl = decls_[index];
    if (decl.state == StructDecl::State::Done) return;
    decl.state = StructDecl::State::InProgress;
    const std::string what = fmt::format("struct '{}'", decl.name);
    SchemaStruct out;
    out.name = decl.name;
    out.doc = decl.description;
    const toml::table& table = *decl.table;
    const toml::array& fields = ctx_.as_array(ctx_.required(table, "fields", what), "fields");
    if (fields.empty()) ctx_.fail(*decl.where, fmt::format("{} has no fields", what));
    std::uint64_t offset = 0;
    std::uint32_t align = alignment_key(table, "alignment of " + what).value_or(1);
    for (std::size_t i = 0; i < fields.size(); ++i) {
        const toml::table& field = ctx_.as_table(*fields.get(i), "a field");
        if (const toml::node* padding = field.get("padding")) {
            ctx_.check_keys(field, {"padding"}, "a padding entry");
            if (!out.trailing.empty()) ctx_.fail(field, "padding after a trailing array");
            offset += static_cast<std::uint64_t>(ctx_.integer_in(*padding, "padding", 1, kMaxSize));
            if (offset > kMaxSize) ctx_.fail(field, fmt::format("{} is larger than 2^32-1 bytes", what));
            continue;
        }
        ctx_.check_keys(field, {"name", "type", "doc", "offset", "size", "align"}, "a field");
        const TypeExpr expr = parse_type_expr(ctx_.required(field, "type", "a field"));
        if (expr.suffix == TypeExpr::Suffix::Count) {
            add_trailing(out, field, expr, fields, i, depth);
            continue;
        }
        if (!out.trailing.empty())
            ctx_.fail(field, fmt::format("a fixed field follows trailing array '{}' in {}; trailing arrays come last",
                                         out.trailing.back().name, what));
        add_field(out, field, offset, align, depth);
    }
    const std::uint64_t size = align_up(offset, align);
    if (size > kMaxSize) ctx_.fail(*decl.where, fmt::format("{} is larger than 2^32-1 bytes", what));
    if (const toml::node* pin = table.get("size")) {
        const std::int64_t pinned = ctx_.integer(*pin, "size of " + what);
        if (static_cast<std::uint64_t>(pinned) != size || pinned < 0)
            ctx_.fail(*pin, fmt::format("{} is {} bytes by C layout rules (fields end at {}, alignment {}), "
                                        "but pins size {}",
                                        what, size, offset, align, pinned));
    }
    out.size = static_cast<std::uint32_t>(size);
    out.align = align;
    nesting_[index] = nesting_of(out);
    if (nesting_[index] > kMaxStructDepth)
        ctx_.fail(*decl.where, fmt::format("{} nests structs more than {} levels deep", what, kMaxStructDepth));
    data_.structs[index] = std::move(out);
    decls_[index].state = StructDecl::State::Done;
}

void TypeBuilder::add_field(SchemaStruct& out, const toml::table& field, std::uint64_t& offset,
                            std::uint32_t& struct_align, int depth) {
    ctx_.check_keys(field, {"name", "type", "doc", "offset", "size", "align"}, "a field");
    const toml::node& name_node = ctx_.required(field, "name", "a field");
    SchemaField f;
    f.name = ctx_.identifier(name_node, "field name");
    check_new_member(out, name_node, f.name);
    f.doc = ctx_.optional_text(field, "doc", "doc");
    const toml::node& type_node = *field.get("type");
    f.type = fixed_type(type_node, parse_type_expr(type_node), depth);
    const SchemaType t = data_.types[f.type];
    std::uint32_t align = t.align;
    if (auto a = alignment_key(field, "alignment of field '" + f.name + "'")) {
        if (*a < t.align)
            ctx_.fail(*field.get("align"), fmt::format("field '{}' has alignment {} ({}); a smaller align {} would "
                                                       "make it packed, which C layout does not do",
                                                       f.name, t.align, ctx_.string(type_node, "type"), *a));
        align = *a;
    }
    const std::uint64_t natural = align_up(offset, align);
    if (const toml::node* pin = field.get("offset")) {
        const std::int64_t pinned = ctx_.integer(*pin, "offset");
        const std::string prev = out.fields.empty() ? std::string("the struct's start") : "field '" + out.fields.back().name + "'";
        if (pinned < 0 || static_cast<std::uint64_t>(pinned) < offset)
            ctx_.fail(*pin, fmt::format("field '{}' pins offset {}, overlapping {} which ends at {}", f.name,
                                        pinned, prev, offset));
        if (pinned % align != 0)
            ctx_.fail(*pin, fmt::format("field '{}' pins offset {}, which is misaligned: its alignment is {}", f.name,
                                        pinned, align));
        if (static_cast<std::uint64_t>(pinned) != natural)
            ctx_.fail(*pin, fmt::format("field '{}' pins offset {}, but C layout puts it at {} after {}; write "
                                        "{{ padding = {} }} before it if the gap is intended",
                                        f.name, pinned, natural, prev, static_cast<std::uint64_t>(pinned) - offset));
    }
    if (const toml::node* pin = field.get("size")) {
        const std::int64_t pinned = ctx_.integer(*pin, "size");
        if (pinned < 0 || static_cast<std::uint64_t>(pinned) != t.size)
            ctx_.fail(*pin, fmt::format("field '{}' is {} bytes ({}), but pins size {}", f.name, t.size,
                                        ctx_.string(type_node, "type"), pinned));
    }
    if (natural + t.size > kMaxSize)
        ctx_.fail(type_node, fmt::format("struct '{}' is larger than 2^32-1 bytes", out.name));
    f.offset = static_cast<std::uint32_t>(natural);
    offset = natural + t.size;
    struct_align = std::max(struct_align, align);
    out.fields.push_back(std::move(f));
}

void TypeBuilder::add_trailing(SchemaStruct& out, const toml::table& field, const TypeExpr& expr,
                               const toml::array& all_fields, std::size_t position, int depth) {
    ctx_.check_keys(field, {"name", "type", "doc"}, "a trailing array");
    const toml::node& name_node = ctx_.required(field, "name", "a trailing array");
    const toml::node& type_node = *field.get("type");
    SchemaTrailing t;
    t.name = ctx_.identifier(name_node, "field name");
    check_new_member(out, name_node, t.name);
    t.doc = ctx_.optional_text(field, "doc", "doc");
    t.bytes = expr.base == "bytes";
    t.element = t.bytes ? scalar_type(Scalar::U8) : base_type(type_node, expr.base, depth);
    t.count_path = expr.path;
    // Resolve the count in the fixed fields declared before this array.
    const std::string head = expr.path.substr(0, expr.path.find('.'));
    const SchemaField* f = out.field(head);
    if (f == nullptr) {
        bool later = head == t.name;
        for (const auto& other : out.trailing) later = later || other.name == head;
        for (std::size_t j = position + 1; j < all_fields.size(); ++j)
            if (const toml::table* other = all_fields.get(j)->as_table())
                if (const toml::node* n = other->get("name"); n && n->value<std::string>() == head) later = true;
        if (later)
            ctx_.fail(type_node, fmt::format("the count field '{}' of trailing array '{}' follows it (or is a "
                                             "trailing array); a count must be a fixed field before the array",
                                             head, t.name));
        ctx_.fail(type_node, fmt::format("the count field '{}' of trailing array '{}' is missing from struct '{}'",
                                         head, t.name, out.name));
    }
    std::uint64_t offset = f->offset;
    TypeId type = f->type;
    std::string_view rest = expr.path;
    for (std::size_t dot = rest.find('.'); dot != std::string_view::npos; dot = rest.find('.')) {
        rest.remove_prefix(dot + 1);
        const SchemaType& outer = data_.types[type];
        const std::string_view part = rest.substr(0, rest.find('.'));
        const SchemaField* inner =
            outer.kind == TypeKind::Struct ? data_.structs[outer.index].field(part) : nullptr;
        if (inner == nullptr)
            ctx_.fail(type_node, fmt::format("the count field '{}' of trailing array '{}' is missing", expr.path, t.name));
        offset += inner->offset;
        type = inner->type;
    }
    const SchemaType& count_type = data_.types[type];
    if (count_type.kind != TypeKind::Scalar || !is_unsigned_integer(count_type.scalar))
        ctx_.fail(type_node, fmt::format("the count field '{}' of trailing array '{}' must be u8, u16, u32 or u64",
                                         expr.path, t.name));
    t.count_offset = static_cast<std::uint32_t>(offset);
    t.count_scalar = count_type.scalar;
    out.trailing.push_back(std::move(t));
}

}  // namespace evring::detail
