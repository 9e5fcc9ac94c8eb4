// The CLI's parts that need no process: the event formats, option values and
// escaping. (Positions and the time search are the library's:
// tests/source/event_source_test.cpp.)
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "output/escape.hpp"
#include "output/event_format.hpp"
#include "evring/schema/schema_render.hpp"
#include "ops/metrics_text.hpp"
#include "output/output.hpp"
#include "output/values.hpp"

namespace evring::cli {
namespace {

std::string printed(Format format, const EventDescriptor& event, const PayloadView& payload) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    {
        OutputBuffer out(fds[1]);
        print_event(out, format, event, payload);
    }
    ::close(fds[1]);
    std::string text(4096, '\0');
    ssize_t n = ::read(fds[0], text.data(), text.size());
    ::close(fds[0]);
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return text;
}

EventDescriptor sample_event() {
    EventDescriptor event{};
    event.seqno = 42;
    event.event_type = 1;
    event.payload_size = 3;
    event.record_epoch_nanos = 1795311900'000000007u;
    event.content_ext = {0, 5, 0, 18446744073709551615u};
    return event;
}

TEST(EventFormat, JsonlHasExactlyTheDocumentedKeys) {
    const std::byte bytes[] = {std::byte{0xab}, std::byte{0x01}, std::byte{0xff}};
    EXPECT_EQ(printed(Format::Jsonl, sample_event(), {PayloadView::State::Ok, bytes}),
              "{\"seqno\":42,\"event_type\":1,\"payload_size\":3,\"record_epoch_nanos\":"
              "1795311900000000007,\"time\":\"2026-11-22T01:45:00.000000007Z\",\"content_ext\":[0,5,0,18446744073709551615],\"payload\":"
              "\"ab01ff\"}\n");
    EXPECT_EQ(printed(Format::Jsonl, sample_event(), {PayloadView::State::Expired, {}}),
              "{\"seqno\":42,\"event_type\":1,\"payload_size\":3,\"record_epoch_nanos\":"
              "1795311900000000007,\"time\":\"2026-11-22T01:45:00.000000007Z\",\"content_ext\":[0,5,0,18446744073709551615],\"payload\":"
              "null}\n");
}

TEST(EventFormat, TextShowsTimeSeqnoTypeSizeAndNonZeroFlowTags) {
    EXPECT_EQ(printed(Format::Text, sample_event(), {}),
              "2026-11-22T01:45:00.000000007Z seq=42 type=RECORD_ERROR(1) size=3 ext[1]=5 "
              "ext[3]=18446744073709551615\n");
}

TEST(EventFormat, HexNeverDumpsAnExpiredPayload) {
    const std::string text = printed(Format::Hex, sample_event(), {PayloadView::State::Expired, {}});
    EXPECT_NE(text.find("payload=expired"), std::string::npos);
    EXPECT_NE(text.find("(payload expired"), std::string::npos);
    EXPECT_EQ(text.find("00000000 "), std::string::npos);
}

TEST(EventTypes, RecordErrorByNameAndOtherTypesByNumber) {
    EXPECT_EQ(parse_event_type(2, "RECORD_ERROR"), 1);
    EXPECT_EQ(parse_event_type(2, "17"), 17);
    EXPECT_FALSE(parse_event_type(2, "BLOCK_START").has_value());
    EXPECT_FALSE(parse_event_type(2, "70000").has_value());
}

TEST(Values, CountsRefuseSignsOverflowAndJunkNamingOptionAndValue) {
    EXPECT_EQ(parse_count("--count", "0").value(), 0u);
    EXPECT_EQ(parse_count("--count", "18446744073709551615").value(), 18446744073709551615u);
    for (const char* bad : {"-5", "18446744073709551616", "", "5x", "+5", " 5", "0x10"}) {
        auto parsed = parse_count("--count", bad);
        ASSERT_FALSE(parsed.ok()) << bad;
        EXPECT_EQ(parsed.error().message().rfind(std::string("bad --count '") + bad + "': ", 0), 0u)
            << parsed.error().message();
    }
    EXPECT_NE(parse_count("--count", "-5").error().message().find("negative"), std::string::npos);
}

TEST(Values, SizesLevelsAndChoices) {
    EXPECT_EQ(parse_size("--rotate-size", "64K").value(), 65536u);
    EXPECT_EQ(parse_size("--rotate-size", "4G").value(), std::uint64_t{4} << 30);
    EXPECT_EQ(parse_size("--rotate-size", "1000").value(), 1000u);
    for (const char* bad : {"-1M", "5Q", "", "M", "99999999999999999999999"})
        EXPECT_FALSE(parse_size("--rotate-size", bad).ok()) << bad;
    EXPECT_EQ(parse_int_in("--level", "19", 1, 19).value(), 19);
    EXPECT_FALSE(parse_int_in("--level", "0", 1, 19).ok());
    EXPECT_FALSE(parse_int_in("--level", "-3", 1, 19).ok());
    EXPECT_NE(parse_choice("--format", "xml", {"text", "jsonl"}).error().message().find("bad --format 'xml'"),
              std::string::npos);
    FlowFilter filter;
    EXPECT_TRUE(add_flow(filter, "1=42").ok());
    EXPECT_FALSE(add_flow(filter, "4=1").ok());
    EXPECT_FALSE(add_flow(filter, "1=").ok());
    EXPECT_FALSE(add_flow(filter, "1=99999999999999999999").ok());
}

TEST(Escape, ControlCharactersAndInvalidUtf8AreNeverShownRaw) {
    EXPECT_EQ(printable("ring"), "ring");
    EXPECT_EQ(printable("r\x1bing"), "r\\x1bing");
    EXPECT_EQ(printable(std::string("a\x1b[31mb\n\x7f", 9)), "a\\x1b[31mb\\x0a\\x7f");
    EXPECT_EQ(printable("caf\xc3\xa9"), "caf\xc3\xa9");      // valid UTF-8 stays
    EXPECT_EQ(printable("bad\xff\xc3"), "bad\\xff\\xc3");  // invalid bytes, a cut sequence
    EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a UTF-16 surrogate is not UTF-8
}

TEST(Escape, JsonStringsAreValidUtf8WhateverTheBytes) {
    std::string out;
    append_json_string(out, std::string("a\"b\\c\n\x01\xff\xc3\xa9", 10));
    EXPECT_EQ(out, "\"a\\\"b\\\\c\\u000a\\u0001\\ufffd\xc3\xa9\"");
}

// Issue 24: one JSON escaper (json_string_literal is append_json_string), and
// the other text formats and long echoed values.
TEST(Escape, OneJsonEscaperForTheCliAndTheLibrary) {
    const std::string bytes("a\"\x1b\xff\xc3\xa9", 6);
    std::string cli;
    append_json_string(cli, bytes);
    EXPECT_EQ(json_string_literal(bytes), cli);
    EXPECT_EQ(cli, "\"a\\\"\\u001b\\ufffd\xc3\xa9\"");
}

// Issue 23: the schema renderer's streaming escaper is append_json_string's
// body, DEL escaped like the other control characters.
TEST(Escape, StreamingJsonEscaperIsAppendJsonString) {
    struct Buffer {
        std::string text;
        void put(char c) { text += c; }
        void write(const char* p, std::size_t n) { text.append(p, n); }
    };
    const std::string bytes("a\"\\\x7f\x01\xff\xc3\xa9 z", 10);
    Buffer streamed;
    evring::put_json_string_body(streamed, bytes);
    std::string quoted;
    append_json_string(quoted, bytes);
    EXPECT_EQ("\"" + streamed.text + "\"", quoted);
    EXPECT_EQ(streamed.text, "a\\\"\\\\\\u007f\\u0001\\ufffd\xc3\xa9 z");
}

TEST(Escape, ProtobufAndLabelTextIsValidUtf8) {
    EXPECT_EQ(valid_utf8("bad\xffname"), "bad\xef\xbf\xbdname");
    EXPECT_EQ(valid_utf8("caf\xc3\xa9"), "caf\xc3\xa9");
    EXPECT_TRUE(is_valid_utf8("caf\xc3\xa9"));
    EXPECT_FALSE(is_valid_utf8("caf\xc3"));
    EXPECT_EQ(escape_label("bad\xff\"x\"\n"), "bad\xef\xbf\xbd\\\"x\\\"\\n");
}

TEST(Escape, LongValuesAreEchoedCutShortWithTheirSize) {
    EXPECT_EQ(shortened("short"), "short");
    const std::string huge(1 << 20, 'x');
    const std::string cut = shortened(huge);
    EXPECT_EQ(cut, std::string(kMaxEchoedBytes, 'x') + "...(1048576 bytes)");
    // Never in the middle of a character.
    const std::string accents = std::string(199, 'a') + "\xc3\xa9" + std::string(50, 'b');
    EXPECT_EQ(shortened(accents), std::string(199, 'a') + "...(251 bytes)");
}

}  // namespace
}  // namespace evring::cli
