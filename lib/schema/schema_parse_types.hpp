// lib/schema/schema_parse_types.hpp — types, enums and struct layouts of a schema
// being parsed (private to the parser).
//
// Layout follows the C rules of x86-64: each field at the next multiple of its
// alignment, a struct's alignment the largest of its fields', its size rounded
// up to that alignment. `offset` and `size` pins are checks against those
// rules; `{ padding = N }` entries are the one way to leave a gap they would
// not leave.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "schema/schema_parse_support.hpp"

namespace evring::detail {

inline constexpr std::uint64_t kMaxSize = UINT32_MAX;  // sizes, offsets and lengths: the payload_size field
inline constexpr std::uint32_t kMaxAlign = 4096;

inline std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
    return (value + alignment - 1) / alignment * alignment;
}
inline bool is_unsigned_integer(Scalar s) { return s <= Scalar::U64; }

// A struct before its layout is known: a [struct.NAME] table, or the fields
// an event declares inline.
struct StructDecl {
    std::string name;
    const toml::table* table = nullptr;  // holds fields, and optionally size and align
    const toml::node* where = nullptr;   // what errors about the struct point at
    std::string description;
    enum class State { Declared, InProgress, Done } state = State::Declared;
};

class TypeBuilder {
public:
    TypeBuilder(const ParseContext& context, SchemaData& data) : ctx_(context), data_(data) {}

    void add_enums(const toml::table& enums);
    void declare_struct(StructDecl decl);
    // Orders the structs by name, then lays out every one of them.
    void build_structs();
    std::optional<std::uint32_t> struct_index(std::string_view name) const;

private:
    struct TypeExpr {
        std::string base;
        enum class Suffix { None, Fixed, Count } suffix = Suffix::None;
        std::uint64_t count = 0;
        std::string path;
    };

    TypeExpr parse_type_expr(const toml::node& node) const;
    TypeId intern(const SchemaType& type);
    TypeId scalar_type(Scalar scalar);
    TypeId bytes_type(const toml::node& where, std::uint64_t count);
    TypeId string_type(const toml::node& where, std::uint64_t length);
    TypeId base_type(const toml::node& where, std::string_view base, int depth);
    TypeId fixed_type(const toml::node& where, const TypeExpr& expr, int depth);
    void build(std::uint32_t index, int depth);
    // 1 for a struct of primitives, 1 + the deepest nested struct otherwise.
    int nesting_of(const SchemaStruct& s) const;
    void add_field(SchemaStruct& out, const toml::table& field, std::uint64_t& offset, std::uint32_t& align,
                   int depth);
    void add_trailing(SchemaStruct& out, const toml::table& field, const TypeExpr& expr,
                      const toml::array& all_fields, std::size_t position, int depth);
    void check_new_member(const SchemaStruct& out, const toml::node& where, const std::string& name) const;
    std::optional<std::uint32_t> alignment_key(const toml::table& table, std::string_view what) const;

    const ParseContext& ctx_;
    SchemaData& data_;
    std::vector<StructDecl> decls_;  // by name once build_structs ran; parallel to data_.structs
    std::vector<int> nesting_;       // parallel to decls_
    std::map<std::string, const toml::node*, std::less<>> type_names_;  // structs and enums
    std::map<std::tuple<int, int, std::uint32_t, TypeId, std::uint32_t>, TypeId> interned_;
};

}  // namespace evring::detail
