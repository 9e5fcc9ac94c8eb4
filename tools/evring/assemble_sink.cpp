// watch --assemble (assemble_sink.hpp).
#include "assemble_sink.hpp"

#include <fmt/format.h>

#include <map>

#include "commands.hpp"
#include "output/escape.hpp"
#include "output/json.hpp"

namespace evring::cli {
namespace {

std::string hex(const std::vector<std::byte>& bytes) {
    std::string out = "0x";
    for (std::byte b : bytes) out += fmt::format("{:02x}", static_cast<unsigned>(b));
    return out;
}

}  // namespace

bool AssembleSink::event(const SourceEvent& event) {
    assembler_.event(event);
    print_ready();
    return !out_.failed();
}

bool AssembleSink::gap(const SourceGap& gap) {
    assembler_.gap(gap);  // the instances it breaks go out first
    print_ready();
    return lines_.gap(gap) && !out_.failed();
}

void AssembleSink::finish() {
    assembler_.end();
    print_ready();
}

void AssembleSink::print_ready() {
    while (auto s = assembler_.take()) print(*s);
}

void AssembleSink::put_event(const AssembledEvent& e) {
    PayloadView payload;
    payload.state = e.payload_state == PayloadState::Ok ? PayloadView::State::Ok : PayloadView::State::Expired;
    payload.bytes = e.payload;
    printer_.print(scratch_, e.descriptor, payload);
    std::string text = scratch_.take();
    while (!text.empty() && text.back() == '\n') text.pop_back();
    out_.put(text);
}

void AssembleSink::print(const AssembledSpan& s) {
    ++printed_;
    const AssembledEvent& first = s.events.front();
    const AssembledEvent& last = s.events.back();
    if (format_ != Format::Jsonl) {
        std::string stages;
        for (const AssembledStage& st : s.stages) stages += fmt::format(" {}@{}", st.name, st.seqno);
        std::string nested;
        std::map<std::string, std::size_t> per_span;
        for (const AssembledNested& n : s.nested) ++per_span[n.span->name];
        for (const auto& [name, count] : per_span) nested += fmt::format(", {} {}", count, name);
        out_.put(fmt::format("{} {} {}: seqno {}..{}, {} events{}; stages{}{}\n", s.span->name, s.label,
                             to_string(s.state), first.descriptor.seqno, last.descriptor.seqno, s.events.size(),
                             nested, stages.empty() ? " none" : stages,
                             s.state == AssembledSpan::State::Broken
                                 ? fmt::format("; reassembly error: seqno {}..{} lost", s.lost_first,
                                               s.lost_first + s.lost_count - 1)
                                 : std::string()));
        out_.maybe_flush();
        return;
    }
    out_.put(fmt::format("{{\"span\":{},\"label\":{},\"state\":\"{}\"", json_quote(s.span->name), s.label,
                         to_string(s.state)));
    if (!s.id.empty()) out_.put(fmt::format(",\"id\":\"{}\"", hex(s.id)));
    out_.put(fmt::format(",\"first_seqno\":{},\"last_seqno\":{},\"event_count\":{},\"stages\":[",
                         first.descriptor.seqno, last.descriptor.seqno, s.events.size()));
    for (std::size_t i = 0; i < s.stages.size(); ++i)
        out_.put(fmt::format("{}{{\"stage\":{},\"seqno\":{},\"time\":\"{}\"}}", i ? "," : "",
                             json_quote(s.stages[i].name), s.stages[i].seqno, utc_time(s.stages[i].nanos)));
    out_.put("]");
    if (s.state == AssembledSpan::State::Broken)
        out_.put(fmt::format(",\"reassembly_error\":{{\"lost_first\":{},\"lost_last\":{},\"lost\":{}}}", s.lost_first,
                             s.lost_first + s.lost_count - 1, s.lost_count));
    out_.put(",\"begin\":");
    put_event(first);
    const bool ended = !s.stages.empty() && s.stages.front().name == "ended";
    out_.put(",\"end\":");
    if (ended) put_event(last);
    else out_.put("null");
    // Each nested span's instances, under the span's name, in the order they began.
    std::map<std::string, std::vector<const AssembledNested*>> by_span;
    for (const AssembledNested& n : s.nested) by_span[n.span->name].push_back(&n);
    for (const auto& [name, instances] : by_span) {
        out_.put(fmt::format(",{}:[", json_quote(name)));
        for (std::size_t i = 0; i < instances.size(); ++i) {
            out_.put(fmt::format("{}{{\"key\":{},\"events\":[", i ? "," : "", instances[i]->key));
            for (std::size_t k = 0; k < instances[i]->events.size(); ++k) {
                if (k > 0) out_.put(',');
                put_event(s.events[instances[i]->events[k]]);
            }
            out_.put("]}");
        }
        out_.put("]");
    }
    out_.put(",\"other_events\":[");
    bool comma = false;
    for (std::size_t index : s.outside) {
        if (index == 0 || (ended && index + 1 == s.events.size())) continue;  // begin and end, above
        if (comma) out_.put(',');
        put_event(s.events[index]);
        comma = true;
    }
    out_.put("]}\n");
    out_.maybe_flush();
}

std::string AssembleSink::summary() const {
    const AssemblerCounts& c = assembler_.counts();
    return fmt::format("{} {} instances printed ({} complete{}, {} abandoned, {} broken by a gap); {} left "
                       "unfinished, {} events of instances begun before reading left unassembled",
                       printed_, stage_.empty() ? "ended" : stage_, c.handed_out,
                       stage_.empty() ? std::string() : fmt::format(" at stage {}", stage_), c.abandoned, c.broken,
                       c.unfinished, c.unassembled);
}

}  // namespace evring::cli
