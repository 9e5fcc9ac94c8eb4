// Interest in the tools (docs/interest.md): the generated header's
// interest_of and publish helpers (from tests/schemas/interest.toml), and
// `evring watch --keywords`, `readers` and `info` run as programs.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "evring/ring/ring_extension.hpp"
#include "evring/ring/ring_writer.hpp"
#include "evring/schema/schema_embed.hpp"
#include "evring/ring/shared_word.hpp"
#include "interest_schema.hpp"  // generated from schemas/interest.toml
#include "support/evring_cli.hpp"
#include "support/schema_payload.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using test::TempDir;

TEST(GeneratedInterest, ConstantsComeFromTheSchema) {
    static_assert(market::keyword::trades == 1 && market::keyword::quotes == 2 && market::keyword::risk == 4);
    constexpr EventInterest quote = market::interest_of(market::EventType::QUOTE);
    static_assert(quote.keywords == 6 && quote.level == 5 && !quote.always);
    static_assert(market::interest_of(market::EventType::CHECKPOINT).always);
    static_assert(market::interest_of(market::EventType::HEARTBEAT).keywords == 0);
}

// A publisher of another kind, with reserve/commit but no interest(): it
// wants everything.
struct Recorder {
    struct Slot {
        EventDescriptor d{};
        std::array<std::byte, 64> bytes{};
        explicit operator bool() const { return true; }
        EventDescriptor& descriptor() { return d; }
        std::byte* payload() { return bytes.data(); }
        std::uint64_t seqno() const { return d.seqno; }
    };
    Slot reserve(std::uint64_t) { return Slot{}; }
    void commit(Slot&) { ++commits; }
    int commits = 0;
};

// Found by argument-dependent lookup from the generated helpers.
template <class T>
std::uint64_t publish(Recorder& recorder, std::uint16_t, const std::array<std::uint64_t, 4>&, const T&) {
    return static_cast<std::uint64_t>(++recorder.commits);
}

TEST(GeneratedInterest, HelpersSkipWhatNobodyWants) {
    TempDir dir;
    RingSpec spec = test::small_spec(dir.file("ring"));
    spec.content = ring_content(test::load_test_schema("interest.toml"));
    auto writer = RingWriter::create(spec, {});
    ASSERT_TRUE(writer) << writer.error().message();
    Publisher publisher(writer->ring());
    std::uint64_t& word = extension_in(&writer->ring().header())->interest;
    EXPECT_NE(market::publish_quote(publisher, {.price = 1}), 0u) << "nobody narrowed: published";
    shared::store_relaxed(word, interest_word(market::keyword::trades, 15));
    EXPECT_EQ(publisher.wants(market::EventType::QUOTE), nullptr);
    EXPECT_EQ(publisher.wants(market::EventType::TRADE), &publisher);
    EXPECT_EQ(market::publish_quote(publisher, {.price = 2}), 0u) << "skipped";
    EXPECT_NE(market::publish_trade(publisher, {.price = 3, .quantity = 1}), 0u);
    EXPECT_NE(market::publish_checkpoint(publisher, {.block = 7}), 0u) << "always recorded";
    EXPECT_NE(market::publish_heartbeat(publisher), 0u) << "no keywords, level 0";
    const std::uint64_t price = 4;
    std::uint64_t seqno = 99;
    EXPECT_TRUE(market::publish_checked(publisher, 3, std::as_bytes(std::span(&price, 1)), {}, &seqno));
    EXPECT_EQ(seqno, 0u) << "publish_checked skips too";
    shared::store_relaxed(word, interest_word(market::keyword::trades, 1));
    EXPECT_EQ(market::publish_trade(publisher, {.price = 5, .quantity = 1}), 0u) << "TRADE is level 2";
    Recorder recorder;
    EXPECT_EQ(market::publish_quote(recorder, {.price = 6}), 1u) << "a publisher without interest() wants everything";
}

using test::Outcome;
using test::slurp;

class InterestCli : public test::CliTest {
protected:
    void SetUp() override {
        CliTest::SetUp();
        if (IsSkipped()) return;
        RingSpec spec = test::small_spec(path_);
        spec.content = ring_content(test::load_test_schema("interest.toml"));
        auto writer = RingWriter::create(spec, {});
        ASSERT_TRUE(writer) << writer.error().message();
        writer_.emplace(std::move(writer).value());
        publisher_.emplace(writer_->ring());
    }
    void TearDown() override {
        if (watcher_ > 0) {
            ::kill(watcher_, SIGKILL);
            ::waitpid(watcher_, nullptr, 0);
        }
    }

