// tools/evring/assemble_sink.hpp — `evring watch SRC --assemble SPAN
// [--stage NAME]`: whole span instances (a Monad block with its
// transactions and its commit stages) instead of events, assembled by the
// library's public SpanReader (evring/query/span_reader.hpp), pushed to as a
// follow loop's sink, as the C ABI and Python pull from it. docs/cli.md,
// "Assembled blocks".
//
// jsonl: one object per instance, the library's (query/assembled_json.hpp,
// shared with relay and mirror --assemble): span, label, id, state
// (complete, abandoned: a rival the chain did not take, broken: a gap inside
// it, with reassembly_error naming the lost seqnos), its first and last
// seqno, its stages in the order reached, its begin and end events, each
// nested span's instances with their events (as `watch --format jsonl`
// prints them), and its other events. text: one line per instance. Gaps and notices go to
// stderr as watch's do; the summary says what was handed out, abandoned,
// broken, left unfinished and left unassembled.
//
// Thread safety: one thread.
#pragma once

#include <cstdint>
#include <string>

#include "evring/query/span_reader.hpp"
#include "evring/source/follow.hpp"
#include "output/event_format.hpp"
#include "output/output.hpp"
#include "watch.hpp"

namespace evring::cli {

class AssembleSink final : public FollowSink {
public:
    // `lines`: watch's sink, which says gaps and notices on stderr.
    AssembleSink(SpanReader& assembler, WatchSink& lines, EventPrinter& printer, OutputBuffer& out,
                 Format format, std::string stage)
        : assembler_(assembler), lines_(lines), printer_(printer), out_(out), format_(format),
          stage_(std::move(stage)) {}

    void started(const EventSource& source) override { lines_.started(source); }
    bool event(const SourceEvent& event) override;
    bool gap(const SourceGap& gap) override;
    void notice(std::string_view text) override { lines_.notice(text); }
    // The source ended: what is still open is counted, not printed.
    void finish();
    std::string summary() const;  // "3 blocks (finalized) printed, ..."

private:
    void print_ready();
    void print(const AssembledSpan& s);

    SpanReader& assembler_;
    WatchSink& lines_;
    EventPrinter& printer_;
    OutputBuffer& out_;
    Format format_;
    std::string stage_;
    std::uint64_t printed_ = 0;
};

}  // namespace evring::cli
