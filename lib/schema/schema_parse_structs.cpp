// Struct layouts of a schema being parsed: fields by the C rules, pins as
// checks, padding entries, trailing arrays and their count fields.
#include <algorithm>

#include <fmt/format.h>

#include "schema/schema_parse_types.hpp"

namespace evring::detail {

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
    t.text = expr.base == "char";  // a variable-length string: JSON carried in a ring (evring_assembled)
    t.element = t.bytes || t.text ? scalar_type(Scalar::U8) : base_type(type_node, expr.base, depth);
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
