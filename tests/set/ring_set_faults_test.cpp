// Ring sets under faults and hostile files (ring_set_source.hpp,
// ring_set_manifest.hpp): a set removed by its last writer's clean close ends
// its readers; a manifest entry naming another member's file, or a member
// file linked to another, is not read twice; a manifest that is not a
// regular file is named with what it is; a member cut short under a reader is
// damage with its loss counted; a member that joins is merged before events
// stamped after it joined are released, and what it overwrote before it was
// opened is reported.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "evring/clock.hpp"
#include "evring/set/ring_set.hpp"
#include "evring/source/source_open.hpp"
#include "set/ring_set_format.hpp"
#include "set/ring_set_manifest.hpp"
#include "source/ring_set_source.hpp"
#include "support/child_process.hpp"
#include "support/ring_sets.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::drain_all;
using test::publish_at;
using test::Seen;

struct SetFaults : test::SetFixture {
    std::unique_ptr<RingSetSource> open_oldest() { return open_at(Position::oldest()); }

    // Rewrites member entry `entry`'s name in the manifest (as a hostile
    // process with write access could).
    void name_entry(std::uint32_t entry, const char* name) {
        const std::string manifest = dir.file("set") + "/" + kSetManifestName;
        const int fd = ::open(manifest.c_str(), O_WRONLY | O_CLOEXEC);
        ASSERT_GE(fd, 0);
        std::array<char, 32> bytes{};
        std::memcpy(bytes.data(), name, std::strlen(name));
        const off_t at = static_cast<off_t>(kSetHeaderSize + std::uint64_t{entry} * kSetMemberEntrySize +
                                            offsetof(SetMemberEntry, name));
        ASSERT_EQ(::pwrite(fd, bytes.data(), sizeof(SetMemberEntry::name), at),
                  static_cast<ssize_t>(sizeof(SetMemberEntry::name)));
        ::close(fd);
    }
};

std::size_t count_containing(const std::vector<std::string>& lines, const std::string& text) {
    std::size_t n = 0;
    for (const auto& line : lines) n += line.find(text) != std::string::npos;
    return n;
}

