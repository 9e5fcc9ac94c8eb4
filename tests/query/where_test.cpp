// Filter expressions (where.hpp) on crafted payloads: every kind of operand
// and literal, missing fields, trailing arrays bounds-checked, hostile text.
#include "query/where.hpp"

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include "query/span_labels_schema.hpp"

#include <tuple>

#include "evring/source/follow.hpp"
#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_reader.hpp"
#include "source/ring_source.hpp"
#include "evring/ring/ring_writer.hpp"
#include "support/temp_ring.hpp"

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace evring {
namespace {

const char* kSchema = R"(content_type = 1001
content_name = "t"
flow_tags = ["group", "item"]
[enum.side]
type = "u8"
values = { BUY = 1, SELL = 2 }
[[event]]
number = 1
name = "A"
fields = [
  { name = "n", type = "u32" },
  { name = "delta", type = "i32" },
  { name = "side", type = "side" },
  { name = "price", type = "f64" },
  { name = "big", type = "u256" },
  { name = "key", type = "bytes4" },
  { name = "count", type = "u32" },
  { name = "ids", type = "u64[count]" },
]
[[event]]
number = 2
name = "B"
fields = [{ name = "n", type = "u8" }]
)";

Schema schema() {
    auto s = Schema::parse(kSchema);
    EXPECT_TRUE(s.ok()) << s.error().message();
    return std::move(s).value();
}

struct Event {
    EventDescriptor d{};
    std::vector<std::byte> payload;
    SourceEvent view() const {
        SourceEvent e;
        e.descriptor = d;
        e.payload_state = PayloadState::Ok;
        e.payload = payload;
        return e;
    }
};

template <class T>
void put(std::vector<std::byte>& p, std::size_t at, T v) {
    if (p.size() < at + sizeof v) p.resize(at + sizeof v);
    std::memcpy(p.data() + at, &v, sizeof v);
}

// An A: n=7, delta=-3, side=SELL, price=2.5, big=2^200, key=de ad be ef, ids = {10, 20}.
Event event_a() {
    const Schema s = schema();
    const SchemaEvent& a = *s.event("A");
    Event e;
    e.d.event_type = 1;
    e.d.seqno = 42;
    e.d.content_ext[0] = 5;
    auto at = [&](const char* f) { return s.find_field(a, f)->offset; };
    put<std::uint32_t>(e.payload, at("n"), 7);
    put<std::int32_t>(e.payload, at("delta"), -3);
    put<std::uint8_t>(e.payload, at("side"), 2);
    put<double>(e.payload, at("price"), 2.5);
    put<std::uint64_t>(e.payload, at("big") + 24, std::uint64_t{1} << 8);
    const std::uint8_t key[4] = {0xde, 0xad, 0xbe, 0xef};
    e.payload.resize(std::max<std::size_t>(e.payload.size(), at("key") + 4));
    std::memcpy(e.payload.data() + at("key"), key, 4);
    put<std::uint32_t>(e.payload, at("count"), 2);
    const std::size_t fixed = s.fixed_size(a);
    e.payload.resize(fixed);
    put<std::uint64_t>(e.payload, fixed, 10);
    put<std::uint64_t>(e.payload, fixed + 8, 20);
    e.d.payload_size = static_cast<std::uint32_t>(e.payload.size());
    return e;
}

bool keeps(const std::string& text, const Event& e) {
    const Schema s = schema();
    auto w = compile_where(text, s);
    EXPECT_TRUE(w.ok()) << text << ": " << (w ? "" : w.error().message());
    return w && (*w)->matches(e.view());
}

TEST(Where, ComparesEveryKindOfField) {
    const Event a = event_a();
    for (const char* yes : {"type == A", "type == a", "type in {B, A}", "seqno == 42", "group == 5", "ext[0] == 5", "item == 0",
                            "n == 7", "n > 6 && n < 8", "delta < 0", "delta == -3", "delta >= -3", "side == SELL",
                            "price > 2.25", "price <= 2.5", "big > 0xffffffffffffffffffffffff",
                            "big == 1606938044258990275541962092341162602522202993782792835301376",
                            "key == 0xdeadbeef", "key ^= 0xdead", "ids[0] == 10", "ids[1] == 20", "!(ids[2] == 0)",
                            "not ids[2] > 0", "n and key", "!(item)", "n == 1 || n == 7", "(n == 7)", "n in {1, 7}"})
        EXPECT_TRUE(keeps(yes, a)) << yes;
    for (const char* no : {"type == B", "n == 8", "delta > 0", "side == BUY", "key == 0xdead", "key ^= 0xbe",
                           "ids[2] == 0", "ids[536870911] == 0", "big < 5", "n > 6 && item == 1", "price < 0"})
        EXPECT_FALSE(keeps(no, a)) << no;
}

TEST(Where, MissingFieldsAndPayloadsAreFalse) {
    Event b;
    b.d.event_type = 2;
    b.payload = {std::byte{9}};
    EXPECT_TRUE(keeps("n == 9", b));        // B has its own n (u8)
    EXPECT_FALSE(keeps("delta == 0", b));   // B has no delta
    EXPECT_TRUE(keeps("!(delta == 0)", b));
    Event a = event_a();
    a.payload.resize(4);  // too short for everything after n, and for the array's count
    EXPECT_TRUE(keeps("n == 7", a));
    EXPECT_FALSE(keeps("delta == -3", a));
    EXPECT_FALSE(keeps("ids[0] == 10", a));
    // An expired payload: descriptor tests still work, field tests are false.
    const Schema s = schema();
    auto w = compile_where("type == A && n == 7", s);
    ASSERT_TRUE(w.ok());
    const Event held = event_a();
    SourceEvent e = held.view();
    EXPECT_TRUE((*w)->matches(e));
    e.payload_state = PayloadState::Expired;
    e.payload = {};
    EXPECT_FALSE((*w)->matches(e));
    EXPECT_TRUE((*w)->needs_payload());
    auto d = compile_where("type == A || seqno > 3", s);
    ASSERT_TRUE(d.ok());
    EXPECT_FALSE((*d)->needs_payload());
}

TEST(Where, RefusesWithThePositionAndNearNames) {
    const Schema s = schema();
    const std::pair<const char*, const char*> cases[] = {
        {"nn == 1", "at 1: no event of schema t has a field 'nn'; nearest: n"},
        {"type == C", "at 9: 'C' is not an event type of schema t"},
        {"side == HOLD", "'HOLD' is not a value of 'side'; nearest:"},
        {"key < 0x01", "'key' is a byte array: compare it with ==, !=, in or ^="},
        {"n == \"x\"", "cannot equal text"},
        {"n ^= 0x01", "'^=' is for byte fields"},
        {"ids == 1", "'ids' is a variable-length array; name an element: ids[0]"},
        {"ids[99999999999] == 0", "'ids[99999999999]': no payload holds that element (payloads are under 4 GiB)"},
        {"n == 1 &&", "at 10: expected a field, a flow tag or 'type' but found 'the end'"},
        {"n == 1 )", "unexpected ')'"},
        {"ext[4] == 1", "ext[I] takes I from 0 to 3"},
        {"n == 1 # 2", "at 8: unexpected character '#'"},
    };
    for (const auto& [text, reason] : cases) {
        auto w = compile_where(text, s);
        ASSERT_FALSE(w.ok()) << text;
        EXPECT_NE(w.error().message().find(reason), std::string::npos) << w.error().message();
        EXPECT_EQ(w.error().message().rfind("bad --where '", 0), 0u) << w.error().message();
    }
}

TEST(Where, HostileTextIsRefusedCheaply) {
    const Schema s = schema();
    auto huge = compile_where(std::string(1 << 20, '('), s);
    ASSERT_FALSE(huge.ok());
    EXPECT_NE(huge.error().message().find("at most 65536 bytes; this one is 1048576"), std::string::npos);
    auto deep = compile_where(std::string(60000, '('), s);
    ASSERT_FALSE(deep.ok());
    EXPECT_NE(deep.error().message().find("nested more than 64 deep"), std::string::npos);
    auto nots = compile_where(std::string(60000, '!') + "n", s);
    ASSERT_FALSE(nots.ok());
    std::string many = "n == 1";
    while (many.size() < 60000) many += " || n == 1";
    auto wide = compile_where(many, s);
    ASSERT_FALSE(wide.ok());
    EXPECT_NE(wide.error().message().find("more than 4096"), std::string::npos);
    auto past = compile_where("n == 0x1" + std::string(64, '0'), s);
    ASSERT_FALSE(past.ok());
    EXPECT_NE(past.error().message().find("past 2^256"), std::string::npos);
    // Long shown text is cut in the message.
    EXPECT_LT(huge.error().message().size(), 200u);
}

// --- Span names compare by label ------------------------------------------

TEST(Where, ASpanOpenerTagComparesByLabelThroughTheResolver) {
    std::string text = kSchema;
    text += "[span.g]\nbegin = \"A\"\nend = \"B\"\nkey = [\"group\"]\nlabel = \"n\"\nopener = \"group\"\n";
    auto parsed = Schema::parse(text);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message();
    const Schema s = std::move(parsed).value();
    // Label 7 opens at seqno 42, label 8 at 50; 9 is carried by no event.
    const SpanLabelResolver labels = [](const SchemaSpan& span, std::uint64_t label) -> Result<std::uint64_t> {
        EXPECT_EQ(span.name, "g");
        if (label == 7) return std::uint64_t{42};
        if (label == 8) return std::uint64_t{50};
        return Error(ENOENT, "no g 9 in the test source");
    };
    auto keeps = [&](const char* expr, std::uint64_t tag) {
        auto w = compile_where(expr, s, "--where", labels);
        EXPECT_TRUE(w.ok()) << expr << ": " << (w ? "" : w.error().message());
        SourceEvent e;
        e.descriptor.event_type = 2;
        e.descriptor.content_ext[0] = tag;
        return w && (*w)->matches(e);
    };
    EXPECT_TRUE(keeps("group == 7", 42));
    EXPECT_FALSE(keeps("group == 7", 7));  // the raw tag is a seqno, not the label
    EXPECT_TRUE(keeps("group in {8, 7}", 50));
    EXPECT_TRUE(keeps("group != 7", 50));
    EXPECT_TRUE(keeps("ext[0] == 7", 7));  // the raw tag by index
    EXPECT_TRUE(keeps("group", 1));        // bare: the raw tag is non-zero
    auto unknown = compile_where("group == 9", s, "--where", labels);
    ASSERT_FALSE(unknown.ok());
    EXPECT_EQ(unknown.error().message(), "bad --where 'group == 9': at 10: no g 9 in the test source");
    // Ordered comparisons read the span label table the follow loop fills; without one they are refused.
    auto order = compile_where("group > 7", s, "--where", labels);
    ASSERT_FALSE(order.ok());
    EXPECT_NE(order.error().message().find("'group' compares g labels (n), which this reader cannot look up"),
              std::string::npos)
        << order.error().message();
    EXPECT_NE(compile_where("group ^= 0x07", s, "--where", labels).error().message().find(
                  "with ==, !=, in, <, <=, > or >="), std::string::npos);
    auto blind = compile_where("group == 7", s);
    ASSERT_FALSE(blind.ok());
    EXPECT_NE(blind.error().message().find("which this reader cannot look up"), std::string::npos);
    EXPECT_TRUE(compile_where("item == 7", s).ok());  // a tag no span opens: raw, as before
}

// --- Through the follow loop over a real ring: descriptor first -----------

// Payloads the filter never looks at are never read: the source's payload
// counter (SourceCounters::payloads, one per copy out of the ring) counts
// only the events the descriptor tests leave open, and the sink still gets
// the payload of every event it is handed.
TEST(WhereFollow, PayloadsOfEventsTheDescriptorRulesOutAreNeverCopied) {
    test::TempDir dir;
    const std::string path = dir.file("ring");
    CreateOptions create;
    create.keep_on_close = true;
    auto writer = RingWriter::create(test::small_spec(path, 8, 16), create);
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    {
        Publisher publisher(writer->ring());
        for (std::uint32_t i = 0; i < 200; ++i) {
            Reservation r = publisher.reserve(4);
            std::memcpy(r.payload(), &i, 4);  // n (u32, A's and B's first field)
            r.descriptor().event_type = i % 4 == 0 ? 1 : 2;  // 50 A, 150 B
            publisher.commit(r);
        }
    }
    struct Sink : FollowSink {
        std::size_t events = 0, with_payload = 0;
        bool event(const SourceEvent& e) override {
            ++events;
            with_payload += e.payload_state == PayloadState::Ok;
            return true;
        }
    };
    const Schema s = schema();
    auto run = [&](const char* where_text, PayloadRead payloads, std::uint16_t only_type = 0) {
        auto where = compile_where(where_text, s);
        EXPECT_TRUE(where.ok());
        auto reader = RingReader::open(path);
        EXPECT_TRUE(reader.ok());
        std::unique_ptr<EventSource> source = std::move(RingSource::open_live(std::move(*reader), path).value());
        FollowOptions options;
        options.start = Position::oldest();
        options.stop = Position::seqno(200);  // the writer is alive (this process): stop at its last event
        options.where = where->get();
        options.payloads = payloads;
        if (only_type != 0) options.filter.types.add(only_type);
        Sink sink;
        auto result = follow(source, options, sink);
        EXPECT_TRUE(result.ok());
        EXPECT_EQ(result->counters.events, 200u);
        return std::make_tuple(sink.events, sink.with_payload, result->counters.payloads);
    };
    // A's n is 0, 4, 8, ...: n > 100 keeps 24 of them; only the 50 A payloads are copied.
    EXPECT_EQ(run("type == A && n > 100", PayloadRead::None), std::make_tuple(24u, 24u, 50u));
    // Written the other way round: the compiler tests the descriptor first all the same.
    EXPECT_EQ(run("n > 100 && type == A", PayloadRead::None), std::make_tuple(24u, 24u, 50u));
    // Descriptor only: no payload read for the filter; the sink's kept events only when it asks.
    EXPECT_EQ(run("type == A && seqno > 100", PayloadRead::None), std::make_tuple(25u, 0u, 0u));
    EXPECT_EQ(run("type == A && seqno > 100", PayloadRead::Copy), std::make_tuple(25u, 25u, 25u));
    // A FlowFilter alone (--type) also copies only what it keeps.
    EXPECT_EQ(run("seqno > 0", PayloadRead::Copy, 1), std::make_tuple(50u, 50u, 50u));
    // B also has n (a u8): every event's payload is then needed.
    EXPECT_EQ(run("n == 3", PayloadRead::None), std::make_tuple(1u, 1u, 200u));
}

// --- Span labels as reading goes: ranges, --until SPAN:N, a live ring ------

const char* kSpanSchema = R"(content_type = 1001
content_name = "t"
flow_tags = ["group"]
[[event]]
number = 1
name = "OPEN"
fields = [{ name = "n", type = "u64" }]
[[event]]
number = 2
name = "INNER"
[[event]]
number = 3
name = "CLOSE"
[[event]]
number = 4
name = "DONE"
fields = [{ name = "n", type = "u64" }]
[span.g]
begin = "OPEN"
end = "CLOSE"
key = ["group"]
label = "n"
opener = "group"
stages = [{ name = "done", event = "DONE", label = "n" }]
)";

