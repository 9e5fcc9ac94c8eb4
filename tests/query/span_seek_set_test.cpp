// Span positions in a ring set recording (span_seek.hpp, recording_index.hpp's
// IndexAnswer::candidates): `g:N`, `g.done:N` and `g:latest` found through the
// index, although a span mark's seqno is some member's own, with the same
// event (member and seqno) as a scan from the start; an id is read from the
// start, said once. A forged label in an early block shows which path ran:
// a scan would stop at it, the index does not list it.
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "query/span_seek.hpp"
#include "query/recording_span_marks.hpp"
#include "recording/recording_index.hpp"
#include "recording/recording_writer.hpp"
#include "source/recording_source.hpp"
#include "support/recording_files.hpp"

namespace evring {
namespace {

using test::Bytes;
using test::TempDir;
using Event = std::pair<std::uint32_t, std::uint64_t>;  // member, seqno

constexpr const char* kSchema = R"(content_type = 1001
content_name = "t"
flow_tags = ["group"]
[[event]]
number = 1
name = "OPEN"
fields = [{ name = "n", type = "u32" }, { name = "key", type = "bytes8" }]
[[event]]
number = 2
name = "OTHER"
[[event]]
number = 3
name = "DONE"
fields = [{ name = "n", type = "u64" }]
[span.g]
begin = "OPEN"
end = "OTHER"
key = ["group"]
label = "n"
id = "key"
stages = [{ name = "done", event = "DONE", label = "n" }]
)";

constexpr std::uint32_t kSteps = 600;
// Members 1 and 0 (in this order) open g:336 with the same seqno, in one
// block: the index lists member 0 first (rows go by member), the file has 1.
constexpr std::uint32_t kTie = 336;

Schema schema() {
    auto s = Schema::parse(kSchema);
    EXPECT_TRUE(s.ok()) << s.error().message();
    return std::move(*s);
}

// Three members, each counting from 1, so their seqnos overlap: member 0
// opens g:STEP on every step; member 1 writes an OTHER and, on even steps,
// opens g:STEP too (before member 0 on every 4th step); member 2 marks
// g.done:STEP on every third. A block per step (about 10 index blocks).
void write_set(const std::string& path, const Schema& s) {
    RecordingOptions options;
    options.ring_set = true;
    options.compress = false;  // raw blocks: the forgery below edits them
    options.span_marker = span_marker(s);
    auto writer = RecordingWriter::create(path, test::recording_source_header(), options);
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    std::uint64_t next[3] = {1, 1, 1};
    std::uint64_t nanos = 1'700'000'000'000'000'000;
    auto put = [&](std::uint32_t member, std::uint16_t type, std::uint64_t label) {
        EventDescriptor e{};
        e.seqno = next[member]++;
        e.event_type = type;
        e.payload_size = 16;
        e.record_epoch_nanos = ++nanos;
        e.reserved = static_cast<std::uint16_t>(member);
        std::byte* p = writer->begin_event(e);
        std::memset(p, 0, 16);
        std::memcpy(p, &label, type == 3 ? 8 : 4);
        std::memcpy(p + 4, &label, 4);  // OPEN's key: the label's bytes
        ASSERT_TRUE(writer->end_event(true).ok());
    };
    for (std::uint32_t step = 1; step <= kSteps; ++step) {
        put(1, 2, 0);
        if (step == kTie) next[0] = next[1] = std::max(next[0], next[1]);
        const bool one_opens = step % 2 == 0;
        if (one_opens && step % 4 == 0) put(1, 1, step);
        put(0, 1, step);
        if (one_opens && step % 4 != 0) put(1, 1, step);
        if (step % 3 == 0) put(2, 3, step);
        ASSERT_TRUE(writer->flush().ok());
    }
    ASSERT_TRUE(writer->finish().ok());
}

// What a scan from the start finds: the first opening (or stage) event of each label.
struct Scanned {
    std::map<std::uint64_t, Event> open, done;
    std::map<std::uint64_t, Event> last_open;  // the newest opening event of each label
    Event latest{};
    std::vector<Event> order;
};

Scanned scan(const std::string& path) {
    Scanned out;
    auto source = RecordingSource::open(path, path);
    EXPECT_TRUE(source.ok());
    SourceItem item;
    for (SourceStep step; (step = (*source)->next(item, PayloadRead::Copy)) != SourceStep::End;) {
        EXPECT_NE(step, SourceStep::Failed);
        if (step != SourceStep::Event) continue;
        const Event e{item.event.member, item.event.descriptor.seqno};
        out.order.push_back(e);
        std::uint64_t label = 0;
        std::memcpy(&label, item.event.payload.data(), item.event.descriptor.event_type == 3 ? 8 : 4);
        if (item.event.descriptor.event_type == 1) {
            out.open.emplace(label, e);
            out.last_open[label] = e;
            out.latest = e;
        }
        if (item.event.descriptor.event_type == 3) out.done.emplace(label, e);
    }
    return out;
}

struct Seeked {
    Event first{~0u, 0};
    std::size_t events = 0;
    std::string notice;
};

Seeked seek(const std::string& path, const std::string& at, const Schema& s, bool count_all = false) {
    Seeked out;
    auto source = RecordingSource::open(path, path);
    EXPECT_TRUE(source.ok());
    auto start = parse_start(at);
    EXPECT_TRUE(start.ok()) << at;
    auto notice = seek_source(**source, *start, &s);
    EXPECT_TRUE(notice.ok()) << at << ": " << notice.error().message();
    if (!notice) return out;
    out.notice = *notice;
    SourceItem item;
    for (SourceStep step; (step = (*source)->next(item, PayloadRead::None)) != SourceStep::End;) {
        if (step == SourceStep::Failed) break;
        if (step != SourceStep::Event) continue;
        if (out.events++ == 0) out.first = {item.event.member, item.event.descriptor.seqno};
        if (!count_all) break;
    }
    return out;
}

TEST(SpanSeekSetRecording, LabelsStagesAndLatestComeFromTheIndexAsFromAScan) {
    TempDir dir;
    const std::string path = dir.file("set.evrec");
    const Schema s = schema();
    write_set(path, s);
    const Scanned want = scan(path);
    ASSERT_EQ(want.open.size(), kSteps);
    for (std::uint32_t label = 1; label <= kSteps; label += (label < 20 || label == kTie - 1 ? 1 : 7)) {
        const Seeked got = seek(path, "g:" + std::to_string(label), s);
        EXPECT_EQ(got.first, want.open.at(label)) << label;
        EXPECT_EQ(got.notice, "") << label;
    }
    // The tie (two candidates that are it, in one block): a scan decides, member 1's.
    const Seeked tie = seek(path, "g:" + std::to_string(kTie), s);
    EXPECT_EQ(tie.first, want.open.at(kTie));
    EXPECT_EQ(tie.first.first, 1u);
    EXPECT_EQ(want.last_open.at(kTie).second, tie.first.second);
    for (const auto& [label, event] : want.done) {
        if (label % 21 != 0) continue;
        const Seeked got = seek(path, "g.done:" + std::to_string(label), s);
        EXPECT_EQ(got.first, event) << label;
        EXPECT_EQ(got.notice, "") << label;
    }
    const Seeked latest = seek(path, "g:latest", s);
    EXPECT_EQ(latest.first, want.latest);
    EXPECT_EQ(latest.notice, "");
    // The merged stream goes on from there, every member's events (not only
    // those at or past the seqno).
    const Seeked rest = seek(path, "g:300", s, true);
    std::size_t at = 0;
    while (want.order[at] != want.open.at(300)) ++at;
    EXPECT_EQ(rest.events, want.order.size() - at);
    // An id: span marks do not say whose seqno they hold; read from the start, said once.
    const Seeked by_id = seek(path, "g:0x2c010000", s);  // key = 300's bytes
    EXPECT_EQ(by_id.first, want.last_open.at(300));  // an id: the newest
    EXPECT_NE(by_id.notice.find("not ids"), std::string::npos) << by_id.notice;
    EXPECT_NE(by_id.notice.find("reads it from the start"), std::string::npos) << by_id.notice;
}

// Member 0's OPEN of g:5 rewritten to say g:500 (its block resealed): a scan
// from the start would stop there; the index, which lists g:500 where it
// was written, leads past it to the real one.
TEST(SpanSeekSetRecording, ForgedEarlyLabelIsNotReadWhenTheIndexLeads) {
    TempDir dir;
    const std::string path = dir.file("set.evrec");
    const Schema s = schema();
    write_set(path, s);
    const Scanned want = scan(path);
    Bytes file = test::read_file(path);
    bool forged = false;
    for (const test::BlockAt& b : test::list_blocks(file)) {
        if (b.header.content != static_cast<std::uint16_t>(BlockContent::Records) || forged) continue;
        const std::uint64_t content = b.offset + sizeof(RecordingBlockHeader);
        for (std::uint64_t pos = 0; pos + sizeof(RecordHeader) <= b.header.stored_size;) {
            RecordHeader head;
            std::memcpy(&head, file.data() + content + pos, sizeof head);
            EventDescriptor d;
            std::memcpy(&d, file.data() + content + pos + sizeof head, sizeof d);
            std::byte* payload = file.data() + content + pos + sizeof head + sizeof d;
            std::uint32_t label = 0;
            if (head.kind == static_cast<std::uint32_t>(RecordKind::Event)) std::memcpy(&label, payload, 4);
            if (head.kind == static_cast<std::uint32_t>(RecordKind::Event) && d.reserved == 0 && d.event_type == 1 &&
                label == 5) {
                label = 500;
                std::memcpy(payload, &label, 4);
                test::reseal_block(file, b.offset);
                forged = true;
                break;
            }
            pos += sizeof head + head.body_size;
        }
    }
    ASSERT_TRUE(forged);
    test::write_file(path, file);
    ASSERT_EQ(scan(path).open.at(500), want.open.at(5));  // what a scan finds now
    const Seeked got = seek(path, "g:500", s);
    EXPECT_EQ(got.first, want.open.at(500));
    EXPECT_EQ(got.notice, "");
}

}  // namespace
}  // namespace evring
