// generate_c_header: constants, the schema text, enums, structs with their
// layout checks, event types (the write helpers are in
// schema_codegen_c_write.cpp).
#include <fmt/format.h>

#include "codegen/schema_codegen.hpp"
#include "codegen/schema_codegen_c_names.hpp"
#include "codegen/schema_codegen_names.hpp"

namespace evring {

namespace {

using detail::CNames;
using detail::CppNames;

std::string comment(std::string_view text) {
    // A C comment ends at "*/": the text keeps its characters but not that pair.
    std::string out = CppNames::comment_text(text);
    for (std::size_t at = out.find("*/"); at != std::string::npos; at = out.find("*/", at)) out.insert(at + 1, " ");
    return out;
}

// Bytes as a C initializer, 16 to a line.
std::string byte_list(const unsigned char* data, std::size_t size) {
    std::string out;
    for (std::size_t i = 0; i < size; ++i)
        out += fmt::format("{}0x{:02x}", i == 0 ? "\n        " : i % 16 == 0 ? ",\n        " : ", ",
                           static_cast<unsigned>(data[i]));
    return out;
}

void append_constants(std::string& out, const Schema& schema, const CNames& names) {
    const std::string& p = names.prefix();
    const std::string& u = names.upper();
    out += fmt::format("#define {}_CONTENT_TYPE {}\n", u, schema.content_type());
    out += fmt::format("#define {}_CONTENT_NAME \"{}\"\n", u, schema.content_name());
    out += fmt::format("#define {}_PAYLOAD_ALIGNMENT {}\n", u, schema.payload_alignment());
    out += "/* SHA-256 of the schema's canonical form (docs/schema.md): the ring header's schema_hash. */\n";
    out += fmt::format("#define {}_SCHEMA_HASH_HEX \"{}\"\n", u, schema.hash_hex());
    out += fmt::format("static inline const uint8_t* {}_schema_hash(void) {{\n    static const uint8_t hash[32] = {{{}}};\n"
                       "    return hash;\n}}\n\n",
                       p, byte_list(schema.hash().data(), schema.hash().size()));
    out += "/* The schema's text: a writer created with it (" + p +
           "_writer_options) embeds it in its ring, so readers decode the\n   events by name with no other file. */\n";
    const std::string& text = schema.source();
    std::string bytes(text);
    bytes += '\0';
    out += fmt::format("static inline const char* {}_schema_text(void) {{\n    static const unsigned char text[{}] = {{{}}};\n"
                       "    return (const char*)text;\n}}\n\n",
                       p, bytes.size(), byte_list(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()));
    out += fmt::format("/* Options for a writer of this schema: evring_writer_options_init, then the schema text. */\n"
                       "static inline void {0}_writer_options(evring_writer_options* options) {{\n"
                       "    evring_writer_options_init(options);\n"
                       "    options->schema_text = {0}_schema_text();\n}}\n\n",
                       p);
    bool any_flow = false;
    for (std::size_t i = 0; i < 4; ++i)
        if (!names.flow_constant(i).empty()) {
            if (!any_flow) out += "/* The flow tags: indexes into the descriptor's content_ext[4] (a write's flow[4]). */\n";
            any_flow = true;
            out += fmt::format("#define {} {}\n", names.flow_constant(i), i);
        }
    if (any_flow) out += "\n";
}

std::string enumerator_value(const SchemaEnum& e, std::uint64_t bits) {
    if (!e.is_signed()) return std::to_string(bits);
    const auto v = static_cast<std::int64_t>(bits);
    return std::to_string(v);
}

// Enumerators as an enum when C allows them (every value an int), else as
// typed macros; the type itself is its underlying integer, so a struct
// member has the schema's width.
void append_enum(std::string& out, const SchemaEnum& e, std::uint32_t index, const CNames& names) {
    const std::string& c = names.enum_name(index);
    if (!e.doc.empty()) out += fmt::format("/* {} */\n", comment(e.doc));
    out += fmt::format("typedef {}int{}_t {};\n", e.is_signed() ? "" : "u", scalar_size(e.underlying) * 8, c);
    bool fits_int = true;
    for (const auto& v : e.values) {
        const auto s = static_cast<std::int64_t>(v.bits);
        fits_int = fits_int && (e.is_signed() ? s >= INT32_MIN && s <= INT32_MAX : v.bits <= INT32_MAX);
    }
    if (e.values.empty()) {
        out += "\n";
        return;
    }
    if (fits_int) {
        out += fmt::format("enum {} {{\n", c);
        for (std::size_t i = 0; i < e.values.size(); ++i)
            out += fmt::format("    {} = {},\n", names.enumerator(index, i), enumerator_value(e, e.values[i].bits));
        out += "};\n\n";
        return;
    }
    for (std::size_t i = 0; i < e.values.size(); ++i) {
        const std::uint64_t bits = e.values[i].bits;
        const std::string value = e.is_signed() ? (static_cast<std::int64_t>(bits) == INT64_MIN
                                                       ? std::string("(-9223372036854775807 - 1)")
                                                       : std::to_string(static_cast<std::int64_t>(bits)))
                                                : std::to_string(bits) + "u";
        out += fmt::format("#define {} (({}){})\n", names.enumerator(index, i), c, value);
    }
    out += "\n";
}

void append_struct(std::string& out, const Schema& schema, const SchemaStruct& s, const CNames& names,
                   const std::string& c) {
    std::uint32_t natural_align = 1;
    for (const auto& f : s.fields) natural_align = std::max(natural_align, schema.type(f.type).align);
    if (!s.doc.empty()) out += fmt::format("/* {} */\n", comment(s.doc));
    out += fmt::format("typedef struct {0} {{\n", c);
    std::uint64_t end = 0;
    int pads = 0;
    bool first = true;
    // C aligns a struct to its most aligned member: a struct the schema aligns
    // more than its fields gets it on the first member.
    auto member_prefix = [&]() {
        std::string align = first && s.align > natural_align ? fmt::format("EVRING_ALIGNAS({}) ", s.align) : "";
        first = false;
        return align;
    };
    for (const auto& f : s.fields) {
        const SchemaType& t = schema.type(f.type);
        const std::uint64_t natural = (end + t.align - 1) / t.align * t.align;
        if (f.offset > natural)  // a { padding = N } gap C rules would not leave
            out += fmt::format("    {}uint8_t reserved_padding_{}_[{}];\n", member_prefix(), pads++, f.offset - end);
        out += fmt::format("    {}{};{}\n", member_prefix(), names.declare(f.type, CNames::member(f.name)),
                           f.doc.empty() ? "" : " /* " + comment(f.doc) + " */");
        end = f.offset + t.size;
    }
    const std::uint64_t natural_size = (end + s.align - 1) / s.align * s.align;
    if (s.size > natural_size || first)
        out += fmt::format("    {}uint8_t reserved_padding_{}_[{}];\n", member_prefix(), pads++, s.size - end);
    for (const auto& t : s.trailing)
        out += fmt::format("    /* then trailing {}: {}[{}]{} */\n", t.name,
                           t.bytes ? std::string("bytes") : schema.type_name(t.element), t.count_path,
                           t.doc.empty() ? "" : " -- " + comment(t.doc));
    out += fmt::format("}} {};\n", c);
    out += fmt::format("_Static_assert(sizeof({0}) == {1}, \"{0}: size differs from the schema\");\n", c, s.size);
    out += fmt::format("_Static_assert(_Alignof({0}) == {1}, \"{0}: alignment differs from the schema\");\n", c,
                       s.align);
    for (const auto& f : s.fields)
        out += fmt::format("_Static_assert(offsetof({0}, {1}) == {2}, \"{0}.{1}: offset differs from the schema\");\n",
                           c, CNames::member(f.name), f.offset);
    out += "\n";
}

// Structs in an order where every struct comes after those it contains.
void append_structs(std::string& out, const Schema& schema, const CNames& names) {
    std::vector<char> done(schema.structs().size(), 0);
    auto visit = [&](auto&& self, std::uint32_t index) -> void {
        if (done[index]) return;
        done[index] = 1;
        const SchemaStruct& s = schema.structs()[index];
        auto contained = [&](TypeId id) {
            while (schema.type(id).kind == TypeKind::Array) id = schema.type(id).element;
            if (schema.type(id).kind == TypeKind::Struct) self(self, schema.type(id).index);
        };
        for (const auto& f : s.fields) contained(f.type);
        for (const auto& t : s.trailing) contained(t.element);
        append_struct(out, schema, s, names, names.struct_name(index));
    };
    for (std::uint32_t i = 0; i < schema.structs().size(); ++i) visit(visit, i);
}

void append_event_types(std::string& out, const Schema& schema, const CNames& names) {
    out += fmt::format("enum {}_event_type {{\n", names.prefix());
    for (const auto& e : schema.events())
        out += fmt::format("    {} = {},{}\n", names.event_constant(e), e.number,
                           e.description.empty() ? "" : " /* " + comment(e.description) + " */");
    out += "};\n\n";
    out += fmt::format("/* An event type's name, or NULL when the schema has no such type. */\n"
                       "static inline const char* {}_event_name(uint16_t event_type) {{\n    switch (event_type) {{\n",
                       names.prefix());
    for (const auto& e : schema.events())
        out += fmt::format("    case {}: return \"{}\";\n", names.event_constant(e), e.name);
    out += "    default: return NULL;\n    }\n}\n\n";
}

}  // namespace

Result<std::string> generate_c_header(const Schema& schema, const CodegenOptions& options) {
    const std::string prefix = options.namespace_name.empty() ? schema.content_name() : options.namespace_name;
    auto names = CNames::make(schema, prefix);
    if (!names) return std::move(names).error();
    std::string out = fmt::format(
        "/* Generated by `evring schema compile --lang c` from {0}. Do not edit: change the schema and rebuild.\n"
        " * Schema '{1}', content type {2}, hash {3}.\n"
        " * C11 (C++ programs use the C++ header, `evring schema compile` without --lang). The structs have the\n"
        " * schema's layout, checked by _Static_assert (docs/schema.md, \"Generating a C header\"). */\n"
        "#ifndef {4}_SCHEMA_H\n#define {4}_SCHEMA_H\n\n"
        "#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n\n"
        "#include <evring/evring.h>\n\n",
        comment(options.source_label.empty() ? schema.source_name() : options.source_label), schema.content_name(),
        schema.content_type(), schema.hash_hex(), names->upper());
    out += "/* u128 and u256: 16 bytes aligned to 16, and four 64-bit limbs, least significant first. */\n"
           "#ifndef EVRING_GENERATED_WIDE_INTEGERS\n#define EVRING_GENERATED_WIDE_INTEGERS\n"
           "typedef struct evring_u128 { EVRING_ALIGNAS(16) uint64_t limbs[2]; } evring_u128;\n"
           "typedef struct evring_u256 { uint64_t limbs[4]; } evring_u256;\n#endif\n\n";
    append_constants(out, schema, *names);
    for (std::uint32_t i = 0; i < schema.enums().size(); ++i) append_enum(out, schema.enums()[i], i, *names);
    append_structs(out, schema, *names);
    append_event_types(out, schema, *names);
    detail::append_c_write_helpers(out, schema, *names);
    out += fmt::format("#endif /* {}_SCHEMA_H */\n", names->upper());
    return out;
}

}  // namespace evring
