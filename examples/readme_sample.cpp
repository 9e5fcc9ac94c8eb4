// The code sample of README.md as a complete program, so the build proves it
// compiles; tests/readme_sample_test.sh checks that README.md shows exactly
// the lines between the README-BEGIN and README-END markers.
//
//     readme_sample publish N   # create "feed", publish N ticks, one per millisecond
//     readme_sample follow N    # in another process: read N ticks of symbol 1
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <thread>

// README-BEGIN
#include <evring/ring/doorbell.hpp>
#include <evring/ring/iterator.hpp>
#include <evring/ring/payload.hpp>
#include <evring/ring/ring_reader.hpp>
#include <evring/ring/ring_writer.hpp>
#include <evring/schema/typed_publish.hpp>

struct Tick { std::uint64_t price; std::uint32_t quantity; };
constexpr std::uint16_t kTickContent = 0x5449;            // content types >= 4 are the application's
constexpr std::array<std::uint8_t, 32> kTickSchema = {1};  // names this exact payload layout

// Writer: create the ring "feed" (2^20 descriptors, 256 MiB of payload) and publish.
void publish_ticks(std::uint64_t symbol, std::uint64_t count) {
    auto config = evring::parse_ring_config("feed:20:28").value();
    auto writer = evring::RingWriter::create({config, {kTickContent, kTickSchema}})
                      .value();  // fails if a live writer owns "feed"
    evring::Publisher publisher(writer.ring());
    for (std::uint64_t i = 0; i < count; ++i) {
        evring::publish(publisher, /*event_type=*/7, /*flow tags=*/{symbol, 0, 0, 0}, Tick{100 + i, 5});
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}  // the writer removes "feed" when it goes

// Reader, in another process: follow the ring, sleeping on its doorbell when idle.
std::uint64_t follow_ticks(std::uint64_t wanted_symbol, std::uint64_t count) {
    auto reader = evring::RingReader::open("feed").value();
    if (auto s = reader.ring().check_content_type(kTickContent, kTickSchema); !s) return 0;
    evring::Iterator it(reader.ring());
    evring::Doorbell bell = evring::Doorbell::attach(reader.ring());
    evring::EventDescriptor event;
    Tick tick;
    std::uint64_t seen = 0, lost = 0;
    while (seen < count) {
        switch (it.try_next(event)) {
        case evring::NextResult::Success:
            if (event.content_ext[0] != wanted_symbol) break;  // flow tag: payload untouched
            if (evring::copy_payload(reader.ring(), event, &tick, sizeof tick) == evring::PayloadResult::Ok)
                ++seen;
            break;
        case evring::NextResult::Gap: lost += it.last_gap_lost(); break;  // fell behind
        case evring::NextResult::Abandoned: break;  // a writer died between reserve and commit
        case evring::NextResult::NotReady:  // nothing new: sleep until a commit
            if (!bell.wait(it.next_seqno(), std::chrono::milliseconds(100)) && !reader.writer_alive())
                return seen;  // quiet for 100 ms and the writer is gone
            break;
        }
    }
    return seen;
}
// README-END

int main(int argc, char** argv) {
    const std::string_view mode = argc == 3 ? argv[1] : "";
    const std::uint64_t count = argc == 3 ? std::strtoull(argv[2], nullptr, 10) : 0;
    if (mode == "publish") {
        publish_ticks(1, count);
        return 0;
    }
    if (mode == "follow") {
        const std::uint64_t seen = follow_ticks(1, count);
        std::printf("read %llu ticks\n", static_cast<unsigned long long>(seen));
        return seen == count ? 0 : 1;
    }
    std::fprintf(stderr, "usage: %s publish|follow COUNT\n", argv[0]);
    return 2;
}