    // `evring watch RING --keywords ... --format jsonl --count N` in the background.
    void start_watch(const std::string& keywords, int count) {
        const std::string out = dir_.file("watch.out");
        watcher_ = ::fork();
        if (watcher_ == 0) {
            const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            ::dup2(fd, 1);
            ::execl(bin_.c_str(), bin_.c_str(), "watch", path_.c_str(), "--keywords", keywords.c_str(), "--format",
                    "jsonl", "--count", std::to_string(count).c_str(), static_cast<char*>(nullptr));
            ::_exit(127);
        }
    }

    std::uint64_t word() const { return shared::load_relaxed(extension_in(&writer_->ring().header())->interest); }

    bool wait_for_word(bool narrowed) const {
        for (int i = 0; i < 1000; ++i) {
            if (interest_narrows(word()) == narrowed) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    }

    std::string path_ = dir_.file("feed");
    std::optional<RingWriter> writer_;
    std::optional<Publisher> publisher_;
    pid_t watcher_ = -1;
};

TEST_F(InterestCli, WatchRegistersItsKeywordsAndReadersAndInfoShowThem) {
    start_watch("trades", 3);
    ASSERT_TRUE(wait_for_word(true)) << "watch --keywords never narrowed the ring";
    EXPECT_EQ(word(), interest_word(market::keyword::trades, 15));
    const Outcome readers = run("readers " + path_);
    EXPECT_EQ(readers.code, 0) << readers.err;
    EXPECT_NE(readers.out.find("interest: keywords trades, levels 0..15: writers skip the rest"), std::string::npos)
        << readers.out;
    EXPECT_NE(readers.out.find("wants keywords trades, levels 0..15"), std::string::npos) << readers.out;
    const Outcome json = run("readers " + path_ + " --json");
    EXPECT_NE(json.out.find("\"interest\":\"keywords trades, levels 0..15\""), std::string::npos) << json.out;
    const Outcome info = run("info " + path_);
    EXPECT_NE(info.out.find("keywords trades, levels 0..15: writers skip the rest"), std::string::npos) << info.out;
    // The writer skips quotes; watch shows the trades it asked for.
    EXPECT_EQ(market::publish_quote(*publisher_, {.price = 1}), 0u);
    for (std::uint64_t i = 0; i < 3; ++i) ASSERT_NE(market::publish_trade(*publisher_, {.price = 10 + i, .quantity = 1}), 0u);
    int status = 0;
    for (int i = 0; i < 1000 && ::waitpid(watcher_, &status, WNOHANG) == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "watch --count 3 did not finish";
    watcher_ = -1;
    const std::string shown = slurp(dir_.file("watch.out"));
    EXPECT_NE(shown.find("\"price\":12"), std::string::npos) << shown;
    EXPECT_EQ(shown.find("QUOTE"), std::string::npos) << shown;
    EXPECT_EQ(word(), kInterestEverything) << "its reader left: back to everything";
    EXPECT_NE(run("info " + path_).out.find("everything (no registered reader narrowed it)"), std::string::npos);
}

TEST_F(InterestCli, BadInterestOptionsAreUsageErrors) {
    struct Case {
        std::string args, message;
    };
    const Case cases[] = {
        {"--keywords trade", "bad --keywords 'trade': unknown keyword 'trade' (schema 'market' has: trades, quotes, risk)"},
        {"--keywords trades,,risk", "bad --keywords 'trades,,risk'"},
        {"--keywords ''", "bad --keywords ''"},
        {"--level 16", "bad --level '16': levels go from 0 to 15"},
        {"--level x", "--level"},
        {"--keywords trades --no-register", "--keywords registers this reader's interest; it cannot go with --no-register"},
    };
    for (const Case& c : cases) {
        const Outcome r = run("watch " + path_ + " " + c.args + " --count 1");
        EXPECT_EQ(r.code, 2) << c.args << ": " << r.err;
        EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": " << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
    EXPECT_EQ(word(), kInterestEverything);
}

TEST_F(InterestCli, KeywordsNeedASchema) {
    RingSpec spec = test::small_spec(dir_.file("bare"));  // the test content: no schema
    auto bare = RingWriter::create(spec, {});
    ASSERT_TRUE(bare) << bare.error().message();
    const Outcome r = run("watch " + dir_.file("bare") + " --keywords trades --count 1");
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("carries none; give --schema FILE"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace evring
