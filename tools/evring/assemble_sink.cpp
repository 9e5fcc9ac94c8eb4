// watch --assemble (assemble_sink.hpp).
#include "assemble_sink.hpp"

#include <fmt/format.h>

#include <map>

#include "commands.hpp"
#include "query/assembled_json.hpp"

namespace evring::cli {

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
    assembler_.finish();
    print_ready();
}

void AssembleSink::print_ready() {
    AssembledSpan s;
    while (assembler_.take(s)) print(s);
}

void AssembleSink::print(const AssembledSpan& s) {
    ++printed_;
    if (format_ != Format::Jsonl) {
        const AssembledEvent& first = s.events.front();
        const AssembledEvent& last = s.events.back();
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
    // The library's object (query/assembled_json.hpp): relay and mirror --assemble send the same bytes.
    out_.put(assembled_json(s, assembler_.schema(), {.payload_hex = printer_.payload_hex()}));
    out_.put('\n');
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
