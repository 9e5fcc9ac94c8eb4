// Positions by meaning (span_seek.hpp, position.hpp's SPAN): parsing
// `block:N`, the schema's span label/id/opener/stages, and on the real
// snapshots (EVRING_CONFORMANCE_DIR) every block found by number, by id and
// as `latest`, each stage found, and unknown labels refused by name.
#include "query/span_seek.hpp"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "query/recording_span_marks.hpp"
#include "recording/recording_index.hpp"
#include "recording/recording_writer.hpp"
#include "evring/schema/schema_resolve.hpp"
#include "evring/source/source_open.hpp"

namespace evring {
namespace {

TEST(SpanPosition, ParsesLabelLatestIdAndStage) {
    auto p = parse_start("block:15000009");
    ASSERT_TRUE(p.ok()) << p.error().message();
    EXPECT_EQ(p->kind, Position::Kind::Span);
    EXPECT_EQ(p->span.span, "block");
    EXPECT_EQ(p->span.stage, "");
    EXPECT_EQ(p->span.pick, SpanRef::Pick::Label);
    EXPECT_EQ(p->span.label, 15000009u);
    p = parse_start("block.finalized:latest");
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->span.stage, "finalized");
    EXPECT_EQ(p->span.pick, SpanRef::Pick::Latest);
    p = parse_start("block:0x00e4E1c9");
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->span.pick, SpanRef::Pick::Id);
    EXPECT_EQ(p->span.id, (std::vector<std::uint8_t>{0x00, 0xe4, 0xe1, 0xc9}));
    // Times keep their meaning: the part before ':' is not a name.
    p = parse_start("2026-11-22T01:45:00Z");
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->kind, Position::Kind::AbsoluteTime);
}

TEST(SpanPosition, RefusesMalformedValuesByName) {
    for (const char* bad : {"block:", "block:x1", "block:0x123", "block:0xzz", "block:-1"}) {
        auto p = parse_start(bad);
        ASSERT_FALSE(p.ok()) << bad;
        EXPECT_NE(p.error().message().find(std::string("bad --from '") + bad + "'"), std::string::npos)
            << p.error().message();
    }
    // A stop names an instance by its label (span_limit.hpp); latest and an id are a start's.
    auto stop = parse_stop("block.finalized:5");
    ASSERT_TRUE(stop.ok()) << stop.error().message();
    EXPECT_EQ(stop->kind, Position::Kind::Span);
    EXPECT_EQ(stop->span.stage, "finalized");
    EXPECT_EQ(stop->span.label, 5u);
    for (const char* start_only : {"block:latest", "block:0x00e4"}) {
        stop = parse_stop(start_only);
        ASSERT_FALSE(stop.ok()) << start_only;
        EXPECT_NE(stop.error().message().find("only for a start"), std::string::npos) << stop.error().message();
    }
}

const char* kSpanSchema = R"(content_type = 1001
content_name = "t"
flow_tags = ["group"]
[[event]]
number = 1
name = "OPEN"
fields = [{ name = "n", type = "u32" }, { name = "key", type = "bytes8" }]
[[event]]
number = 2
name = "CLOSE"
[[event]]
number = 3
name = "DONE"
fields = [{ name = "n", type = "u64" }]
[span.g]
begin = "OPEN"
end = "CLOSE"
key = ["group"]
)";

TEST(SpanSchema, DeclaresLabelIdOpenerAndStages) {
    auto s = Schema::parse(std::string(kSpanSchema) +
                           "label = \"n\"\nid = \"key\"\nopener = \"group\"\n"
                           "stages = [{ name = \"done\", event = \"DONE\", label = \"n\" }]\n");
    ASSERT_TRUE(s.ok()) << s.error().message();
    const SchemaSpan* g = s->span("g");
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->label, "n");
    EXPECT_EQ(g->id, "key");
    EXPECT_EQ(g->opener, std::optional<std::uint8_t>(0));
    ASSERT_NE(g->stage("done"), nullptr);
    EXPECT_EQ(g->stage("done")->event, 3);
    // They change the hash; without them the hash is what it was.
    auto plain = Schema::parse(kSpanSchema);
    ASSERT_TRUE(plain.ok());
    EXPECT_NE(plain->hash_hex(), s->hash_hex());
    EXPECT_EQ(plain->canonical_form().find("span_"), std::string::npos);
}

TEST(SpanSchema, RefusesFieldsOfTheWrongKindOrMissing) {
    const std::pair<const char*, const char*> cases[] = {
        {"label = \"key\"\n", "is not an unsigned integer"},
        {"id = \"n\"\n", "is not a byte array"},
        {"label = \"nope\"\n", "has no field 'nope'"},
        {"opener = \"other\"\n", "not one of the schema's flow_tags"},
        {"stages = [{ name = \"done\", event = \"DONE\", label = \"n\" }]\n", "stages need a label"},
        {"label = \"n\"\nstages = [{ name = \"done\", event = \"NOPE\", label = \"n\" }]\n", "unknown event 'NOPE'"},
    };
    for (const auto& [extra, reason] : cases) {
        auto s = Schema::parse(std::string(kSpanSchema) + extra, "t.toml");
        ASSERT_FALSE(s.ok()) << extra;
        EXPECT_NE(s.error().message().find(reason), std::string::npos) << s.error().message();
    }
}

