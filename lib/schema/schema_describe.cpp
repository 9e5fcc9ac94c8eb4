// schema_to_json: the whole schema as one JSON object.
#include <fmt/format.h>

#include "evring/schema/schema_render.hpp"

namespace evring {

namespace {

std::string quoted(std::string_view text) { return json_string_literal(text); }

std::string enum_value_json(const SchemaEnum& e, std::uint64_t bits) {
    return e.is_signed() ? std::to_string(static_cast<std::int64_t>(bits)) : std::to_string(bits);
}

std::string event_names(const Schema& schema, const std::vector<std::uint16_t>& numbers) {
    std::string out = "[";
    for (auto n : numbers) {
        if (out.size() > 1) out += ',';
        out += quoted(schema.event(n)->name);
    }
    return out + "]";
}

std::string struct_json(const Schema& schema, const SchemaStruct& s) {
    std::string out = fmt::format("{{\"name\":{},\"size\":{},\"align\":{},\"description\":{},\"fields\":[",
                                  quoted(s.name), s.size, s.align, quoted(s.doc));
    for (std::size_t i = 0; i < s.fields.size(); ++i) {
        const SchemaField& f = s.fields[i];
        out += fmt::format("{}{{\"name\":{},\"type\":{},\"offset\":{},\"size\":{},\"doc\":{}}}", i ? "," : "",
                           quoted(f.name), quoted(schema.type_name(f.type)), f.offset, schema.type(f.type).size,
                           quoted(f.doc));
    }
    out += "],\"trailing\":[";
    for (std::size_t i = 0; i < s.trailing.size(); ++i) {
        const SchemaTrailing& t = s.trailing[i];
        out += fmt::format("{}{{\"name\":{},\"element\":{},\"element_size\":{},\"count\":{},\"doc\":{}}}",
                           i ? "," : "", quoted(t.name),
                           quoted(t.bytes ? "bytes" : t.text ? "char" : schema.type_name(t.element)),
                           schema.type(t.element).size, quoted(t.count_path), quoted(t.doc));
    }
    return out + "]}";
}

}  // namespace

std::string schema_to_json(const Schema& schema) {
    std::string out = fmt::format("{{\"content_type\":{},\"content_name\":{},\"description\":{},\"hash\":\"{}\",",
                                  schema.content_type(), quoted(schema.content_name()), quoted(schema.description()),
                                  schema.hash_hex());
    out += "\"describes\":[";
    for (std::size_t i = 0; i < schema.describes().size(); ++i)
        out += fmt::format("{}\"{}\"", i ? "," : "", schema_hash_hex(schema.describes()[i]));
    out += fmt::format("],\"payload_alignment\":{},\"flow_tags\":[", schema.payload_alignment());
    for (std::size_t i = 0; i < 4; ++i) {
        const std::string& tag = schema.flow_tags()[i];
        out += fmt::format("{}{}", i ? "," : "", tag.empty() ? std::string("null") : quoted(tag));
    }
    out += "],\"events\":[";
    bool first = true;
    for (const auto& e : schema.events()) {
        const SchemaStruct* s = schema.payload_of(e);
        out += fmt::format("{}{{\"number\":{},\"name\":{},\"description\":{},\"payload\":{},\"fixed_size\":{},"
                           "\"trailing\":{}}}",
                           first ? "" : ",", e.number, quoted(e.name), quoted(e.description),
                           s ? quoted(s->name) : std::string("null"), schema.fixed_size(e),
                           s && !s->trailing.empty() ? "true" : "false");
        first = false;
    }
    out += "],\"structs\":[";
    first = true;
    for (const auto& s : schema.structs()) {
        out += (first ? "" : ",") + struct_json(schema, s);
        first = false;
    }
    out += "],\"enums\":[";
    first = true;
    for (const auto& e : schema.enums()) {
        out += fmt::format("{}{{\"name\":{},\"type\":\"{}\",\"description\":{},\"values\":{{", first ? "" : ",",
                           quoted(e.name), scalar_name(e.underlying), quoted(e.doc));
        for (std::size_t i = 0; i < e.values.size(); ++i)
            out += fmt::format("{}{}:{}", i ? "," : "", quoted(e.values[i].name), enum_value_json(e, e.values[i].bits));
        out += "}}";
        first = false;
    }
    out += "],\"spans\":[";
    first = true;
    for (const auto& s : schema.spans()) {
        std::string key = "[";
        for (auto k : s.key) key += (key.size() > 1 ? "," : "") + quoted(schema.flow_tags()[k]);
        out += fmt::format("{}{{\"name\":{},\"description\":{},\"begin\":{},\"end\":{},\"key\":{}]}}",
                           first ? "" : ",", quoted(s.name), quoted(s.description), event_names(schema, s.begin),
                           event_names(schema, s.end), key);
        first = false;
    }
    return out + "]}";
}

}  // namespace evring
