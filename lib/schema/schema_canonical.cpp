// The canonical form of a schema and its SHA-256 hash (docs/schema.md,
// "Canonical form and hash"). The form is line-oriented text with one fact per
// line, in a fixed order, so that everything that decides how bytes are read
// (numbers, names, types, offsets, sizes) appears and nothing else does:
// descriptions and doc strings are left out on purpose.
#include <openssl/evp.h>

#include <fmt/format.h>

#include "schema/schema_data.hpp"

namespace evring::detail {

std::string canonical_type_name(const SchemaData& data, TypeId id) {
    const SchemaType& t = data.types[id];
    switch (t.kind) {
    case TypeKind::Scalar: return std::string(scalar_name(t.scalar));
    case TypeKind::Bytes: return fmt::format("bytes[{}]", t.count);
    case TypeKind::Enum: return "enum:" + data.enums[t.index].name;
    case TypeKind::Struct: return "struct:" + data.structs[t.index].name;
    case TypeKind::Array: return fmt::format("{}[{}]", canonical_type_name(data, t.element), t.count);
    case TypeKind::String: return fmt::format("char[{}]", t.count);
    }
    return {};
}

namespace {

std::string enum_value_text(const SchemaEnum& e, std::uint64_t bits) {
    return e.is_signed() ? std::to_string(static_cast<std::int64_t>(bits)) : std::to_string(bits);
}

template <class T>
std::string joined(const std::vector<T>& items) {
    if (items.empty()) return "-";
    std::string out;
    for (const auto& item : items) {
        if (!out.empty()) out += ',';
        out += std::to_string(item);
    }
    return out;
}

void append_struct(std::string& out, const SchemaData& data, const SchemaStruct& s) {
    out += fmt::format("struct {} size {} align {}\n", s.name, s.size, s.align);
    for (const auto& f : s.fields)
        out += fmt::format("field {} {} {}\n", f.offset, f.name, canonical_type_name(data, f.type));
    for (const auto& t : s.trailing)
        out += fmt::format("trailing {} {} count {}\n", t.name,
                           t.bytes  ? std::string("bytes")
                           : t.text ? std::string("char")
                                    : canonical_type_name(data, t.element),
                           t.count_path);
}

}  // namespace

std::string canonical_form_of(const SchemaData& data) {
    std::string out = "evring-schema-canonical 1\n";
    out += fmt::format("content_type {} {}\n", data.content_type, data.content_name);
    out += fmt::format("payload_alignment {}\n", data.payload_alignment);
    for (std::size_t i = 0; i < data.flow_tags.size(); ++i)
        if (!data.flow_tags[i].empty()) out += fmt::format("flow_tag {} {}\n", i, data.flow_tags[i]);
    for (const auto& h : data.describes) out += "describes " + schema_hash_hex(h) + "\n";
    for (const auto& e : data.enums) {
        out += fmt::format("enum {} {}\n", e.name, scalar_name(e.underlying));
        for (const auto& v : e.values) out += fmt::format("value {} {}\n", enum_value_text(e, v.bits), v.name);
    }
    for (const auto& s : data.structs) append_struct(out, data, s);
    for (const auto& e : data.events)
        out += fmt::format("event {} {} {}\n", e.number, e.name,
                           e.payload == kNoPayload ? std::string("-") : "struct:" + data.structs[e.payload].name);
    // Interest lines only when a schema uses interest, so schemas without
    // keep their hash. In the hash at all because writers and readers must
    // agree on what a keyword bit means.
    for (std::size_t i = 0; i < data.keywords.size(); ++i) out += fmt::format("keyword {} {}\n", i, data.keywords[i]);
    for (const auto& e : data.events) {
        if (e.keywords != 0 || e.level != 0) {
            std::string names;
            for (std::size_t i = 0; i < data.keywords.size(); ++i)
                if ((e.keywords >> i) & 1) names += (names.empty() ? "" : ",") + data.keywords[i];
            out += fmt::format("event_interest {} keywords {} level {}\n", e.number, names.empty() ? "-" : names,
                               e.level);
        }
        if (e.always_recorded) out += fmt::format("event_always_recorded {}\n", e.number);
    }
    for (const auto& s : data.spans) {
        out += fmt::format("span {} begin {} end {} key {}\n", s.name, joined(s.begin), joined(s.end), joined(s.key));
        // Only when given, so schemas without them keep their hash.
        if (!s.label.empty()) out += fmt::format("span_label {} {}\n", s.name, s.label);
        if (!s.id.empty()) out += fmt::format("span_id {} {}\n", s.name, s.id);
        if (s.opener) out += fmt::format("span_opener {} {}\n", s.name, *s.opener);
        for (const auto& st : s.stages)
            out += fmt::format("span_stage {} {} {} {} {}\n", s.name, st.name, st.event, st.label,
                               st.id.empty() ? std::string("-") : st.id);
    }
    return out;
}

SchemaHash sha256(std::string_view bytes) {
    SchemaHash digest{};
    unsigned int length = 0;
    // EVP_Digest only fails when OpenSSL cannot allocate its context; a zero
    // hash then matches no ring (real hashes are never all zero in practice).
    if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1)
        digest.fill(0);
    return digest;
}

}  // namespace evring::detail