// Ordered label tests and the range's top (EventPredicate::span_top), on
// events whose opening the table was shown.
TEST(Where, OrderedSpanLabelTestsReadTheTableAndBoundTheRange) {
    auto parsed = Schema::parse(kSpanSchema);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message();
    SpanLabels table = span_labels_for(*parsed);
    ASSERT_TRUE(table.any());
    EventDescriptor open{};
    open.seqno = 40;
    open.event_type = 1;
    const std::uint64_t label = 15;
    std::byte bytes[8];
    std::memcpy(bytes, &label, 8);
    EXPECT_EQ(table.note(open, bytes).kind, SpanNote::Kind::Opening);
    auto keeps = [&](const char* expr, std::uint64_t tag) {
        auto w = compile_where(expr, *parsed, "--where", {}, &table);
        EXPECT_TRUE(w.ok()) << expr << ": " << (w ? "" : w.error().message());
        SourceEvent e;
        e.descriptor.event_type = 2;
        e.descriptor.content_ext[0] = tag;
        return w && (*w)->matches(e);
    };
    EXPECT_TRUE(keeps("group >= 15 && group <= 15", 40));
    EXPECT_TRUE(keeps("group > 14", 40));
    EXPECT_FALSE(keeps("group > 15", 40));
    EXPECT_TRUE(keeps("group < 16", 40));
    EXPECT_FALSE(keeps("group < 15", 40));
    EXPECT_FALSE(keeps("group >= 0", 41));   // an opening not read: no label, no comparison holds
    EXPECT_FALSE(keeps("group >= 0", 0));    // no tag at all
    auto top = [&](const char* expr) -> std::optional<std::uint64_t> {
        auto w = compile_where(expr, *parsed, "--where", {}, &table);
        EXPECT_TRUE(w.ok()) << expr;
        auto t = w ? (*w)->span_top() : std::nullopt;
        if (t) {
            EXPECT_EQ(t->tag, 0u);
        }
        return t ? std::optional<std::uint64_t>(t->label) : std::nullopt;
    };
    EXPECT_EQ(top("group >= 9 && group <= 12"), 12u);
    EXPECT_EQ(top("group < 12"), 11u);
    EXPECT_EQ(top("group <= 3 || group <= 8"), 8u);
    EXPECT_EQ(top("type == INNER && group <= 3"), 3u);
    EXPECT_EQ(top("group > 3"), std::nullopt);
    EXPECT_EQ(top("group <= 3 || type == INNER"), std::nullopt);
    EXPECT_EQ(top("!(group <= 3)"), std::nullopt);
}

