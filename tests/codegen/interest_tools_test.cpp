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
#include <vector>

#include <gtest/gtest.h>

#include "evring/ring/ring_extension.hpp"
#include "evring/ring/ring_reader.hpp"
#include "evring/ring/ring_writer.hpp"
#include "evring/set/ring_set.hpp"
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
        start({"watch", path_, "--keywords", keywords, "--format", "jsonl", "--count", std::to_string(count)});
    }
    // `evring ARGS...` in the background, its stdout into watch.out.
    void start(const std::vector<std::string>& args) {
        const std::string out = dir_.file("watch.out");
        std::vector<char*> argv{bin_.data()};
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        watcher_ = ::fork();
        if (watcher_ == 0) {
            const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            ::dup2(fd, 1);
            ::execv(bin_.c_str(), argv.data());
            ::_exit(127);
        }
    }
    // Waits for the background command to exit 0.
    bool finished() {
        int status = 0;
        for (int i = 0; i < 1000 && ::waitpid(watcher_, &status, WNOHANG) == 0; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        watcher_ = -1;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
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

TEST_F(InterestCli, RecordRegistersItsInterestAndRecordsWhatItAskedFor) {
    const std::string rec = dir_.file("feed.evrec");
    start({"record", path_, "-o", rec, "--keywords", "quotes", "--interest-level", "5", "--count", "2"});
    ASSERT_TRUE(wait_for_word(true)) << "record --keywords never narrowed the ring";
    EXPECT_EQ(word(), interest_word(market::keyword::quotes, 5));
    EXPECT_EQ(market::publish_trade(*publisher_, {.price = 1, .quantity = 1}), 0u);  // skipped
    ASSERT_NE(market::publish_quote(*publisher_, {.price = 2}), 0u);
    ASSERT_NE(market::publish_quote(*publisher_, {.price = 3}), 0u);
    ASSERT_TRUE(finished()) << "record --count 2 did not finish";
    EXPECT_EQ(word(), kInterestEverything) << "its reader left: back to everything";
    const Outcome shown = run("watch " + rec + " --from oldest --format jsonl");
    EXPECT_EQ(std::count(shown.out.begin(), shown.out.end(), '\n'), 2) << shown.out;
    EXPECT_EQ(shown.out.find("TRADE"), std::string::npos) << shown.out;
    // --level is zstd's in record: the interest level has its own name.
    const Outcome bad = run("record " + path_ + " -o " + rec + "2 --interest-level 16 --count 1");
    EXPECT_EQ(bad.code, 2);
    EXPECT_NE(bad.err.find("bad --interest-level '16': levels go from 0 to 15"), std::string::npos) << bad.err;
}

TEST_F(InterestCli, MirrorRegistersItsInterest) {
    start({"mirror", path_, "--to", dir_.file("copy"), "--from", "latest", "--keywords", "trades", "--count", "1"});
    ASSERT_TRUE(wait_for_word(true)) << "mirror --keywords never narrowed the ring";
    EXPECT_EQ(word(), interest_word(market::keyword::trades, 15));
    EXPECT_EQ(market::publish_quote(*publisher_, {.price = 1}), 0u);  // skipped
    ASSERT_NE(market::publish_trade(*publisher_, {.price = 2, .quantity = 1}), 0u);
    ASSERT_TRUE(finished()) << "mirror --count 1 did not finish";
    EXPECT_EQ(word(), kInterestEverything);
}

TEST_F(InterestCli, RelayRefusesBadInterestBeforeConnecting) {
    // Port 1: nothing listens, so only an option check can answer with exit 2.
    const Outcome r = run("relay " + path_ + " --to nats://127.0.0.1:1/S --keywords trade");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("bad --keywords 'trade': unknown keyword 'trade'"), std::string::npos) << r.err;
}

TEST_F(InterestCli, ASetsMergedReaderRegistersInEveryMemberAndEachMemberSkipsByItsOwnWord) {
    SetCreateOptions create;
    create.directory.read_environment = false;
    create.directory.ring_dir_override = dir_.path();
    create.directory.print_warning = false;
    RingConfig config;
    config.name_or_path = "set";
    config.descriptor_shift = 8;
    config.payload_buf_shift = 16;
    auto set = RingSetWriter::create(RingSetSpec(config, ring_content(test::load_test_schema("interest.toml")), 4),
                                     create);
    ASSERT_TRUE(set) << set.error().message();
    std::optional<Result<Publisher*>> other;
    auto mine = set->publisher();  // member m0 (this thread's)
    std::thread([&] { other.emplace(set->publisher()); }).join();  // m1: released at thread exit, kept
    ASSERT_TRUE(mine.ok() && other && other->ok());
    Publisher& p = **mine;
    const std::string set_dir = dir_.file("set");
    start({"watch", set_dir, "--keywords", "trades", "--level", "2", "--format", "jsonl", "--count", "1"});
    auto narrowed = [&](const char* member) {
        auto reader = RingReader::open(set_dir + "/" + member);
        return reader && interest_narrows(shared::load_relaxed(extension_in(&reader->ring().header())->interest));
    };
    for (int i = 0; i < 1000 && !(narrowed("m0") && narrowed("m1")); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(narrowed("m0") && narrowed("m1")) << "the merged reader did not register in every member";
    EXPECT_FALSE(p.wants(market::EventType::QUOTE));  // the member's own word
    EXPECT_EQ(market::publish_quote(p, {.price = 1}), 0u);
    ASSERT_NE(market::publish_trade(p, {.price = 2, .quantity = 1}), 0u);
    ASSERT_TRUE(finished()) << "watch --count 1 did not finish";
    const std::string shown = slurp(dir_.file("watch.out"));
    EXPECT_NE(shown.find("\"price\":2"), std::string::npos) << shown;
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
