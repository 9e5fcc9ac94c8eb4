// Ring sets with real threads and processes: several processes writing into
// one set, each thread its own member; writers killed with SIGKILL mid-run;
// their members reclaimed by a later writer; a merged reader that reads every
// member's events in member sequence order, accounts for every sequence
// number, and never crashes or hangs. Counts are bounded; nothing is timed.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "evring/set/ring_set.hpp"
#include "set/ring_set_manifest.hpp"
#include "source/ring_set_source.hpp"
#include "support/child_process.hpp"
#include "support/ring_sets.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::set_options_in;

RingSetSpec spec() { return test::set_spec("procs", 8, 12, 18); }

// The set at `path`, merged from its oldest events, read until it stops;
// `late` gets the source's late_events().
test::Drained drain_set(const std::string& path, std::uint64_t* late = nullptr) {
    auto source = RingSetSource::open(path, "procs");
    EXPECT_TRUE(source.ok()) << source.error().message();
    if (!source) return {};
    auto moved = (*source)->seek(Position::oldest());
    EXPECT_TRUE(moved.ok()) << moved.error().message();
    test::Drained got = test::drain_all(**source);
    if (late) *late = (*source)->late_events();
    return got;
}

// A child: joins the set, starts `threads` threads that each publish
// `count` events (0: until killed), tells the parent when all are bound, and
// exits only once the parent closes `hold` (so that its members stay held
// while the other writers take theirs: a writer that exited leaves zombies,
// which the next writer rightly reclaims).
pid_t spawn_writer(const std::string& dir, int threads, std::uint64_t count, test::Pipe& bound, test::Pipe& hold) {
    return test::spawn([&, threads, count] {
        bound.close_read();
        hold.close_write();
        SetCreateOptions options = set_options_in(dir);
        options.keep_on_close = true;  // its members (and events) outlive it, as after a crash
        auto set = RingSetWriter::create(spec(), options);
        if (!set) return 2;
        std::atomic<int> ready{0};
        std::vector<std::thread> workers;
        for (int t = 0; t < threads; ++t)
            workers.emplace_back([&] {
                auto p = set->publisher();
                if (!p) {
                    std::fprintf(stderr, "writer %d: %s\n", ::getpid(), p.error().message().c_str());
                    ::_exit(3);
                }
                auto first = (*p)->reserve(16);  // every member holds an event before the parent acts
                (*p)->commit(first);
                if (++ready == threads) bound.send(std::uint64_t{1});
                // Every thread keeps its own member: none exits (releasing its
                // member for reuse) before all are bound.
                while (ready.load() < threads) std::this_thread::yield();
                for (std::uint64_t i = 1; count == 0 || i < count; ++i) {
                    auto r = (*p)->reserve(16);
                    std::memcpy(r.payload(), &i, 8);
                    (*p)->commit(r);
                    if (count == 0 && i % 64 == 0) std::this_thread::yield();
                }
            });
        for (auto& w : workers) w.join();
        hold.wait_for_close();
        return 0;
    });
}

TEST(RingSetProcesses, ProcessesShareASetAndKilledWritersMembersAreReadToTheirEndAndReclaimed) {
    test::TempDir dir;
    auto keeper = RingSetWriter::create(spec(), set_options_in(dir.path()));  // holds the set open
    ASSERT_TRUE(keeper.ok()) << keeper.error().message();

    test::Pipe bound_a, bound_b, hold;
    const pid_t victim = spawn_writer(dir.path(), 2, 0, bound_a, hold);  // runs until killed
    const pid_t steady = spawn_writer(dir.path(), 2, 3000, bound_b, hold);
    bound_a.close_write();
    bound_b.close_write();
    std::uint64_t one = 0;
    ASSERT_TRUE(bound_a.receive(one));
    ASSERT_TRUE(bound_b.receive(one));
    hold.close_write();  // both hold two members each: let them finish
    ASSERT_EQ(::kill(victim, SIGKILL), 0);  // possibly mid-event
    EXPECT_EQ(test::exit_code_of(victim), 128 + SIGKILL);
    EXPECT_EQ(test::exit_code_of(steady), 0);

    auto manifest = read_set_manifest(keeper->path());
    ASSERT_TRUE(manifest.ok());
    EXPECT_EQ(manifest->members.size(), 4u);  // two processes, two threads each


    // A later writer reclaims the killed process's members (their writers are gone).
    test::Pipe bound_c, hold_c;
    const pid_t late = spawn_writer(dir.path(), 2, 500, bound_c, hold_c);
    bound_c.close_write();
    hold_c.close_write();
    ASSERT_TRUE(bound_c.receive(one));
    EXPECT_EQ(test::exit_code_of(late), 0);

    const test::Drained got = drain_set(keeper->path());
    std::map<std::uint32_t, std::uint64_t> next_seqno;  // per member: sequence order, nothing repeated
    for (const test::Got& g : got.items) {
        if (g.step == SourceStep::Notice) continue;
        auto& expected = next_seqno[g.member];
        EXPECT_GT(g.seqno, expected) << "member " << g.member;  // an event's, or a gap's first
        expected = g.seqno + g.count - 1;
    }
    const std::uint64_t events = got.events().size();
    // The late writer reclaimed two of the four dead members (replacing their
    // rings); the other two are read to their end.
    EXPECT_GE(events, 2u * 500u);
    EXPECT_EQ(next_seqno.size(), 4u);
}

TEST(RingSetProcesses, ThreadsOfOneProcessEachWriteTheirOwnMemberWithoutLoss) {
    test::TempDir dir;
    auto set = RingSetWriter::create(spec(), set_options_in(dir.path()));
    ASSERT_TRUE(set.ok()) << set.error().message();
    constexpr int kThreads = 4;
    constexpr std::uint64_t kCount = 2000;  // within each member's 4096 descriptors
    std::vector<std::thread> workers;
    std::atomic<int> bound{0};
    for (int t = 0; t < kThreads; ++t)
        workers.emplace_back([&] {
            auto p = set->publisher();
            ASSERT_TRUE(p.ok());
            ++bound;
            while (bound.load() < kThreads) std::this_thread::yield();  // all bound: one member each
            for (std::uint64_t i = 0; i < kCount; ++i) {
                auto r = (*p)->reserve(16);
                (*p)->commit(r);
            }
        });
    for (auto& w : workers) w.join();
    std::uint64_t counted_late = 0;
    const test::Drained got = drain_set(set->path(), &counted_late);
    EXPECT_NE(got.last, SourceStep::Failed);
    EXPECT_TRUE(got.gaps().empty());
    std::uint64_t last_nanos = 0, late = 0;
    for (const test::Seen& e : got.events()) {
        if (e.nanos < last_nanos) ++late;
        last_nanos = std::max(last_nanos, e.nanos);
    }
    EXPECT_EQ(got.events().size(), kThreads * kCount);
    EXPECT_EQ(set->members_held(), static_cast<std::uint32_t>(kThreads));
    EXPECT_EQ(late, 0u);
    EXPECT_EQ(counted_late, 0u);
}

}  // namespace
}  // namespace evring