// The default close (keep_on_close false) removes the set's directory: the
// reader reads what the members held, says once that the set was removed,
// and ends. Before, it re-read the missing manifest and said so on every
// call, never ending (drain_all fails after its step bound). The writer is
// another process: a member's reader learns of its writer's exit from a
// pidfd, which a writer in the reader's own process never signals.
TEST_F(SetFaults, ASetRemovedByItsWritersCleanCloseEndsItsReaderAfterOneNotice) {
    test::Pipe written, go;
    const pid_t child = test::spawn([&] {
        written.close_read();
        go.close_write();
        {
            RingSetWriter a = writer(), b = writer();  // keep_on_close false: the default
            for (std::uint64_t t : {10, 30}) publish_at(test::publisher_of(a), t);
            publish_at(test::publisher_of(b), 20);
            written.send(std::uint64_t{3});
            go.wait_for_close();
        }  // the clean close removes the set
        return 0;
    });
    written.close_write();
    go.close_read();
    std::uint64_t n = 0;
    ASSERT_TRUE(written.receive(n));
    auto source = open_oldest();
    EXPECT_EQ(drain_all(*source).events().size(), 3u);
    go.close_write();
    ASSERT_EQ(test::exit_code_of(child), 0);
    struct stat st {};
    ASSERT_NE(::stat(dir.file("set").c_str(), &st), 0);
    // Bounded: the members' ends are noticed within their writer-exit probes.
    test::Drained got;
    got.last = SourceStep::NotReady;
    for (int round = 0; round < 1000 && got.last != SourceStep::End; ++round) {
        const auto more = drain_all(*source, 10'000);
        got.items.insert(got.items.end(), more.items.begin(), more.items.end());
        got.last = more.last;
        if (got.last == SourceStep::NotReady) source->wait(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(got.last, SourceStep::End);
    EXPECT_EQ(count_containing(got.notices(), "was removed (its last writer closed it)"), 1u);
    EXPECT_LE(got.notices().size(), 4u);  // that one and each member's writer exit
    EXPECT_NE(source->end_text().find("removed by its last writer"), std::string::npos) << source->end_text();
    EXPECT_FALSE(source->live());
}

// A manifest entry that names another member's file: each member is read
// once, from its own file, and a notice names the lie.
TEST_F(SetFaults, AnEntryNamingAnotherMembersFileIsReadFromItsOwnFile) {
    auto set = members(2, true);
    publish_at(set[0], 10);
    publish_at(set[1], 20);
    name_entry(1, "m0");
    auto source = open_oldest();
    const auto got = drain_all(*source);
    EXPECT_EQ(got.events(), (std::vector<Seen>{{0, 10, 1}, {1, 20, 1}}));
    EXPECT_EQ(count_containing(got.notices(), "member entry 1 names 'm0', not its own file 'm1'"), 1u);
    auto manifest = read_set_manifest(dir.file("set"));
    ASSERT_TRUE(manifest.ok());
    ASSERT_EQ(manifest->members.size(), 2u);
    EXPECT_EQ(manifest->members[1].path, dir.file("set") + "/m1");
}

// A member file that is another member's file (a hard link put under its
// name) is read once, as the member it is first found as.
TEST_F(SetFaults, AMemberFileThatIsAnotherMembersFileIsNotReadTwice) {
    auto set = members(2, true);
    publish_at(set[0], 10);
    publish_at(set[1], 20);
    const std::string m0 = dir.file("set") + "/m0", m1 = dir.file("set") + "/m1", link = dir.file("set") + "/x";
    ASSERT_EQ(::link(m0.c_str(), link.c_str()), 0);
    ASSERT_EQ(::rename(link.c_str(), m1.c_str()), 0);
    auto source = open_oldest();
    const auto got = drain_all(*source);
    EXPECT_EQ(got.events(), (std::vector<Seen>{{0, 10, 1}}));
    EXPECT_EQ(count_containing(got.notices(), "it is the same file as member 0"), 1u);
}

// A manifest that is a FIFO, a directory or a symbolic link to a device:
// refused at once, naming the manifest and what it is (a FIFO is never
// opened for reading, so nothing waits on it).
TEST(SetManifestFiles, AManifestThatIsNotARegularFileIsNamedWithWhatItIs) {
    test::TempDir dir;
    struct Case {
        const char* what;
        std::function<int(const std::string&)> make;
    };
    const Case cases[] = {
        {"a FIFO", [](const std::string& p) { return ::mkfifo(p.c_str(), 0600); }},
        {"a directory", [](const std::string& p) { return ::mkdir(p.c_str(), 0700); }},
        {"a symbolic link", [](const std::string& p) { return ::symlink("/dev/null", p.c_str()); }},
        // A device node of its own needs root; without, one more FIFO.
        {::geteuid() == 0 ? "a character device" : "a FIFO",
         [](const std::string& p) {
             return ::geteuid() == 0 ? ::mknod(p.c_str(), S_IFCHR | 0600, ::makedev(1, 3)) : ::mkfifo(p.c_str(), 0600);
         }},
    };
    int n = 0;
    for (const Case& c : cases) {
        const std::string set = dir.file("set" + std::to_string(n++));
        ASSERT_EQ(::mkdir(set.c_str(), 0700), 0);
        const std::string manifest = set + "/" + kSetManifestName;
        ASSERT_EQ(c.make(manifest), 0) << c.what;
        auto source = open_source(set, {});
        ASSERT_FALSE(source.ok()) << c.what;
        const std::string message = source.error().message();
        EXPECT_NE(message.find("ring set manifest " + manifest + " is " + c.what + ", not a regular file"),
                  std::string::npos)
            << message;
    }
}

// A member cut short under the reader ends like a truncated ring: damage,
// counted, with the events it still held reported lost (its header still
// says how far it went); the other members go on.
TEST_F(SetFaults, AMemberCutShortUnderTheReaderIsDamageWithItsLossReported) {
    auto set = members(2, true);
    for (std::uint64_t t = 1; t <= 10; ++t) publish_at(set[0], t);
    publish_at(set[1], 100);
    auto source = open_at(Position::oldest());
    // Read the first few events, then cut member 0 to its header section.
    SourceItem item;
    for (int i = 0; i < 3; ++i) ASSERT_EQ(source->next(item), SourceStep::Event);
    ASSERT_EQ(::truncate((dir.file("set") + "/m0").c_str(), static_cast<off_t>(kHeaderSectionSize)), 0);
    const auto got = drain_all(*source);
    std::uint64_t member0_lost = 0;
    for (const auto& gap : got.gaps()) {
        EXPECT_EQ(gap.member, 0u);
        EXPECT_EQ(gap.reason, GapReason::LostToDamage);
        member0_lost += gap.count;
    }
    const auto events = got.events();
    std::uint64_t member0_events = 3;
    for (const auto& e : events) member0_events += e.member == 0;
    EXPECT_EQ(member0_events + member0_lost, 10u);
    EXPECT_GT(member0_lost, 0u);
    EXPECT_EQ(events.back(), (Seen{1, 100, 1}));
    EXPECT_TRUE(source->damaged());
    EXPECT_EQ(source->counters().damage_reports, 1u);
    EXPECT_EQ(source->counters().damaged, member0_lost);
}

// A member cut short while the reader waits on it: the wait looks at the
// member's doorbell in its mapping, under the SIGBUS guard, so it returns
// instead of killing the process (the CLI's `watch` of a set died so under
// AddressSanitizer), and the next read reports the damage.
TEST_F(SetFaults, AMemberCutShortWhileTheReaderWaitsWakesItAndTheReadReportsIt) {
    auto set = members(2, true);
    for (std::uint64_t t = 1; t <= 3; ++t) publish_at(set[0], t);
    publish_at(set[1], 100);
    auto source = open_at(Position::oldest());
    SourceItem item;
    for (int i = 0; i < 4; ++i) ASSERT_EQ(source->next(item), SourceStep::Event);
    ASSERT_EQ(source->next(item), SourceStep::NotReady);
    ASSERT_EQ(::truncate((dir.file("set") + "/m0").c_str(), static_cast<off_t>(kHeaderSectionSize)), 0);
    source->wait(std::chrono::milliseconds(20));
    const auto got = drain_all(*source);
    EXPECT_TRUE(got.events().empty());
    EXPECT_TRUE(source->damaged());
    EXPECT_EQ(source->counters().damage_reports, 1u);
}

// A member that joins after the reader opened the set, and writes before an
// older member's event is released, is merged before it: the event is not
// let through out of time order. (Before, the reader noticed the member at
// its next periodic look, after releasing the later event: late.)
TEST_F(SetFaults, AMemberThatJoinsIsMergedBeforeLaterEventsAreReleased) {
    RingSetWriter first = writer(true);
    Publisher& m0 = test::publisher_of(first);
    auto source = open_at(Position::oldest());
    RingSetWriter second = writer(true);  // member 1 joins
    Publisher& m1 = test::publisher_of(second);
    const std::uint64_t early = wall_clock_nanos();
    publish_at(m1, early);
    publish_at(m0, early + 1'000);
    auto got = drain_all(*source).events();
    source->wait(std::chrono::milliseconds(0));  // a periodic look at the manifest
    const auto more = drain_all(*source).events();
    got.insert(got.end(), more.begin(), more.end());
    EXPECT_EQ(got, (std::vector<Seen>{{1, early, 1}, {0, early + 1'000, 1}}));
    EXPECT_EQ(source->late_events(), 0u);
    EXPECT_EQ(source->counters().late, 0u);
}

// A member that joins after the reader opened the set and overwrites its
// first events before the reader looks: read from its oldest event, the
// events before it a RingReplaced gap of that member (before, lost without
// a word).
TEST_F(SetFaults, AMemberThatJoinsReportsWhatItOverwroteBeforeItWasOpened) {
    auto first = members(1, true, 4, 6);  // 64 descriptors a member
    publish_at(first[0], 5);
    auto source = open_at(Position::oldest());
    EXPECT_EQ(drain_all(*source).events().size(), 1u);
    RingSetWriter joined = writer(true, 4, 6);
    Publisher& m1 = test::publisher_of(joined);
    for (std::uint64_t t = 10; t < 110; ++t) publish_at(m1, t);  // 100 events: 1..36 overwritten
    source->wait(std::chrono::milliseconds(0));  // a look at the manifest
    const auto got = drain_all(*source);
    ASSERT_EQ(got.gaps().size(), 1u);
    EXPECT_EQ(got.gaps()[0].member, 1u);
    EXPECT_EQ(got.gaps()[0].seqno, 1u);
    EXPECT_EQ(got.gaps()[0].count, 36u);
    EXPECT_EQ(got.gaps()[0].reason, GapReason::RingReplaced);
    const auto events = got.events();
    ASSERT_EQ(events.size(), 64u);
    EXPECT_EQ(events.front(), (Seen{1, 46, 37}));
    EXPECT_EQ(source->counters().replaced, 36u);
}

}  // namespace
}  // namespace evring
