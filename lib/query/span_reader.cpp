// Whole span instances read from a source (evring/query/span_reader.hpp):
// the public face of SpanAssembler.
#include "evring/query/span_reader.hpp"

#include "query/span_assembler.hpp"

namespace evring {

const char* to_string(AssembledSpan::State state) noexcept {
    switch (state) {
    case AssembledSpan::State::Complete: return "complete";
    case AssembledSpan::State::Abandoned: return "abandoned";
    case AssembledSpan::State::Broken: return "broken";
    }
    return "?";
}

Result<SpanReader> SpanReader::make(const Schema& schema, std::string_view span, std::string_view stage) {
    auto made = SpanAssembler::make(schema, span, stage);
    if (!made) return std::move(made).error();
    return SpanReader(std::make_unique<SpanAssembler>(std::move(*made)));
}

SpanReader::SpanReader(std::unique_ptr<SpanAssembler> assembler) : assembler_(std::move(assembler)) {}
SpanReader::SpanReader(SpanReader&&) noexcept = default;
SpanReader& SpanReader::operator=(SpanReader&&) noexcept = default;
SpanReader::~SpanReader() = default;

void SpanReader::event(const SourceEvent& e) { assembler_->event(e); }
void SpanReader::gap(const SourceGap& g) { assembler_->gap(g); }

void SpanReader::finish() {
    if (ended_) return;  // a source ends once
    assembler_->end();
    ended_ = true;
}

bool SpanReader::take(AssembledSpan& out) {
    auto s = assembler_->take();
    if (!s) return false;
    out = std::move(*s);
    return true;
}

const AssemblerCounts& SpanReader::counts() const noexcept { return assembler_->counts(); }
const Schema& SpanReader::schema() const noexcept { return assembler_->schema(); }

}  // namespace evring