std::vector<std::string> snapshots() {
    std::vector<std::string> files;
    const char* dir = std::getenv("EVRING_CONFORMANCE_DIR");
    if (dir == nullptr || *dir == '\0') return files;
    if (DIR* d = ::opendir(dir)) {
        while (dirent* entry = ::readdir(d)) {
            const std::string name = entry->d_name;
            if (name.size() > 4 && name.compare(name.size() - 4, 4, ".zst") == 0)
                files.push_back(std::string(dir) + "/" + name);
        }
        ::closedir(d);
    }
    std::sort(files.begin(), files.end());
    return files;
}

std::uint64_t u64_at(std::span<const std::byte> payload, std::uint32_t offset) {
    std::uint64_t v = 0;
    std::memcpy(&v, payload.data() + offset, 8);
    return v;
}

// Every block of the snapshot, found from the front: number -> BLOCK_START seqno.
struct Blocks {
    std::map<std::uint64_t, std::uint64_t> start;
    std::map<std::uint64_t, std::uint64_t> finalized;  // the first BLOCK_FINALIZED of each number
    std::map<std::uint64_t, std::vector<std::uint8_t>> id;
    std::uint64_t newest_start = 0;
};

Blocks scan(EventSource& source, const Schema& schema) {
    Blocks b;
    const SchemaEvent& start = *schema.event("BLOCK_START");
    const SchemaEvent& fin = *schema.event("BLOCK_FINALIZED");
    const auto number = *schema.find_field(start, "block_tag.block_number");
    const auto id = *schema.find_field(start, "block_tag.id");
    const auto fin_number = *schema.find_field(fin, "block_number");
    EXPECT_TRUE(source.seek(Position::oldest()).ok());
    SourceItem item;
    while (source.next(item, PayloadRead::Copy) != SourceStep::End) {
        const auto& e = item.event;
        if (e.descriptor.event_type == start.number) {
            const std::uint64_t n = u64_at(e.payload, number.offset);
            b.start.emplace(n, e.descriptor.seqno);
            const auto* p = reinterpret_cast<const std::uint8_t*>(e.payload.data()) + id.offset;
            b.id.emplace(n, std::vector<std::uint8_t>(p, p + 32));
            b.newest_start = e.descriptor.seqno;
        } else if (e.descriptor.event_type == fin.number) {
            b.finalized.emplace(u64_at(e.payload, fin_number.offset), e.descriptor.seqno);
        }
    }
    return b;
}

SpanRef ref(std::string text) {
    auto p = parse_start(text);
    EXPECT_TRUE(p.ok()) << text;
    return p->span;
}

TEST(SpanSeekOnRealSnapshots, FindsEveryBlockByNumberIdAndLatest) {
    const auto files = snapshots();
    if (files.empty()) GTEST_SKIP() << "EVRING_CONFORMANCE_DIR does not name the real snapshots";
    for (const auto& file : files) {
        SCOPED_TRACE(file);
        auto source = open_source(file, {});
        ASSERT_TRUE(source.ok()) << source.error().message();
        auto found = resolve_schema(**source);
        ASSERT_TRUE(found.ok() && found->schema);
        const Schema& schema = *found->schema;
        const Blocks blocks = scan(**source, schema);
        ASSERT_FALSE(blocks.start.empty());
        for (const auto& [number, seqno] : blocks.start) {
            auto at = resolve_span(**source, ref("block:" + std::to_string(number)), schema);
            ASSERT_TRUE(at.ok()) << at.error().message();
            EXPECT_EQ(*at, seqno) << "block " << number;
        }
        auto latest = resolve_span(**source, ref("block:latest"), schema);
        ASSERT_TRUE(latest.ok());
        EXPECT_EQ(*latest, blocks.newest_start);
        // By id (the whole id, and a prefix that only one block has: its last bytes differ).
        const auto& [first_number, first_id] = *blocks.id.begin();
        std::string hex = "block:0x";
        for (auto byte : first_id) hex += fmt::format("{:02x}", byte);
        auto by_id = resolve_span(**source, ref(hex), schema);
        ASSERT_TRUE(by_id.ok()) << by_id.error().message();
        EXPECT_EQ(*by_id, blocks.start.at(first_number));
        // Stages: the BLOCK_FINALIZED of each block that has one (a sample, each a forward scan).
        int checked = 0;
        for (const auto& [number, seqno] : blocks.finalized) {
            if (checked++ % 50 != 0) continue;
            auto at = resolve_span(**source, ref("block.finalized:" + std::to_string(number)), schema);
            ASSERT_TRUE(at.ok()) << at.error().message();
            EXPECT_EQ(*at, seqno) << "finalized " << number;
        }
        // A label no event carries: an error that names it and what is there.
        auto missing = resolve_span(**source, ref("block:99999999999"), schema);
        ASSERT_FALSE(missing.ok());
        EXPECT_NE(missing.error().message().find("block:99999999999: no block 99999999999 in snapshot"),
                  std::string::npos) << missing.error().message();
        EXPECT_NE(missing.error().message().find(fmt::format("run from {} to {}", blocks.start.begin()->first,
                                                             blocks.start.rbegin()->first)),
                  std::string::npos) << missing.error().message();
        auto no_span = resolve_span(**source, ref("blok:1"), schema);
        ASSERT_FALSE(no_span.ok());
        EXPECT_NE(no_span.error().message().find("no span 'blok' (its spans: block, txn)"), std::string::npos);
        auto no_stage = resolve_span(**source, ref("block.final:1"), schema);
        ASSERT_FALSE(no_stage.ok());
        EXPECT_NE(no_stage.error().message().find("(its stages: finalized, verified)"), std::string::npos);
        // seek_source positions the source at the block: the next event is its BLOCK_START.
        const auto& [number, seqno] = *blocks.start.rbegin();
        auto start = parse_start("block:" + std::to_string(number));
        ASSERT_TRUE(seek_source(**source, *start, &schema).ok());
        SourceItem item;
        ASSERT_EQ((*source)->next(item), SourceStep::Event);
        EXPECT_EQ(item.event.descriptor.seqno, seqno);
    }
}

