// The publish_<event> helpers of a generated header.
//
// Each helper calls `publish(publisher, type, flow tags, payload, spans...)`
// unqualified, so argument-dependent lookup finds evring::publish for an
// evring::Publisher (typed_publish.hpp) at instantiation, and a test can
// stand in a publisher of its own. Empty payloads go through reserve(0) and
// commit(), which every publisher has.
#include <map>

#include <fmt/format.h>

#include "codegen/schema_codegen_names.hpp"

namespace evring::detail {

namespace {

// A C++ expression naming the count field inside `payload`.
std::string count_expression(const std::string& path) {
    std::string out = "payload";
    std::string_view rest = path;
    while (true) {
        const std::size_t dot = rest.find('.');
        out += "." + CppNames::member(rest.substr(0, dot));
        if (dot == std::string_view::npos) return out;
        rest.remove_prefix(dot + 1);
    }
}

std::string parameter_name(const std::string& name) {
    std::string out = CppNames::member(name);
    if (out == "publisher" || out == "payload" || out == "flow") out += '_';
    return out;
}

// The interest check of a helper: nothing for types every word admits
// (always recorded, or no keywords at level 0), else the constants.
std::string interest_check(const SchemaEvent& e) {
    if (e.always_recorded || (e.keywords == 0 && e.level == 0)) return {};
    return fmt::format("    if (!evring::publisher_wants(publisher, {}u, {})) return 0;  // nobody wants it\n",
                       e.keywords, e.level);
}

void append_empty(std::string& out, const SchemaEvent& e) {
    out += fmt::format(
        "template <class Publisher>\n"
        "std::uint64_t {}(Publisher& publisher, const Flow& flow = {{}}) noexcept {{\n"
        "{}"
        "    auto reservation = publisher.reserve(0);\n"
        "    if (!reservation) return 0;\n"
        "    reservation.descriptor().event_type = static_cast<std::uint16_t>(EventType::{});\n"
        "    reservation.descriptor().content_ext = flow.tags();\n"
        "    publisher.commit(reservation);\n"
        "    return reservation.seqno();\n"
        "}}\n\n",
        CppNames::helper(e.name), interest_check(e), CppNames::member(e.name));
}

void append_with_payload(std::string& out, const SchemaEvent& e, const SchemaStruct& s, const CppNames& names,
                         const std::string& cpp) {
    std::string params, args, body;
    std::map<std::string, std::string> count_owner;  // count path -> first array using it
    for (const auto& t : s.trailing) {
        const std::string p = parameter_name(t.name);
        params += fmt::format(", std::span<const {}> {}", names.element_type(t), p);
        args += ", " + p;
        if (auto [it, fresh] = count_owner.emplace(t.count_path, p); !fresh) {
            body += fmt::format("    if ({}.size() != {}.size()) return 0;  // they share {}\n", p, it->second,
                                t.count_path);
            continue;
        }
        const unsigned bits = scalar_size(t.count_scalar) * 8;
        if (bits < 64) body += fmt::format("    if ({}.size() > {}u) return 0;  // too long for {}\n", p,
                                           (std::uint64_t{1} << bits) - 1, t.count_path);
        body += fmt::format("    {} = static_cast<std::uint{}_t>({}.size());\n", count_expression(t.count_path), bits, p);
    }
    const bool sets_counts = !s.trailing.empty();
    out += fmt::format("template <class Publisher>\n"
                       "std::uint64_t {}(Publisher& publisher, {}{}{} payload{}, const Flow& flow = {{}}) noexcept {{\n",
                       CppNames::helper(e.name), sets_counts ? "" : "const ", cpp, sets_counts ? "" : "&", params);
    out += interest_check(e);
    out += body;
    out += fmt::format("    return publish(publisher, static_cast<std::uint16_t>(EventType::{}), flow.tags(), payload{});\n}}\n\n",
                       CppNames::member(e.name), args);
}

}  // namespace

void append_publish_helpers(std::string& out, const Schema& schema, const CppNames& names) {
    out += "// publish_<event>(publisher, payload, trailing arrays..., flow): one call per event type. The\n"
           "// helpers set each trailing array's count field from its span and return 0 without publishing\n"
           "// when a span is too long for it; otherwise what evring::publish returns (0 when the payload\n"
           "// did not fit the ring and a RECORD_ERROR was published instead, or when no reader wants the\n"
           "// event: see interest_of).\n";
    for (const auto& e : schema.events()) {
        if (!e.description.empty()) out += fmt::format("// {}: {}\n", e.name, CppNames::comment_text(e.description));
        const SchemaStruct* s = schema.payload_of(e);
        if (s == nullptr) append_empty(out, e);
        else append_with_payload(out, e, *s, names, names.struct_name(e.payload));
    }
}

}  // namespace evring::detail