// A live ring (its writer is this process, so it never ends by itself) of
// five instances labelled 1..5: OPEN, INNER, INNER, CLOSE, then DONE (the
// stage, no tag). Reading ends by label: after CLOSE of instance 3
// (--until g:3), after DONE of 3 (--until g.done:3), and before OPEN of 4
// once a --where range topped at 3 has passed; labels of events whose
// opening the filter hid still read through the table.
TEST(WhereFollow, SpanLabelsEndReadingOnALiveRing) {
    auto parsed = Schema::parse(kSpanSchema);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message();
    const Schema& s = *parsed;
    test::TempDir dir;
    const std::string path = dir.file("ring");
    CreateOptions create;
    create.keep_on_close = true;
    auto writer = RingWriter::create(test::small_spec(path, 8, 16), create);
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    {
        Publisher publisher(writer->ring());
        std::uint64_t seqno = 0;
        for (std::uint64_t label = 1; label <= 5; ++label) {
            const std::uint64_t opening = seqno + 1;
            for (std::uint16_t type : {std::uint16_t{1}, std::uint16_t{2}, std::uint16_t{2}, std::uint16_t{3}, std::uint16_t{4}}) {
                Reservation r = publisher.reserve(8);
                std::memcpy(r.payload(), &label, 8);
                r.descriptor().event_type = type;
                r.descriptor().content_ext[0] = type == 4 ? 0 : opening;
                publisher.commit(r);
                ++seqno;
            }
        }
    }
    struct Sink : FollowSink {
        const SpanLabels* labels = nullptr;
        std::vector<std::uint64_t> seqnos, labels_seen;
        bool event(const SourceEvent& e) override {
            seqnos.push_back(e.descriptor.seqno);
            labels_seen.push_back(labels->label_of(e.descriptor, 0).value_or(0));
            return true;
        }
    };
    std::atomic<bool> stop{false};
    struct Run {
        FollowResult result;
        std::vector<std::uint64_t> seqnos, labels;
    };
    auto run = [&](SpanLimit until, const char* where_text, std::uint16_t only_type = 0) {
        SpanLabels table = span_labels_for(s);
        std::unique_ptr<EventPredicate> where;
        if (where_text != nullptr) {
            auto compiled = compile_where(where_text, s, "--where", {}, &table);
            EXPECT_TRUE(compiled.ok()) << where_text;
            where = std::move(*compiled);
        }
        auto reader = RingReader::open(path);
        EXPECT_TRUE(reader.ok());
        std::unique_ptr<EventSource> source = std::move(RingSource::open_live(std::move(*reader), path).value());
        FollowOptions options;
        options.start = Position::oldest();
        options.span_labels = &table;
        options.span_stop = until;
        options.where = where.get();
        options.stop_flag = &stop;  // a bound: the watchdog below, should the limit never be met
        options.max_sleep = std::chrono::milliseconds(10);
        if (only_type != 0) options.filter.types.add(only_type);
        Sink sink;
        sink.labels = &table;
        std::thread watchdog([&] {
            for (int i = 0; i < 1000 && !stop.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
            stop.store(true);
        });
        auto result = follow(source, options, sink);
        stop.store(true);
        watchdog.join();
        stop.store(false);
        EXPECT_TRUE(result.ok());
        return Run{*result, sink.seqnos, sink.labels_seen};
    };
    // --until g:3: through CLOSE of instance 3 (seqno 14), then the loop ends, not the watchdog.
    Run r = run({SpanLimit::Kind::End, 0, 3, 0}, nullptr);
    EXPECT_EQ(r.result.end, FollowEnd::Stop);
    ASSERT_EQ(r.seqnos.size(), 14u);
    EXPECT_EQ(r.seqnos.back(), 14u);
    EXPECT_EQ(r.labels[1], 1u);
    EXPECT_EQ(r.labels[13], 3u);
    EXPECT_EQ(r.labels[4], 0u);  // DONE carries no tag
    // --until g.done:3: through DONE of 3.
    r = run({SpanLimit::Kind::Stage, 0, 3, 4}, nullptr);
    EXPECT_EQ(r.result.end, FollowEnd::Stop);
    EXPECT_EQ(r.seqnos.size(), 15u);
    // A range topped at 3: instances 2 and 3 (4 tagged events each), then the
    // OPEN of 4 ends reading, as DONE of 3 settled label 3.
    r = run({}, "group >= 2 && group <= 3");
    EXPECT_EQ(r.result.end, FollowEnd::Stop);
    EXPECT_TRUE(r.result.range_passed);
    EXPECT_EQ(r.seqnos, (std::vector<std::uint64_t>{6, 7, 8, 9, 11, 12, 13, 14}));
    EXPECT_EQ(r.result.counters.events, 16u);  // read up to the OPEN of 4 (seqno 16), not handed out
    // Only INNER events, whose OPEN the filter hides: their labels still read.
    r = run({SpanLimit::Kind::End, 0, 5, 0}, "group > 3", 2);
    EXPECT_EQ(r.result.end, FollowEnd::Stop);
    EXPECT_EQ(r.seqnos, (std::vector<std::uint64_t>{17, 18, 22, 23}));
    EXPECT_EQ(r.labels, (std::vector<std::uint64_t>{4, 4, 5, 5}));
}

}  // namespace
}  // namespace evring
