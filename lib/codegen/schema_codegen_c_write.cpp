// The typed write helpers of a generated C header: one per event type, over
// the C ABI (evring.h).
//
// An event without trailing arrays goes through evring_writer_record, the
// checked write: interest skips it (EVRING_NOT_WANTED), a payload too large
// for the ring records a RECORD_ERROR. One with trailing arrays is laid out by
// the helper in a reservation (evring_writer_reserve/_commit, no copy of the
// whole): each count field is set from its array's length, a length too large
// for its count field (or two arrays sharing a count with different lengths)
// is refused with EVRING_E_INVALID before anything is reserved, interest is
// asked first (evring_writer_wants), and a payload too large for the ring is
// refused with EVRING_E_TOO_LARGE, recording nothing.
#include <map>
#include <set>

#include <fmt/format.h>

#include "codegen/schema_codegen_c_names.hpp"

namespace evring::detail {

namespace {

// A parameter name that the helper's own names do not take.
std::string parameter(const std::string& name) {
    std::string out = CNames::member(name);
    for (std::string_view own : {"writer", "payload", "flow", "seqno", "status", "reservation", "base", "at", "count"})
        if (out == own) out += '_';
    return out;
}

// "const uint8_t* note" or, for elements that are arrays, "const uint8_t (*topics)[32]".
std::string element_parameter(const Schema& schema, const CNames& names, const SchemaTrailing& t,
                              const std::string& name) {
    if (t.bytes) return "const uint8_t *" + name;
    const TypeKind kind = schema.type(t.element).kind;
    const bool array_like = kind == TypeKind::Array || kind == TypeKind::Bytes || kind == TypeKind::String;
    return "const " + names.declare(t.element, array_like ? "(*" + name + ")" : "*" + name);
}

void append_empty(std::string& out, const SchemaEvent& e, const CNames& names) {
    out += fmt::format("static inline int {}(evring_writer* writer, const uint64_t flow[4], uint64_t* seqno) {{\n"
                       "    return evring_writer_record(writer, {}, NULL, 0, flow, seqno);\n}}\n\n",
                       names.helper(e), names.event_constant(e));
}

void append_fixed(std::string& out, const SchemaEvent& e, const std::string& type, const CNames& names) {
    out += fmt::format("static inline int {}(evring_writer* writer, const {}* payload, const uint64_t flow[4], "
                       "uint64_t* seqno) {{\n"
                       "    return evring_writer_record(writer, {}, payload, sizeof *payload, flow, seqno);\n}}\n\n",
                       names.helper(e), type, names.event_constant(e));
}

void append_trailing(std::string& out, const Schema& schema, const SchemaEvent& e, const SchemaStruct& s,
                     const std::string& type, const CNames& names) {
    std::string params, checks, size = "sizeof *payload", copies, counts;
    std::map<std::string, std::string> count_owner;  // count path -> the first array's length parameter
    std::set<std::string> taken;
    auto unique = [&taken](std::string name) {
        while (!taken.insert(name).second) name += '_';
        return name;
    };
    for (std::size_t i = 0; i < s.trailing.size(); ++i) {
        const SchemaTrailing& t = s.trailing[i];
        const std::string p = unique(parameter(t.name));
        const std::string n = unique(parameter(t.name + "_count"));
        const std::uint32_t element = schema.type(t.element).size;
        // Each array below 4 GiB (an event's payload is, RING01's payload_size is 32 bits), so the
        // size below cannot overflow; the reservation refuses what the ring cannot hold.
        checks += fmt::format("    if ({} > UINT32_MAX / {}) return EVRING_E_TOO_LARGE;\n", n, element);
        params += fmt::format(", {}, size_t {}", element_parameter(schema, names, t, p), n);
        size += fmt::format(" + (uint64_t){} * {}", n, element);
        copies += fmt::format("    if ({0} > 0) memcpy(at, {1}, {0} * {2});\n", n, p, element);
        if (i + 1 < s.trailing.size()) copies += fmt::format("    at += {} * {};\n", n, element);
        if (auto [it, fresh] = count_owner.emplace(t.count_path, n); !fresh) {
            checks += fmt::format("    if ({} != {}) return EVRING_E_INVALID; /* they share {} */\n", n, it->second,
                                  t.count_path);
            continue;
        }
        const unsigned bits = scalar_size(t.count_scalar) * 8;
        if (bits < 64)
            checks += fmt::format("    if ({} > UINT{}_MAX) return EVRING_E_INVALID; /* too long for {} */\n", n, bits,
                                  t.count_path);
        counts += fmt::format("    {{ const uint{0}_t count = (uint{0}_t){1}; memcpy(base + {2}, &count, sizeof count); }} "
                              "/* {3} */\n",
                              bits, n, t.count_offset, t.count_path);
    }
    out += fmt::format("static inline int {}(evring_writer* writer, const {}* payload{}, const uint64_t flow[4], "
                       "uint64_t* seqno) {{\n",
                       names.helper(e), type, params);
    out += "    if (seqno != NULL) *seqno = 0;\n";
    out += checks;
    out += fmt::format("    if (!evring_writer_wants(writer, {})) return EVRING_NOT_WANTED;\n"
                       "    evring_reservation reservation = {{.struct_size = sizeof reservation}};\n"
                       "    const int status = evring_writer_reserve(writer, {}, &reservation);\n"
                       "    if (status != EVRING_OK) return status;\n"
                       "    unsigned char* base = (unsigned char*)reservation.payload;\n"
                       "    memcpy(base, payload, sizeof *payload);\n",
                       names.event_constant(e), size);
    out += counts;
    out += "    unsigned char* at = base + sizeof *payload;\n";
    out += copies;
    out += fmt::format("    reservation.event_type = {};\n"
                       "    if (flow != NULL) memcpy(reservation.content_ext, flow, sizeof reservation.content_ext);\n"
                       "    const int committed = evring_writer_commit(writer, &reservation);\n"
                       "    if (committed == EVRING_OK && seqno != NULL) *seqno = reservation.seqno;\n"
                       "    return committed;\n}}\n\n",
                       names.event_constant(e));
}

}  // namespace

void append_c_write_helpers(std::string& out, const Schema& schema, const CNames& names) {
    out += "/* Typed writes, one per event type: PREFIX_record_EVENT(writer, payload, trailing arrays with their\n"
           " * lengths..., flow (NULL or 4 tags), seqno (NULL or where the event's sequence number goes)).\n"
           " * They return what evring_writer_record does: EVRING_OK, EVRING_NOT_WANTED when no registered reader\n"
           " * wants the event (docs/interest.md), or an error. With trailing arrays the helper sets each count\n"
           " * field from its length and refuses (EVRING_E_INVALID) a length its count field cannot hold; a\n"
           " * payload too large for the ring is refused (EVRING_E_TOO_LARGE) and nothing is recorded. */\n";
    for (const auto& e : schema.events()) {
        const SchemaStruct* s = schema.payload_of(e);
        if (s == nullptr) append_empty(out, e, names);
        else if (s->trailing.empty()) append_fixed(out, e, names.struct_name(e.payload), names);
        else append_trailing(out, schema, e, *s, names.struct_name(e.payload), names);
    }
}

}  // namespace evring::detail
