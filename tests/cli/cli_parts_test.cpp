// The CLI's parts that need no process: --from/--until parsing, finding a
// time in a ring whose timestamps are out of order, and the event formats.
#include <unistd.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "event_format.hpp"
#include "evring/publisher.hpp"
#include "output.hpp"
#include "position.hpp"
#include "support/temp_ring.hpp"

namespace evring::cli {
namespace {

TEST(ParseFrom, AcceptsEveryDocumentedForm) {
    EXPECT_EQ(parse_from("latest")->kind, Position::Kind::Latest);
    EXPECT_EQ(parse_from("oldest")->kind, Position::Kind::Oldest);
    auto seqno = parse_from("12345");
    EXPECT_EQ(seqno->kind, Position::Kind::Seqno);
    EXPECT_EQ(seqno->value, 12345u);
    auto back = parse_from("-10");
    EXPECT_EQ(back->kind, Position::Kind::Back);
    EXPECT_EQ(back->value, 10u);
    auto relative = parse_from("-250ms");
    EXPECT_EQ(relative->kind, Position::Kind::RelativeTime);
    EXPECT_EQ(relative->value, 250'000'000u);
    EXPECT_EQ(parse_from("-3m")->value, 180'000'000'000u);
    auto iso = parse_from("2026-11-22T01:45:00.5Z");
    EXPECT_EQ(iso->kind, Position::Kind::AbsoluteTime);
    EXPECT_EQ(iso->value, 1795311900'500000000u);
    EXPECT_EQ(parse_from("@1795311900.5")->value, 1795311900'500000000u);
    EXPECT_EQ(parse_from("@1795311900.000000001")->value, 1795311900'000000001u);
}

TEST(ParseFrom, RejectsNonsenseNamingWhatWasTyped) {
    for (const char* bad : {"", "yesterday", "-", "-0", "-5parsecs", "2026-13-01T00:00:00Z",
                            "2026-11-22T01:45:00.1234567891Z", "@abc", "12x"}) {
        auto parsed = parse_from(bad);
        ASSERT_FALSE(parsed.ok()) << bad;
        EXPECT_NE(parsed.error().message().find(std::string("'") + bad + "'"), std::string::npos)
            << parsed.error().message();
    }
    EXPECT_FALSE(parse_until("-5").ok());  // -N only means something for --from
    EXPECT_TRUE(parse_until("-5s").ok());
}

TEST(ResolveTime, RelativeTimesCountBackFromTheBase) {
    EXPECT_EQ(resolve_time(Position{Position::Kind::RelativeTime, 100}, 1000), 900u);
    EXPECT_EQ(resolve_time(Position{Position::Kind::RelativeTime, 5000}, 1000), 0u);
    EXPECT_EQ(resolve_time(Position{Position::Kind::AbsoluteTime, 7}, 1000), 7u);
}

// A ring whose events carry the given timestamps, in seqno order.
struct StampedRing {
    explicit StampedRing(const std::vector<std::uint64_t>& stamps) : rings(test::small_params(10, 16)) {
        Publisher publisher(*rings.writer);
        for (std::uint64_t stamp : stamps) {
            Reservation r = publisher.reserve(8);
            r.descriptor().event_type = 2;
            // Test-only: overwrite the timestamp reserve() took, before publishing.
            r.descriptor().record_epoch_nanos = stamp;
            publisher.commit(r);
        }
    }
    test::RingPair rings;
};

TEST(SeekTime, FindsTheFirstEventAtOrAfterTheTarget) {
    StampedRing ring({10, 20, 30, 40, 50, 60});
    Iterator it(*ring.rings.reader);
    EXPECT_EQ(seek_time(it, 0), 1u);
    EXPECT_EQ(seek_time(it, 10), 1u);
    EXPECT_EQ(seek_time(it, 11), 2u);
    EXPECT_EQ(seek_time(it, 60), 6u);
    EXPECT_EQ(seek_time(it, 61), 7u);  // none yet: the next one to be written
}

TEST(SeekTime, DoesNotSkipAnEventStampedLaterButSequencedEarlier) {
    // Two writers: seqno 3 was stamped at 100, after seqnos 4..6 were.
    StampedRing ring({10, 20, 100, 40, 50, 60, 70, 110, 120});
    Iterator it(*ring.rings.reader);
    EXPECT_EQ(seek_time(it, 65), 3u);  // 3 (stamped 100) comes before 7 (stamped 70)
    EXPECT_EQ(seek_time(it, 105), 8u);
}

TEST(SeekTime, StepsOverHolesLeftByUncommittedReservations) {
    test::RingPair rings(test::small_params(10, 16));
    Publisher publisher(*rings.writer);
    std::vector<Reservation> stalled;
    for (std::uint64_t i = 1; i <= 200; ++i) {
        Reservation r = publisher.reserve(8);
        r.descriptor().record_epoch_nanos = i * 10;
        if (i >= 90 && i <= 130) {
            stalled.push_back(r);  // never committed: a hole around the middle
            continue;
        }
        publisher.commit(r);
    }
    Iterator it(*rings.reader);
    EXPECT_EQ(seek_time(it, 1500), 150u);
    EXPECT_EQ(seek_time(it, 1000), 131u);  // 100..130 are holes: the first readable at/after
    EXPECT_EQ(seek_time(it, 500), 50u);
}

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
              "1795311900000000007,\"content_ext\":[0,5,0,18446744073709551615],\"payload\":"
              "\"ab01ff\"}\n");
    EXPECT_EQ(printed(Format::Jsonl, sample_event(), {PayloadView::State::Expired, {}}),
              "{\"seqno\":42,\"event_type\":1,\"payload_size\":3,\"record_epoch_nanos\":"
              "1795311900000000007,\"content_ext\":[0,5,0,18446744073709551615],\"payload\":"
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

}  // namespace
}  // namespace evring::cli
