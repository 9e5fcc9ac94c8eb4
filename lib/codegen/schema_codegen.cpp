// generate_cpp_header: constants, enums and structs (the publish helpers are
// in schema_codegen_publish.cpp).
#include <fmt/format.h>

#include "codegen/schema_codegen.hpp"
#include "evring/schema/schema_embed.hpp"
#include "codegen/schema_codegen_names.hpp"
#include "schema/schema_data.hpp"

namespace evring {

namespace {

using detail::CppNames;

std::string enumerator_value(const SchemaEnum& e, std::uint64_t bits) {
    if (!e.is_signed()) return std::to_string(bits);
    const auto v = static_cast<std::int64_t>(bits);
    if (v == INT64_MIN) return "(-9223372036854775807 - 1)";  // the literal alone would not fit
    return std::to_string(v);
}

std::string comment(std::string_view text) {
    return text.empty() ? std::string() : "  // " + CppNames::comment_text(text);
}

void append_enum(std::string& out, const SchemaEnum& e, const std::string& cpp) {
    if (!e.doc.empty()) out += fmt::format("// {}\n", CppNames::comment_text(e.doc));
    out += fmt::format("enum class {} : std::{}int{}_t {{\n", cpp, e.is_signed() ? "" : "u",
                       scalar_size(e.underlying) * 8);
    for (const auto& v : e.values)
        out += fmt::format("    {} = {},\n", CppNames::member(v.name), enumerator_value(e, v.bits));
    out += "};\n\n";
}

void append_struct(std::string& out, const Schema& schema, const SchemaStruct& s, const CppNames& names,
                   const std::string& cpp) {
    std::uint32_t natural_align = 1;
    for (const auto& f : s.fields) natural_align = std::max(natural_align, schema.type(f.type).align);
    if (!s.doc.empty()) out += fmt::format("// {}\n", CppNames::comment_text(s.doc));
    out += s.align > natural_align ? fmt::format("struct alignas({}) {} {{\n", s.align, cpp)
                                   : fmt::format("struct {} {{\n", cpp);
    std::uint64_t end = 0;
    int pads = 0;
    for (const auto& f : s.fields) {
        const SchemaType& t = schema.type(f.type);
        const std::uint64_t natural = (end + t.align - 1) / t.align * t.align;
        if (f.offset > natural)  // a { padding = N } gap C rules would not leave
            out += fmt::format("    std::array<std::uint8_t, {}> reserved_padding_{}_;\n", f.offset - end, pads++);
        out += fmt::format("    {} {};{}\n", names.type(f.type), CppNames::member(f.name), comment(f.doc));
        end = f.offset + t.size;
    }
    const std::uint64_t natural_size = (end + s.align - 1) / s.align * s.align;
    if (s.size > natural_size)
        out += fmt::format("    std::array<std::uint8_t, {}> reserved_padding_{}_;\n", s.size - end, pads++);
    for (const auto& t : s.trailing)
        out += fmt::format("    // then trailing {}: {}[{}]{}\n", t.name, names.element_type(t), t.count_path,
                           t.doc.empty() ? "" : " -- " + CppNames::comment_text(t.doc));
    out += "};\n";
    out += fmt::format("static_assert(sizeof({0}) == {1}, \"{0}: size differs from the schema\");\n", cpp, s.size);
    out += fmt::format("static_assert(alignof({0}) == {1}, \"{0}: alignment differs from the schema\");\n", cpp,
                       s.align);
    for (const auto& f : s.fields)
        out += fmt::format("static_assert(offsetof({0}, {1}) == {2}, \"{0}::{1}: offset differs from the schema\");\n",
                           cpp, CppNames::member(f.name), f.offset);
    out += fmt::format("static_assert(std::is_trivially_copyable_v<{0}> && std::is_standard_layout_v<{0}>);\n\n", cpp);
}

// Structs in an order where every struct comes after those it contains.
void append_structs(std::string& out, const Schema& schema, const CppNames& names) {
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

void append_constants(std::string& out, const Schema& schema, const CppNames& names) {
    out += fmt::format("inline constexpr std::uint16_t kContentType = {};\n", schema.content_type());
    out += fmt::format("inline constexpr std::string_view kContentName = \"{}\";\n", schema.content_name());
    out += fmt::format("inline constexpr std::uint32_t kPayloadAlignment = {};\n", schema.payload_alignment());
    auto bytes = [](const SchemaHash& h) {
        std::string text;
        for (std::size_t i = 0; i < h.size(); ++i) text += fmt::format("{}0x{:02x}", i ? ", " : "", h[i]);
        return text;
    };
    out += "// SHA-256 of the schema's canonical form (docs/schema.md); the ring header's schema_hash.\n";
    out += fmt::format("inline constexpr std::array<std::uint8_t, 32> kSchemaHash = {{{}}};\n", bytes(schema.hash()));
    out += fmt::format("inline constexpr std::string_view kSchemaHashHex = \"{}\";\n", schema.hash_hex());
    out += "// Foreign schema hashes this schema describes (rings of other implementations).\n";
    out += fmt::format("inline constexpr std::array<std::array<std::uint8_t, 32>, {}> kDescribedHashes = {{{{",
                       schema.describes().size());
    for (std::size_t i = 0; i < schema.describes().size(); ++i)
        out += fmt::format("{}{{{}}}", i ? ", " : "", bytes(schema.describes()[i]));
    out += "}};\n\n";
    out += "// The flow tags, content_ext[0..3] of the descriptor.\nstruct Flow {\n";
    for (std::size_t i = 0; i < 4; ++i)
        out += fmt::format("    std::uint64_t {} = 0;  // content_ext[{}]\n", names.flow_member(i), i);
    out += fmt::format("    constexpr std::array<std::uint64_t, 4> tags() const noexcept {{ return {{{}, {}, {}, {}}}; }}\n",
                       names.flow_member(0), names.flow_member(1), names.flow_member(2), names.flow_member(3));
    out += "};\n\n";
}

// The blob a ring embeds (schema_blob.hpp) as a constant, and the RingContent
// made of it: a program embeds its schema with no schema library at run time,
// and content type, hash and blob come from one schema, so they agree.
void append_embedding(std::string& out, const Schema& schema) {
    const std::vector<std::byte> blob = serialize_schema_blob(schema);
    out += "// The schema as a ring embeds it (the blob table of docs/schema.md): what evring::serialize_schema_blob makes.\n";
    out += fmt::format("inline constexpr std::array<std::uint8_t, {}> kSchemaBlob = {{", blob.size());
    for (std::size_t i = 0; i < blob.size(); ++i)
        out += fmt::format("{}0x{:02x}", i == 0 ? "\n    " : i % 16 == 0 ? ",\n    " : ", ",
                           static_cast<unsigned>(blob[i]));
    out += "};\n\n";
    out += "#if __has_include(<evring/config.hpp>)\n"
           "// What RingWriter::create needs to write a ring of this schema that describes itself:\n"
           "//     evring::RingWriter::create({config, ring_content()});\n"
           "inline evring::RingContent ring_content() {\n"
           "    evring::RingContent content;\n"
           "    content.content_type = kContentType;\n"
           "    content.schema_hash = kSchemaHash;\n"
           "    content.schema_blob.resize(kSchemaBlob.size());\n"
           "    for (std::size_t i = 0; i < kSchemaBlob.size(); ++i) content.schema_blob[i] = std::byte{kSchemaBlob[i]};\n"
           "    return content;\n"
           "}\n"
           "#endif\n\n";
}

// Keyword bits and interest_of(EventType): constants, so that
// publisher.wants(EventType::X) and the publish helpers fold the check to a
// load and a test (interest.hpp).
void append_interest(std::string& out, const Schema& schema) {
    out += "// Interest (evring/ring/interest.hpp): each keyword's bit, and what each event type asks of the\n"
           "// ring's interest word. `if (auto* p = publisher.wants(EventType::X))` skips building an event\n"
           "// no reader wants; the publish_<event> helpers skip it by themselves (and return 0).\n"
           "namespace keyword {\n";
    for (std::size_t i = 0; i < schema.keywords().size(); ++i)
        out += fmt::format("inline constexpr std::uint64_t {} = std::uint64_t{{1}} << {};\n",
                           CppNames::member(schema.keywords()[i]), i);
    out += "}  // namespace keyword\n\n"
           "constexpr evring::EventInterest interest_of(EventType type) noexcept {\n    switch (type) {\n";
    for (const auto& e : schema.events())
        if (e.keywords != 0 || e.level != 0 || e.always_recorded)
            out += fmt::format("    case EventType::{}: return {{{}u, {}, {}}};\n", CppNames::member(e.name),
                               e.keywords, e.level, e.always_recorded ? "true" : "false");
    out += "    default: return {};\n    }\n}\n\n";
}

void append_event_types(std::string& out, const Schema& schema, const CppNames& names) {
    out += "enum class EventType : std::uint16_t {\n";
    for (const auto& e : schema.events())
        out += fmt::format("    {} = {},{}\n", CppNames::member(e.name), e.number, comment(e.description));
    out += "};\n\nconstexpr std::string_view event_name(EventType type) noexcept {\n    switch (type) {\n";
    for (const auto& e : schema.events())
        out += fmt::format("    case EventType::{}: return \"{}\";\n", CppNames::member(e.name), e.name);
    out += "    }\n    return {};\n}\n\n";
    out += "// EventInfo<EventType::X>::Payload is the fixed part of X's payload (void when empty).\n";
    out += "template <EventType> struct EventInfo;\n";
    for (const auto& e : schema.events()) {
        const SchemaStruct* s = schema.payload_of(e);
        out += fmt::format("template <> struct EventInfo<EventType::{}> {{ using Payload = {}; static constexpr "
                           "std::uint32_t kFixedSize = {}; static constexpr bool kHasTrailing = {}; }};\n",
                           CppNames::member(e.name), s ? names.struct_name(e.payload) : "void", schema.fixed_size(e),
                           s && !s->trailing.empty() ? "true" : "false");
    }
    out += "\n";
    append_interest(out, schema);
}

}  // namespace

Result<std::string> generate_cpp_header(const Schema& schema, const CodegenOptions& options) {
    auto names = CppNames::make(schema);
    if (!names) return std::move(names).error();
    const std::string ns = options.namespace_name.empty() ? schema.content_name() : options.namespace_name;
    std::string_view rest = ns;
    while (true) {
        const std::size_t sep = rest.find("::");
        const std::string_view part = rest.substr(0, sep);
        if (!detail::is_identifier(part) || CppNames::member(part) != part)
            return Error(0, fmt::format("'{}' is not a C++ namespace name (a C++ keyword or a standard library "
                                        "macro is not one either); give another with --namespace",
                                        CppNames::comment_text(ns)));
        if (part == "evring" || part == "std")
            return Error(0, fmt::format("namespace '{}' is {}'s own; a generated header needs another: give one "
                                        "with --namespace",
                                        part, part == "std" ? "the standard library" : "the evring library"));
        if (sep == std::string_view::npos) break;
        rest.remove_prefix(sep + 2);
    }
    // Keyword constants share one namespace: two names that a C++ keyword or
    // macro escape makes equal ("int" and "int_") would not compile.
    for (std::size_t i = 0; i < schema.keywords().size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (CppNames::member(schema.keywords()[i]) == CppNames::member(schema.keywords()[j]))
                return Error(0, fmt::format("keywords '{}' and '{}' are both keyword::{} in C++; rename one",
                                            schema.keywords()[j], schema.keywords()[i],
                                            CppNames::member(schema.keywords()[i])));
    std::string out = fmt::format(
        "// Generated by `evring schema compile` from {}. Do not edit: change the schema and rebuild.\n"
        "// Schema '{}', content type {}, hash {}.\n"
        "#pragma once\n\n"
        "#include <array>\n#include <cstddef>\n#include <cstdint>\n#include <cstring>\n#include <span>\n#include <string_view>\n"
        "#include <type_traits>\n\n#include <evring/ring/interest.hpp>\n#include <evring/schema/schema_types.hpp>\n"
        "#if __has_include(<evring/schema/typed_publish.hpp>)\n#include <evring/schema/typed_publish.hpp>\n#endif\n"
        "#if __has_include(<evring/config.hpp>)\n#include <evring/config.hpp>\n#endif\n"
        "#if __has_include(<evring/ring/payload.hpp>)\n#include <evring/ring/payload.hpp>\n#endif\n\n"
        "namespace {} {{\n\n",
        CppNames::comment_text(options.source_label.empty() ? schema.source_name() : options.source_label),
        schema.content_name(),
        schema.content_type(), schema.hash_hex(), ns);
    append_constants(out, schema, *names);
    append_embedding(out, schema);
    for (std::uint32_t i = 0; i < schema.enums().size(); ++i)
        append_enum(out, schema.enums()[i], names->enum_name(i));
    append_structs(out, schema, *names);
    append_event_types(out, schema, *names);
    detail::append_publish_helpers(out, schema, *names);
    detail::append_payload_checks(out, schema);
    detail::append_typed_reads(out);
    out += fmt::format("}}  // namespace {}\n", ns);
    return out;
}

}  // namespace evring
