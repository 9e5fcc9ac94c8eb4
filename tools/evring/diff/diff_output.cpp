// evring diff's report (diff_cmd.hpp): text for a person, one JSON object for
// a program. Both name the first difference, the listed ones, and each side's
// counts.
#include <fmt/format.h>

#include <string>

#include "diff/diff_cmd.hpp"
#include "output/escape.hpp"
#include "output/json.hpp"

namespace evring::cli {
namespace {

constexpr DiffAspect kAspects[] = {kOnlyInA, kOnlyInB, kType, kPayload, kPayloadState, kFlow, kTime, kOffset};

std::string type_name(const Schema* schema, std::uint16_t type) {
    const SchemaEvent* e = schema ? schema->event(type) : nullptr;
    return e ? e->name : std::to_string(type);
}

std::string flow_name(const Schema* schema, unsigned i) {
    if (schema && !schema->flow_tags()[i].empty()) return schema->flow_tags()[i];
    return fmt::format("content_ext[{}]", i);
}

std::string where(const DiffReport& r, const Difference& d, bool seqno_blanked) {
    std::string text = seqno_blanked ? fmt::format("event #{}", d.key) : fmt::format("seqno {}", d.key);
    if (r.sides[0].set || r.sides[1].set) text = fmt::format("member {} {}", d.member, text);
    if (!(d.aspects & (kOnlyInA | kOnlyInB))) text += fmt::format(" ({})", printable(type_name(r.schema, d.a.event_type)));
    if (!r.span.empty() && d.label) text += fmt::format(" in {} {}", r.span, *d.label);
    return text;
}

std::string field(const DiffReport& r, const Difference& d) {
    return r.schema ? field_at(*r.schema, d.a.event_type, d.first_byte) : std::string();
}

std::string describe(const DiffReport& r, const Difference& d) {
    if (d.aspects & (kOnlyInA | kOnlyInB)) {
        const EventDescriptor& e = (d.aspects & kOnlyInA) ? d.a : d.b;
        return fmt::format("only in {} ({}, {} bytes)", (d.aspects & kOnlyInA) ? 'A' : 'B',
                           printable(type_name(r.schema, e.event_type)), e.payload_size);
    }
    std::vector<std::string> parts;
    if (d.aspects & kType)
        parts.push_back(fmt::format("type {} vs {}", printable(type_name(r.schema, d.a.event_type)),
                                    printable(type_name(r.schema, d.b.event_type))));
    if (d.aspects & kPayloadState)
        parts.push_back(fmt::format("payload read in {}, expired or invalid in {}",
                                    d.state_a == PayloadState::Ok ? 'A' : 'B', d.state_a == PayloadState::Ok ? 'B' : 'A'));
    if ((d.aspects & kPayload) && !(d.aspects & kPayloadState)) {
        std::string text = fmt::format("payload differs at byte {}", d.first_byte);
        if (auto f = field(r, d); !f.empty()) text += fmt::format(" (field {})", printable(f));
        parts.push_back(std::move(text));
    }
    if ((d.aspects & kPayload) && d.a.payload_size != d.b.payload_size)
        parts.push_back(fmt::format("{} vs {} bytes", d.a.payload_size, d.b.payload_size));
    for (unsigned i = 0; i < 4; ++i)
        if (d.flows & (1u << i))
            parts.push_back(fmt::format("flow tag {} {} vs {}", printable(flow_name(r.schema, i)), d.a.content_ext[i],
                                        d.b.content_ext[i]));
    if (d.aspects & kTime)
        parts.push_back(fmt::format("record_epoch_nanos {} vs {}", d.a.record_epoch_nanos, d.b.record_epoch_nanos));
    if (d.aspects & kOffset)
        parts.push_back(fmt::format("payload_buf_offset {} vs {}", d.a.payload_buf_offset, d.b.payload_buf_offset));
    std::string text;
    for (const auto& p : parts) text += (text.empty() ? "" : "; ") + p;
    return text;
}

std::string difference_json(const DiffReport& r, const Difference& d, bool seqno_blanked) {
    JsonObject o;
    o.number(seqno_blanked ? "event" : "seqno", d.key).number("member", d.member);
    std::string differs;
    for (DiffAspect a : kAspects)
        if (d.aspects & a) differs += (differs.empty() ? "" : ",") + json_quote(aspect_name(a));
    const bool only_a = d.aspects & kOnlyInA, only_b = d.aspects & kOnlyInB;
    if (!only_b) o.number("type_a", d.a.event_type).number("size_a", d.a.payload_size);
    if (!only_a) o.number("type_b", d.b.event_type).number("size_b", d.b.payload_size);
    if (d.aspects & kPayload && !(d.aspects & kPayloadState)) {
        o.number("byte", d.first_byte);
        if (auto f = field(r, d); !f.empty()) o.string("field", f);
    }
    if (d.aspects & kFlow) {
        std::vector<std::uint64_t> tags;
        for (unsigned i = 0; i < 4; ++i)
            if (d.flows & (1u << i)) tags.push_back(i);
        o.numbers("flow_tags", tags);
    }
    if (d.aspects & kTime) o.number("time_a", d.a.record_epoch_nanos).number("time_b", d.b.record_epoch_nanos);
    if (d.aspects & kOffset) o.number("offset_a", d.a.payload_buf_offset).number("offset_b", d.b.payload_buf_offset);
    o.string("text", describe(r, d));
    std::string text = o.text();
    text.pop_back();  // JsonObject writes numbers, strings and objects; the list of words goes in by hand
    return text + ",\"differs\":[" + differs + "]}";
}

JsonObject side_json(const DiffSide& s) {
    JsonObject o;
    o.string("source", s.path).number("events", s.events).number("gaps", s.gaps).number("gap_seqnos", s.gap_seqnos);
    return o;
}

}  // namespace

void print_diff_text(const DiffReport& r, bool by_member) {
    std::string out;
    if (!r.first) {
        out += fmt::format("equal: {} events\n", r.sides[0].events);
    } else {
        out += fmt::format("first difference: {}: {}\n", where(r, *r.first, r.seqno_blanked), describe(r, *r.first));
        for (const auto& d : r.listed) out += fmt::format("  {}: {}\n", where(r, d, r.seqno_blanked), describe(r, d));
        if (r.max == 0 && r.partial)
            out += "  reading stopped at the first difference (--max 0)\n";
        else if (r.more)
            out += fmt::format("  ... more differences not listed (--max {}){}\n", r.max,
                               r.partial ? "; reading stopped there" : "");
    }
    if (by_member)
        for (const auto& [member, c] : r.members)
            out += fmt::format("member {}: {} events in A, {} in B, {} differ\n", member, c.events_a, c.events_b, c.differ);
    std::size_t equal = 0;
    for (const auto& [label, c] : r.spans) {  // --by SPAN: the instances that differ
        if (c.differ == 0 && c.events_a == c.events_b) {
            equal += label.has_value();
            continue;
        }
        out += fmt::format("{}: {} events in A, {} in B, {} differ\n",
                           label ? fmt::format("{} {}", r.span, *label) : fmt::format("outside any {}", r.span),
                           c.events_a, c.events_b, c.differ);
    }
    if (!r.span.empty()) out += fmt::format("{} {} instances equal\n", equal, r.span);
    for (int i = 0; i < 2; ++i)
        out += fmt::format("{}: {}  {} events, {} gaps ({} seqnos){}\n", i == 0 ? 'A' : 'B', printable(r.sides[i].path),
                           r.sides[i].events, r.sides[i].gaps, r.sides[i].gap_seqnos,
                           r.partial ? " read before stopping" : "");
    fmt::print("{}", out);
}

void print_diff_json(const DiffReport& r, bool by_member) {
    JsonObject o;
    o.boolean("equal", !r.first).object("a", side_json(r.sides[0])).object("b", side_json(r.sides[1]));
    o.number("listed", r.listed.size()).boolean("more", r.more).boolean("partial", r.partial);
    std::string text = o.text();
    text.pop_back();
    text += ",\"first\":" + (r.first ? difference_json(r, *r.first, r.seqno_blanked) : std::string("null"));
    text += ",\"differences\":[";
    for (std::size_t i = 0; i < r.listed.size(); ++i)
        text += (i ? "," : "") + difference_json(r, r.listed[i], r.seqno_blanked);
    text += "]";
    if (by_member) {
        text += ",\"members\":[";
        bool comma = false;
        for (const auto& [member, c] : r.members) {
            JsonObject m;
            m.number("member", member).number("events_a", c.events_a).number("events_b", c.events_b)
                .number("differ", c.differ);
            text += (comma ? "," : "") + m.text();
            comma = true;
        }
        text += "]";
    }
    if (!r.span.empty()) {
        text += ",\"span\":" + json_quote(r.span) + ",\"spans\":[";
        bool comma = false;
        for (const auto& [label, c] : r.spans) {
            JsonObject m;
            if (label) m.number("label", *label);
            else m.null("label");
            m.number("events_a", c.events_a).number("events_b", c.events_b).number("differ", c.differ);
            text += (comma ? "," : "") + m.text();
            comma = true;
        }
        text += "]";
    }
    fmt::print("{}}}\n", text);
}

}  // namespace evring::cli
