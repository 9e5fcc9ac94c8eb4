// The parts of `evring export` that need no process: the protobuf encoder,
// the Perfetto and Chrome JSON writers (read back field by field), and the
// timeline's layout (tracks, spans on lanes, counters) against a recording
// TraceWriter. The end-to-end run on real snapshots is tests/cli/export_test.sh.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <fmt/format.h>
#include <map>
#include <string>
#include <vector>

#include "export/export_chrome.hpp"
#include "export/export_cmd.hpp"
#include "export/export_perfetto.hpp"
#include "export/export_timeline.hpp"
#include "export/proto_writer.hpp"

namespace evring::cli {
namespace {

std::vector<std::uint8_t> encoded(void (*fill)(ProtoWriter&)) {
    ProtoWriter w;
    fill(w);
    return {w.bytes().begin(), w.bytes().end()};
}

TEST(ProtoWriter, VarintsAreMinimalLittleEndianGroupsOfSeven) {
    std::uint8_t out[10];
    EXPECT_EQ(ProtoWriter::encode_varint(0, out), 1u);
    EXPECT_EQ(out[0], 0);
    EXPECT_EQ(ProtoWriter::encode_varint(127, out), 1u);
    EXPECT_EQ(out[0], 127);
    ASSERT_EQ(ProtoWriter::encode_varint(300, out), 2u);
    EXPECT_EQ(out[0], 0xac);
    EXPECT_EQ(out[1], 0x02);
    ASSERT_EQ(ProtoWriter::encode_varint(UINT64_MAX, out), 10u);
    for (int i = 0; i < 9; ++i) EXPECT_EQ(out[i], 0xff);
    EXPECT_EQ(out[9], 0x01);
}

TEST(ProtoWriter, FieldsCarryTheirNumberAndWireType) {
    EXPECT_EQ(encoded([](ProtoWriter& w) { w.uint(1, 150); }), (std::vector<std::uint8_t>{0x08, 0x96, 0x01}));
    EXPECT_EQ(encoded([](ProtoWriter& w) { w.string(2, "hi"); }), (std::vector<std::uint8_t>{0x12, 2, 'h', 'i'}));
    EXPECT_EQ(encoded([](ProtoWriter& w) { w.sint64_as_int(4, -1); }).size(), 11u);  // two's complement, 10 bytes
    EXPECT_EQ(encoded([](ProtoWriter& w) { w.float64(5, 1.0); }),
              (std::vector<std::uint8_t>{0x29, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f}));
    // Field 60 needs a two-byte tag: (60 << 3) | 2 = 482.
    EXPECT_EQ(encoded([](ProtoWriter& w) { w.string(60, ""); }), (std::vector<std::uint8_t>{0xe2, 0x03, 0}));
}

// A protobuf reader for the checks: the fields of one message, in order.
struct Field {
    std::uint32_t number = 0;
    std::uint8_t wire = 0;
    std::uint64_t value = 0;               // varint, fixed64
    std::vector<std::uint8_t> bytes;       // length-delimited
    std::string text() const { return {bytes.begin(), bytes.end()}; }
};

std::vector<Field> parse(const std::vector<std::uint8_t>& b) {
    std::vector<Field> out;
    std::size_t i = 0;
    auto varint = [&]() {
        std::uint64_t v = 0;
        for (int shift = 0; i < b.size(); shift += 7) {
            const std::uint8_t byte = b[i++];
            v |= std::uint64_t{byte & 0x7fu} << shift;
            if ((byte & 0x80) == 0) return v;
        }
        ADD_FAILURE() << "varint runs past the end";
        return v;
    };
    while (i < b.size()) {
        Field f;
        const std::uint64_t tag = varint();
        f.number = static_cast<std::uint32_t>(tag >> 3);
        f.wire = static_cast<std::uint8_t>(tag & 7);
        if (f.wire == 0) {
            f.value = varint();
        } else if (f.wire == 1) {
            for (int k = 0; k < 8; ++k) f.value |= std::uint64_t{b.at(i++)} << (8 * k);
        } else if (f.wire == 2) {
            const std::uint64_t n = varint();
            EXPECT_LE(i + n, b.size()) << "length runs past the end";
            f.bytes.assign(b.begin() + static_cast<long>(i), b.begin() + static_cast<long>(std::min(i + n, b.size())));
            i += n;
        } else {
            ADD_FAILURE() << "unexpected wire type " << int(f.wire);
            break;
        }
        out.push_back(std::move(f));
    }
    return out;
}

const Field* find(const std::vector<Field>& fields, std::uint32_t number) {
    for (const auto& f : fields)
        if (f.number == number) return &f;
    return nullptr;
}

TEST(ProtoWriter, NestedMessagesGetExactLengthPrefixesAtAnyDepth) {
    ProtoWriter w;
    auto outer = w.begin(1);
    auto inner = w.begin(2);
    w.string(3, std::string(200, 'x'));  // 203 bytes: a two-byte length
    w.end(inner);
    w.uint(4, 7);
    w.end(outer);
    const std::vector<std::uint8_t> bytes(w.bytes().begin(), w.bytes().end());
    ASSERT_EQ(bytes.size(), 1u + 2u + (1u + 2u + 203u) + 2u);
    const auto top = parse(bytes);
    ASSERT_EQ(top.size(), 1u);
    const auto outer_fields = parse(top[0].bytes);
    ASSERT_EQ(outer_fields.size(), 2u);
    EXPECT_EQ(outer_fields[1].number, 4u);
    EXPECT_EQ(outer_fields[1].value, 7u);
    const auto inner_fields = parse(outer_fields[0].bytes);
    ASSERT_EQ(inner_fields.size(), 1u);
    EXPECT_EQ(inner_fields[0].text(), std::string(200, 'x'));
    w.clear();
    EXPECT_EQ(w.size(), 0u);
}

// Reads back what a writer wrote to a memory file.
struct MemoryFile {
    int fd = ::memfd_create("export-test", 0);
    ~MemoryFile() { ::close(fd); }
    std::vector<std::uint8_t> bytes() const {
        std::vector<std::uint8_t> out(static_cast<std::size_t>(::lseek(fd, 0, SEEK_END)));
        EXPECT_EQ(::pread(fd, out.data(), out.size(), 0), static_cast<ssize_t>(out.size()));
        return out;
    }
};

constexpr std::string_view kSchema = R"(
content_type = 4242
content_name = "exec"
flow_tags = ["block", "txn"]

[[event]]
number = 2
name = "BLOCK_START"
description = "a block begins"
fields = [
  { name = "number", type = "u64" },
  { name = "delta",  type = "i32" },
  { name = "kind",   type = "kind" },
  { name = "hash",   type = "bytes4" },
  { name = "pair",   type = "u16[2]" },
]

[[event]]
number = 3
name = "TXN_START"
description = "a transaction begins"

[[event]]
number = 4
name = "TXN_END"
description = "a transaction ends"

[[event]]
number = 5
name = "BLOCK_END"
description = "a block ends"

[[event]]
number = 6
name = "NOTE"
description = "something else"

[[event]]
number = 7
name = "BLOB"
description = "a long byte field"
fields = [
  { name = "size", type = "u32" },
  { name = "data", type = "bytes[size]" },
]

[enum.kind]
type = "u8"
values = { FULL = 1 }

[span.block]
begin = "BLOCK_START"
end = "BLOCK_END"
key = ["block"]

[span.txn]
begin = "TXN_START"
end = "TXN_END"
key = ["block", "txn"]
)";

Schema test_schema() {
    auto schema = Schema::parse(kSchema, "test.toml");
    EXPECT_TRUE(schema) << (schema ? "" : schema.error().message());
    return std::move(*schema);
}

struct TestEvent {
    SourceEvent event;
    std::vector<std::byte> payload;
};

SourceEvent make_event(std::uint64_t seqno, std::uint16_t type, std::uint64_t nanos, std::uint64_t block,
                       std::uint64_t txn, std::span<const std::byte> payload = {}) {
    SourceEvent e;
    e.descriptor.seqno = seqno;
    e.descriptor.event_type = type;
    e.descriptor.record_epoch_nanos = nanos;
    e.descriptor.payload_size = static_cast<std::uint32_t>(payload.size());
    e.descriptor.content_ext = {block, txn, 0, 0};
    e.payload_state = PayloadState::Ok;
    e.payload = payload;
    return e;
}

std::vector<std::byte> block_start_payload() {
    std::vector<std::byte> p(24);
    const std::uint64_t number = 77;
    const std::int32_t delta = -3;
    std::memcpy(p.data(), &number, 8);
    std::memcpy(p.data() + 8, &delta, 4);
    p[12] = std::byte{1};  // FULL
    for (int i = 0; i < 4; ++i) p[13 + i] = std::byte(0xa0 + i);
    const std::uint16_t pair[2] = {5, 6};
    std::memcpy(p.data() + 18, pair, 4);
    return p;
}

TEST(PerfettoWriter, PacketsAreOnOneSequenceWithDecodedFieldsAsAnnotations) {
    const Schema schema = test_schema();
    ASSERT_EQ(schema.fixed_size(*schema.event(std::uint16_t{2})), 24u);  // C layout: 22 bytes, aligned to 8
    MemoryFile file;
    auto writer = make_perfetto_writer(file.fd, "mem");
    writer->track(TrackInfo{1, 0, TrackInfo::Kind::Root, "root", {}});
    writer->track(TrackInfo{2, 1, TrackInfo::Kind::Counter, "rate", "events/s"});
    const auto payload = block_start_payload();
    const SourceEvent e = make_event(9, 2, 1'000'000'123, 40, 0, payload);
    const std::array<std::string, 4> names{"block", "txn", "ext2", "ext3"};
    writer->instant(16, e.descriptor.record_epoch_nanos, "BLOCK_START", EventArgs{&e, &schema, &names, {}});
    writer->counter(2, 1'000'000'000, 2.5);
    ASSERT_TRUE(writer->finish());
    EXPECT_EQ(writer->records(), 4u);

    const auto trace = parse(file.bytes());
    ASSERT_EQ(trace.size(), 4u);
    std::vector<std::vector<Field>> packets;
    for (const auto& p : trace) {
        EXPECT_EQ(p.number, 1u);
        packets.push_back(parse(p.bytes));
        ASSERT_NE(find(packets.back(), 10), nullptr);
        EXPECT_EQ(find(packets.back(), 10)->value, 1u);  // trusted_packet_sequence_id
    }
    ASSERT_NE(find(packets[0], 13), nullptr);  // the first packet clears incremental state
    EXPECT_EQ(find(packets[0], 13)->value, 1u);
    EXPECT_EQ(find(packets[1], 13), nullptr);
    const auto root = parse(find(packets[0], 60)->bytes);
    EXPECT_EQ(find(root, 2)->text(), "root");
    EXPECT_NE(find(root, 3), nullptr);  // a ProcessDescriptor groups the tracks
    const auto counter_track = parse(find(packets[1], 60)->bytes);
    EXPECT_EQ(find(counter_track, 5)->value, 1u);
    EXPECT_EQ(find(parse(find(counter_track, 8)->bytes), 6)->text(), "events/s");

    EXPECT_EQ(find(packets[2], 8)->value, 1'000'000'123u);
    const auto event = parse(find(packets[2], 11)->bytes);
    EXPECT_EQ(find(event, 9)->value, 3u);  // TYPE_INSTANT
    EXPECT_EQ(find(event, 11)->value, 16u);
    EXPECT_EQ(find(event, 23)->text(), "BLOCK_START");
    std::map<std::string, std::vector<Field>> annotations;
    for (const auto& f : event)
        if (f.number == 4) {
            auto fields = parse(f.bytes);
            annotations[find(fields, 10)->text()] = fields;
        }
    ASSERT_EQ(annotations.size(), 7u);  // seqno, block, and the five fields
    EXPECT_EQ(find(annotations["seqno"], 3)->value, 9u);
    EXPECT_EQ(find(annotations["block"], 3)->value, 40u);
    EXPECT_EQ(find(annotations["number"], 3)->value, 77u);
    EXPECT_EQ(static_cast<std::int64_t>(find(annotations["delta"], 4)->value), -3);
    EXPECT_EQ(find(annotations["kind"], 6)->text(), "FULL");
    EXPECT_EQ(find(annotations["hash"], 6)->text(), "0xa0a1a2a3");
    std::vector<std::uint64_t> pair;
    for (const auto& f : annotations["pair"])
        if (f.number == 12) pair.push_back(find(parse(f.bytes), 3)->value);
    EXPECT_EQ(pair, (std::vector<std::uint64_t>{5, 6}));

    const auto sample = parse(find(packets[3], 11)->bytes);
    EXPECT_EQ(find(sample, 9)->value, 4u);  // TYPE_COUNTER
    double value = 0;
    const std::uint64_t bits = find(sample, 44)->value;
    std::memcpy(&value, &bits, 8);
    EXPECT_EQ(value, 2.5);
}

TEST(PerfettoWriter, AnUnwritableFileIsAnErrorNamingIt) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    ::close(fds[0]);
    auto writer = make_perfetto_writer(fds[1], "closed.pftrace");
    writer->track(TrackInfo{1, 0, TrackInfo::Kind::Root, "root", {}});
    ::signal(SIGPIPE, SIG_IGN);
    auto status = writer->finish();
    ASSERT_FALSE(status);
    EXPECT_NE(status.error().message().find("closed.pftrace"), std::string::npos);
    ::close(fds[1]);
}

TEST(ChromeJsonWriter, WritesOneTraceEventPerCallWithMicrosecondsSinceTheFirst) {
    const Schema schema = test_schema();
    MemoryFile file;
    auto writer = make_chrome_json_writer(file.fd, "mem");
    writer->track(TrackInfo{1, 0, TrackInfo::Kind::Root, "root \"q\"", {}});
    writer->track(TrackInfo{16, 1, TrackInfo::Kind::Events, "BLOCK_START", {}});
    writer->track(TrackInfo{2, 1, TrackInfo::Kind::Counter, "event rate", "events/s"});
    const auto payload = block_start_payload();
    const SourceEvent e = make_event(9, 2, 5'000'001'500, 40, 0, payload);
    const std::array<std::string, 4> names{"block", "txn", "ext2", "ext3"};
    writer->slice_begin(16, 5'000'000'000, "block", EventArgs{&e, &schema, &names, {}});
    writer->slice_end(16, 5'000'001'500, EventArgs{nullptr, nullptr, nullptr, "unfinished"});
    writer->counter(2, 5'000'001'500, 100);
    ASSERT_TRUE(writer->finish());
    EXPECT_EQ(writer->records(), 5u);
    const auto bytes = file.bytes();
    const std::string text(bytes.begin(), bytes.end());
    EXPECT_EQ(text.rfind("{\"traceEvents\":[\n", 0), 0u);
    EXPECT_NE(text.find(R"("name":"process_name","pid":1,"tid":0,"args":{"name":"root \"q\""})"), std::string::npos);
    EXPECT_NE(text.find(R"({"ph":"B","pid":1,"tid":2,"ts":0.000,"cat":"evring","name":"block","args":{"seqno":9,"block":40,"number":77,"delta":-3,"kind":"FULL","hash":"0xa0a1a2a3","pair":[5,6]}})"),
              std::string::npos) << text;
    EXPECT_NE(text.find(R"({"ph":"E","pid":1,"tid":2,"ts":1.500,"args":{"note":"unfinished"}})"), std::string::npos);
    EXPECT_NE(text.find(R"({"ph":"C","name":"event rate","pid":1,"tid":0,"ts":1.500,"args":{"value":100}})"),
              std::string::npos);
    EXPECT_NE(text.find("\"origin_epoch_nanos\":5000000000"), std::string::npos);
}

// One rule for both formats: a byte field or raw payload longer than
// kMaxShownBytes shows its first kMaxShownBytes bytes and its size; shorter
// ones in full. Both writers show exactly the same text for the same event.
std::vector<std::byte> blob_payload(std::uint32_t size) {
    std::vector<std::byte> p(4 + size);
    std::memcpy(p.data(), &size, 4);
    for (std::uint32_t i = 0; i < size; ++i) p[4 + i] = std::byte(i & 0xff);
    return p;
}

std::string hex_of(std::size_t n) {
    std::string text = "0x";
    for (std::size_t i = 0; i < n; ++i) text += fmt::format("{:02x}", i & 0xff);
    return text;
}

// The "data" annotation's string in the Perfetto trace, and the args text of the Chrome JSON trace.
std::string perfetto_data(const SourceEvent& e, const Schema* schema, std::string_view key) {
    MemoryFile file;
    auto writer = make_perfetto_writer(file.fd, "mem");
    const std::array<std::string, 4> names{"block", "txn", "ext2", "ext3"};
    writer->instant(16, 1, "BLOB", EventArgs{&e, schema, &names, {}});
    EXPECT_TRUE(writer->finish());
    for (const auto& packet : parse(file.bytes())) {
        const auto fields = parse(packet.bytes);
        const Field* event = find(fields, 11);
        if (event == nullptr) continue;
        for (const auto& f : parse(event->bytes))
            if (f.number == 4) {
                auto annotation = parse(f.bytes);
                if (find(annotation, 10)->text() == key) return find(annotation, 6)->text();
            }
    }
    return "(none)";
}

std::string chrome_args(const SourceEvent& e, const Schema* schema) {
    MemoryFile file;
    auto writer = make_chrome_json_writer(file.fd, "mem");
    const std::array<std::string, 4> names{"block", "txn", "ext2", "ext3"};
    writer->instant(16, 1, "BLOB", EventArgs{&e, schema, &names, {}});
    EXPECT_TRUE(writer->finish());
    const auto bytes = file.bytes();
    return std::string(bytes.begin(), bytes.end());
}

TEST(ExportBytes, LongByteFieldsAreCutTheSameWayInPerfettoAndChromeJson) {
    const Schema schema = test_schema();
    for (const std::size_t size : {kMaxShownBytes - 1, kMaxShownBytes, kMaxShownBytes + 1, std::size_t{5000}}) {
        SCOPED_TRACE(size);
        const auto payload = blob_payload(static_cast<std::uint32_t>(size));
        const SourceEvent e = make_event(1, 7, 1, 0, 0, payload);
        const std::string expected = size > kMaxShownBytes
                                         ? fmt::format("{}...({} bytes)", hex_of(kMaxShownBytes), size)
                                         : hex_of(size);
        EXPECT_EQ(perfetto_data(e, &schema, "data"), expected);
        EXPECT_NE(chrome_args(e, &schema).find(fmt::format(R"("size":{},"data":"{}")", size, expected)),
                  std::string::npos);
    }
}

TEST(ExportBytes, RawPayloadsWithoutASchemaFollowTheSameRule) {
    std::vector<std::byte> payload(1000);
    for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = std::byte(i & 0xff);
    const SourceEvent e = make_event(1, 9, 1, 0, 0, payload);
    const std::string expected = fmt::format("{}...(1000 bytes)", hex_of(kMaxShownBytes));
    EXPECT_EQ(perfetto_data(e, nullptr, "payload"), expected);
    EXPECT_NE(chrome_args(e, nullptr).find(fmt::format(R"("payload":"{}")", expected)), std::string::npos);
}

TEST(ExportBytes, WatchJsonStillShowsByteFieldsInFull) {
    const Schema schema = test_schema();
    const auto payload = blob_payload(5000);
    std::string json;
    ASSERT_TRUE(append_fields_json(schema, 7, payload, json).ok());
    EXPECT_EQ(json, fmt::format(R"({{"size":5000,"data":"{}"}})", hex_of(5000)));
}

// Records what the timeline asks a writer to do, one line per call.
class CallLog final : public TraceWriter {
public:
    std::vector<std::string> calls;
    std::map<std::uint64_t, std::string> names;
    void track(const TrackInfo& t) override {
        names[t.uuid] = t.name;
        calls.push_back("track " + t.name);
    }
    void instant(std::uint64_t track, std::uint64_t nanos, std::string_view name, const EventArgs&) override {
        calls.push_back(fmt::format("instant {} {} @{}", names[track], name, nanos));
    }
    void slice_begin(std::uint64_t track, std::uint64_t nanos, std::string_view name, const EventArgs&) override {
        calls.push_back(fmt::format("begin {} {} @{}", names[track], name, nanos));
    }
    void slice_end(std::uint64_t track, std::uint64_t nanos, const EventArgs& args) override {
        calls.push_back(fmt::format("end {} @{}{}", names[track], nanos, args.note.empty() ? "" : " unfinished"));
    }
    void counter(std::uint64_t track, std::uint64_t nanos, double value) override {
        calls.push_back(fmt::format("counter {} {} @{}", names[track], value, nanos));
    }
    void maybe_flush() override {}
    Status finish() override { return {}; }
    std::uint64_t bytes() const override { return 0; }
    std::uint64_t records() const override { return calls.size(); }

    std::vector<std::string> matching(std::string_view prefix) const {
        std::vector<std::string> out;
        for (const auto& c : calls)
            if (c.rfind(prefix, 0) == 0) out.push_back(c);
        return out;
    }
};

TEST(Timeline, SpansNestOnLanesAndEndsCloseTheirKey) {
    const Schema schema = test_schema();
    CallLog log;
    TimelineOptions options;
    options.root_name = "root";
    options.rate_interval_nanos = 1000;
    Timeline timeline({&log}, &schema, 4242, options);
    const auto p = block_start_payload();
    // Block 10 with transactions 1 and 2 overlapping; an end for a block never begun.
    for (const SourceEvent& e : {make_event(1, 4, 100, 9, 1),  // TXN_END of a txn begun before the export
                                 make_event(2, 2, 200, 10, 0, p), make_event(3, 3, 300, 10, 1),
                                 make_event(4, 3, 400, 10, 2), make_event(5, 4, 500, 10, 1),
                                 make_event(6, 4, 600, 10, 2), make_event(7, 5, 700, 10, 0),
                                 make_event(8, 3, 800, 11, 1)})
        ASSERT_TRUE(timeline.event(e));
    ASSERT_TRUE(timeline.finish());
    EXPECT_EQ(log.matching("begin"), (std::vector<std::string>{
                                         "begin block lane 0 block @200", "begin txn lane 0 txn @300",
                                         "begin txn lane 1 txn @400", "begin txn lane 0 txn @800"}));
    EXPECT_EQ(log.matching("end"), (std::vector<std::string>{"end txn lane 0 @500", "end txn lane 1 @600",
                                                              "end block lane 0 @700",
                                                              "end txn lane 0 @800 unfinished"}));
    const TimelineStats& s = timeline.stats();
    EXPECT_EQ(s.events, 8u);
    EXPECT_EQ(s.slices, 4u);
    EXPECT_EQ(s.unfinished, 1u);
    EXPECT_EQ(s.ends_without_begin, 1u);
    EXPECT_EQ(log.matching("instant").size(), 8u);
    EXPECT_EQ(log.matching("instant")[1], "instant BLOCK_START BLOCK_START @200");
    // Tracks: root, two counters, four event types, two span groups, three lanes.
    EXPECT_EQ(s.tracks, 12u);
    EXPECT_EQ(s.records(), log.calls.size());
}

TEST(Timeline, CountersSampleTheRatePerIntervalAndTheLostTotal) {
    CallLog log;
    TimelineOptions options;
    options.root_name = "root";
    options.rate_interval_nanos = 1000;
    Timeline timeline({&log}, nullptr, 7, options);
    ASSERT_TRUE(timeline.event(make_event(1, 9, 1000, 0, 0)));
    ASSERT_TRUE(timeline.event(make_event(2, 9, 1500, 0, 0)));
    ASSERT_TRUE(timeline.gap(SourceGap{3, 4, GapReason::FellBehind, {}}));
    ASSERT_TRUE(timeline.event(make_event(7, 9, 5200, 0, 0)));
    ASSERT_TRUE(timeline.finish());
    EXPECT_EQ(log.matching("counter"),
              (std::vector<std::string>{"counter lost events 0 @1000", "counter lost events 4 @5200",
                                        "counter event rate 2000000 @1000", "counter event rate 0 @2000",
                                        "counter event rate 1000000 @5000"}));
    EXPECT_EQ(log.matching("track type 9"), (std::vector<std::string>{"track type 9"}));
    EXPECT_EQ(timeline.stats().lost, 4u);
}

TEST(Timeline, TracksByFlowTagValue) {
    const Schema schema = test_schema();
    CallLog log;
    TimelineOptions options;
    options.track_by = TimelineOptions::TrackBy::Flow;
    options.flow_index = 1;
    Timeline timeline({&log}, &schema, 4242, options);
    for (const SourceEvent& e : {make_event(1, 6, 10, 1, 0), make_event(2, 6, 20, 1, 3), make_event(3, 6, 30, 1, 3)})
        ASSERT_TRUE(timeline.event(e));
    ASSERT_TRUE(timeline.finish());
    EXPECT_EQ(log.matching("instant"), (std::vector<std::string>{"instant no txn NOTE @10", "instant txn 3 NOTE @20",
                                                                  "instant txn 3 NOTE @30"}));
}

TEST(Timeline, FlowValuesPastTheCapShareOneTrack) {
    CallLog log;
    TimelineOptions options;
    options.track_by = TimelineOptions::TrackBy::Flow;
    Timeline timeline({&log}, nullptr, 7, options);
    for (std::uint64_t v = 1; v <= kMaxFlowTracks + 10; ++v) ASSERT_TRUE(timeline.event(make_event(v, 9, v, v, 0)));
    ASSERT_TRUE(timeline.finish());
    // root, two counters, kMaxFlowTracks value tracks, one shared track.
    EXPECT_EQ(timeline.stats().tracks, 3 + kMaxFlowTracks + 1);
    EXPECT_EQ(log.matching("track other ext0 values").size(), 1u);
    EXPECT_EQ(log.calls.back().rfind("counter", 0), 0u);
    EXPECT_EQ(log.matching("instant other ext0 values").size(), 10u);
}

TEST(ExportOptions, DurationsNeedAUnitAndStayWithinAnHour) {
    auto nanos = [](const char* text) {
        auto r = parse_duration_nanos("--rate-interval", text);
        EXPECT_TRUE(r) << text;
        return r ? *r : 0;
    };
    EXPECT_EQ(nanos("10ms"), 10'000'000u);
    EXPECT_EQ(nanos("250us"), 250'000u);
    EXPECT_EQ(nanos("1s"), 1'000'000'000u);
    EXPECT_EQ(nanos("7ns"), 7u);
    for (const char* bad : {"", "10", "ms", "0ms", "-5ms", "2h", "3601s", "10 ms", "99999999999999s"}) {
        auto r = parse_duration_nanos("--rate-interval", bad);
        ASSERT_FALSE(r) << bad;
        EXPECT_NE(r.error().message().find("--rate-interval"), std::string::npos);
    }
}

}  // namespace
}  // namespace evring::cli
