// One assembled span instance as JSON (assembled_json.hpp).
#include "query/assembled_json.hpp"

#include <fmt/format.h>

#include <map>
#include <vector>

#include "query/event_json.hpp"
#include "util/text_escape.hpp"
#include "util/utc_time.hpp"

namespace evring {
namespace {

std::string hex(const std::vector<std::byte>& bytes) {
    std::string out;
    for (std::byte b : bytes) out += fmt::format("{:02x}", static_cast<unsigned>(b));
    return out;
}

std::string quoted(std::string_view text) {
    std::string out;
    append_json_string(out, text);
    return out;
}

std::string utc(std::uint64_t nanos) {
    char text[kUtcTimeSize];
    return std::string(text, write_utc_time(nanos, text));
}

// An event as the instance keeps it: a payload it could not copy counts as lost.
void put_event(std::string& out, const Schema& schema, const AssembledEvent& e, const AssembledJsonOptions& options) {
    const auto state = e.payload_state == PayloadState::Ok ? EventJsonPayload::Ok : EventJsonPayload::Expired;
    append_event_json(out, schema, e.descriptor, state, e.payload, {.member = -1, .payload_hex = options.payload_hex});
}

// span .. end: what every instance has.
void put_head(std::string& out, const AssembledSpan& s, const Schema& schema, const AssembledJsonOptions& options) {
    const AssembledEvent& first = s.events.front();
    const AssembledEvent& last = s.events.back();
    out += fmt::format("{{\"span\":{},\"label\":{},\"state\":\"{}\"", quoted(s.span->name), s.label,
                       to_string(s.state));
    if (!s.id.empty()) out += fmt::format(",\"id\":\"0x{}\"", hex(s.id));
    out += fmt::format(",\"first_seqno\":{},\"last_seqno\":{},\"event_count\":{},\"stages\":[",
                       first.descriptor.seqno, last.descriptor.seqno, s.events.size());
    for (std::size_t i = 0; i < s.stages.size(); ++i)
        out += fmt::format("{}{{\"stage\":{},\"seqno\":{},\"time\":\"{}\"}}", i ? "," : "",
                           quoted(s.stages[i].name), s.stages[i].seqno, utc(s.stages[i].nanos));
    out += ']';
    if (s.state == AssembledSpan::State::Broken)
        out += fmt::format(",\"reassembly_error\":{{\"lost_first\":{},\"lost_last\":{},\"lost\":{}}}", s.lost_first,
                           s.lost_first + s.lost_count - 1, s.lost_count);
    out += ",\"begin\":";
    put_event(out, schema, first, options);
    out += ",\"end\":";
    if (!s.stages.empty() && s.stages.front().name == "ended") put_event(out, schema, last, options);
    else out += "null";
}

}  // namespace

std::string assembled_json(const AssembledSpan& s, const Schema& schema, const AssembledJsonOptions& options) {
    std::string out;
    put_head(out, s, schema, options);
    const bool ended = !s.stages.empty() && s.stages.front().name == "ended";
    // Each nested span's instances, under the span's name, in the order they began.
    std::map<std::string, std::vector<const AssembledNested*>> by_span;
    for (const AssembledNested& n : s.nested) by_span[n.span->name].push_back(&n);
    for (const auto& [name, instances] : by_span) {
        out += fmt::format(",{}:[", quoted(name));
        for (std::size_t i = 0; i < instances.size(); ++i) {
            out += fmt::format("{}{{\"key\":{},\"events\":[", i ? "," : "", instances[i]->key);
            for (std::size_t k = 0; k < instances[i]->events.size(); ++k) {
                if (k > 0) out += ',';
                put_event(out, schema, s.events[instances[i]->events[k]], options);
            }
            out += "]}";
        }
        out += ']';
    }
    out += ",\"other_events\":[";
    bool comma = false;
    for (std::size_t index : s.outside) {
        if (index == 0 || (ended && index + 1 == s.events.size())) continue;  // begin and end, above
        if (comma) out += ',';
        put_event(out, schema, s.events[index], options);
        comma = true;
    }
    out += "]}";
    return out;
}

std::string_view assembled_state_word(const AssembledSpan& s, std::string_view stage) {
    if (s.state != AssembledSpan::State::Complete) return to_string(s.state);
    return stage.empty() ? std::string_view("ended") : stage;
}

std::string assembled_name(const AssembledSpan& s, std::string_view stage) {
    return fmt::format("{}:{}:{}:{}", s.span->name, s.label, hex(s.id), assembled_state_word(s, stage));
}

}  // namespace evring
