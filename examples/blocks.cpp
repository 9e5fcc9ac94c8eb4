// blocks: whole blocks of a Monad ring, snapshot or recording, with their
// transactions and commit stages, through the public SpanReader
// (evring/query/span_reader.hpp), as Monad's SDK hands them out.
//
//   blocks SOURCE [STAGE] [SPAN]
//
// Reads SOURCE from its oldest event to its end and prints one line per
// instance of SPAN ("block") once it reaches STAGE ("finalized"; "" for as
// soon as it ends), in the words of `evring watch SOURCE --from oldest
// --assemble SPAN --stage STAGE` (tests/install_test.sh compares the two).
// On a live ring it stops once it has read what the ring holds.
#include <cstdio>
#include <map>
#include <string>

#include "evring/query/span_reader.hpp"
#include "evring/schema/schema_resolve.hpp"
#include "evring/source/source_open.hpp"

namespace {

void print(const evring::AssembledSpan& s) {
    std::string nested;
    std::map<std::string, std::size_t> per_span;  // by name, as evring watch counts them
    for (const evring::AssembledNested& n : s.nested) ++per_span[n.span->name];
    for (const auto& [name, count] : per_span) nested += ", " + std::to_string(count) + " " + name;
    std::string stages;
    for (const evring::AssembledStage& st : s.stages) stages += " " + st.name + "@" + std::to_string(st.seqno);
    std::printf("%s %llu %s: seqno %llu..%llu, %zu events%s; stages%s", s.span->name.c_str(),
                static_cast<unsigned long long>(s.label), evring::to_string(s.state),
                static_cast<unsigned long long>(s.events.front().descriptor.seqno),
                static_cast<unsigned long long>(s.events.back().descriptor.seqno), s.events.size(), nested.c_str(),
                stages.empty() ? " none" : stages.c_str());
    if (s.state == evring::AssembledSpan::State::Broken)
        std::printf("; reassembly error: seqno %llu..%llu lost", static_cast<unsigned long long>(s.lost_first),
                    static_cast<unsigned long long>(s.lost_first + s.lost_count - 1));
    std::printf("\n");
}

int fail(const std::string& why) {
    std::fprintf(stderr, "blocks: %s\n", why.c_str());
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || argc > 4) {
        std::fprintf(stderr, "usage: blocks SOURCE [STAGE] [SPAN]\n");
        return 2;
    }
    const std::string stage = argc > 2 ? argv[2] : "finalized";
    const std::string span = argc > 3 ? argv[3] : "block";
    auto source = evring::open_source(argv[1], {});
    if (!source) return fail(source.error().message());
    auto found = evring::resolve_schema(**source);
    if (!found) return fail(found.error().message());
    if (!found->schema) return fail(std::string(argv[1]) + " carries no schema to find spans in");
    auto blocks = evring::SpanReader::make(*found->schema, span, stage);
    if (!blocks) return fail(blocks.error().message());
    if (auto seek = (*source)->seek(evring::Position::oldest()); !seek) return fail(seek.error().message());
    evring::AssembledSpan block;
    evring::SourceItem item;
    for (;;) {
        switch (blocks->next_span(**source, block, item)) {
        case evring::SourceStep::Event: print(block); break;
        case evring::SourceStep::Gap: break;  // the blocks it broke come out as "broken", naming the seqnos
        case evring::SourceStep::Notice:
            std::fprintf(stderr, "blocks: %.*s\n", static_cast<int>(item.notice.size()), item.notice.data());
            break;
        case evring::SourceStep::NotReady: blocks->finish(); break;  // what the ring holds now, no more
        case evring::SourceStep::End: return 0;
        case evring::SourceStep::Failed: return fail((*source)->error().message());
        }
    }
}