// A recording of a real snapshot, written with the schema's span marks as
// `evring record` writes it: block:0xID (a whole id, and its first 4 bytes)
// comes from the index, gives the snapshot's event, and says nothing.
TEST(SpanSeekOnRealSnapshots, RecordingFindsBlocksByIdThroughItsIndex) {
    const auto files = snapshots();
    if (files.empty()) GTEST_SKIP() << "EVRING_CONFORMANCE_DIR does not name the real snapshots";
    // The one with 30 blocks (emn-30b-15m), else the first.
    auto pick = std::find_if(files.begin(), files.end(), [](const std::string& f) { return f.find("30b") != std::string::npos; });
    auto source = open_source(pick == files.end() ? files.front() : *pick, {});
    ASSERT_TRUE(source.ok()) << source.error().message();
    auto found = resolve_schema(**source);
    ASSERT_TRUE(found.ok() && found->schema);
    const Schema& schema = *found->schema;
    const Blocks blocks = scan(**source, schema);
    ASSERT_GT(blocks.id.size(), 5u);
    const std::string path = fmt::format("/dev/shm/evring-span-seek-{}.evrec", ::getpid());
    {
        RingHeader header{};
        header.magic = kRingMagic;
        header.content_type = (*source)->identity().content_type;
        header.schema_hash = (*source)->identity().schema_hash;
        header.size = (*source)->identity().ring_size;
        RecordingOptions options;
        options.schema = (*source)->schema();
        options.span_marker = span_marker(schema);
        auto writer = RecordingWriter::create(path, header, options);
        ASSERT_TRUE(writer.ok()) << writer.error().message();
        ASSERT_TRUE((*source)->seek(Position::oldest()).ok());
        SourceItem item;
        for (SourceStep step; (step = (*source)->next(item, PayloadRead::Copy)) != SourceStep::End;) {
            ASSERT_NE(step, SourceStep::Failed);
            if (step != SourceStep::Event) continue;
            const EventDescriptor& d = item.event.descriptor;
            std::byte* dst = writer->begin_event(d);
            const bool ok = item.event.payload_state == PayloadState::Ok && item.event.payload.size() == d.payload_size;
            if (ok) std::memcpy(dst, item.event.payload.data(), d.payload_size);
            ASSERT_TRUE(writer->end_event(ok).ok());
        }
        ASSERT_TRUE(writer->finish().ok());
    }
    auto recording = open_source(path, {});
    ASSERT_TRUE(recording.ok()) << recording.error().message();
    auto hex = [](const std::vector<std::uint8_t>& id, std::size_t n) {
        std::string text = "block:0x";
        for (std::size_t i = 0; i < n; ++i) text += fmt::format("{:02x}", id[i]);
        return text;
    };
    int checked = 0;
    for (const auto& [number, id] : blocks.id) {
        if (checked++ % 5 != 0) continue;
        for (std::size_t bytes : {std::size_t{32}, std::size_t{4}}) {
            // The newest block whose id starts with these bytes.
            std::uint64_t want = 0;
            for (const auto& [n, other] : blocks.id)
                if (std::equal(id.begin(), id.begin() + bytes, other.begin())) want = std::max(want, blocks.start.at(n));
            std::string notice;
            auto at = resolve_span(**recording, ref(hex(id, bytes)), schema, &notice);
            ASSERT_TRUE(at.ok()) << at.error().message();
            EXPECT_EQ(*at, want) << "block " << number << ", " << bytes << " bytes";
            EXPECT_EQ(notice, "") << "block " << number;
        }
    }
    ::unlink(path.c_str());
}

}  // namespace
}  // namespace evring
