// Conformance with real RING01 rings written by another implementation: every
// snapshot in $EVRING_CONFORMANCE_DIR loads, and reads back completely and
// consistently through the ordinary reader API. Skipped (with the reason)
// when the variable is unset or names no snapshots.
#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "ring/snapshot.hpp"

namespace evring {
namespace {

std::vector<std::string> snapshots_in(const std::string& dir) {
    std::vector<std::string> files;
    if (DIR* d = ::opendir(dir.c_str())) {
        while (dirent* entry = ::readdir(d)) {
            const std::string name = entry->d_name;
            if (name.size() > 4 && name.compare(name.size() - 4, 4, ".zst") == 0)
                files.push_back(dir + "/" + name);
        }
        ::closedir(d);
    }
    std::sort(files.begin(), files.end());
    return files;
}

struct Span {
    std::uint64_t begin, end, seqno;
};

void check_snapshot(const std::string& path) {
    SCOPED_TRACE(path);
    auto loaded = load_snapshot(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message();
    const MappedRing& ring = loaded->ring;
    const RingHeader& header = ring.header();
    // Padding is only ever the never-written tail of the payload buffer.
    EXPECT_TRUE(check_missing_tail(header, loaded->decompressed_size).ok());
    EXPECT_EQ(loaded->decompressed_size + loaded->padded_bytes, ring.layout().file_size);

    Iterator it(ring);
    const std::uint64_t last = header.control.last_seqno;
    ASSERT_GT(last, 0u);
    const std::uint64_t first = it.oldest_seqno();
    EXPECT_EQ(first, last >= header.size.descriptor_capacity ? last - header.size.descriptor_capacity + 1 : 1);
    it.seek(first);
    std::vector<Span> spans;
    std::vector<std::byte> payload(header.size.payload_buf_size);
    // prefix_max[k]: the latest timestamp among the first k+1 events read.
    std::vector<std::uint64_t> prefix_max;
    std::uint64_t disordered = 0;
    EventDescriptor event;
    for (std::uint64_t s = first; s <= last; ++s) {
        ASSERT_EQ(it.try_next(event), NextResult::Success) << "seqno " << s;
        ASSERT_EQ(event.seqno, s);
        EXPECT_EQ(event.reserved, 0u) << s;
        EXPECT_EQ(event.payload_buf_offset % 8, 0u) << "payloads are at least 8-byte aligned, seqno " << s;
        EXPECT_LE(event.payload_buf_offset + event.payload_size, header.control.next_payload_byte) << s;
        ASSERT_EQ(copy_payload(ring, event, payload.data(), payload.size()), PayloadResult::Ok) << s;
        if (event.payload_size > 0)  // empty payloads share the next one's offset
            spans.push_back({event.payload_buf_offset, event.payload_buf_offset + event.payload_size, s});
        // Timestamps are only nearly ordered (several writer threads), but no
        // event is stamped earlier than one 256 or more events before it: the
        // bound `watch --from TIME` relies on (include/evring/source/position.hpp).
        const std::size_t index = prefix_max.size();
        if (index >= 256 && event.record_epoch_nanos < prefix_max[index - 256]) ++disordered;
        prefix_max.push_back(std::max(event.record_epoch_nanos, index ? prefix_max.back() : 0));
    }
    EXPECT_EQ(it.try_next(event), NextResult::NotReady);
    // Payload space is handed out once: no two payloads overlap.
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
    for (std::size_t i = 1; i < spans.size(); ++i)
        EXPECT_LE(spans[i - 1].end, spans[i].begin)
            << "payloads of seqno " << spans[i - 1].seqno << " and " << spans[i].seqno << " overlap";
    EXPECT_EQ(disordered, 0u) << "events stamped before an event 256+ seqnos earlier";
}

TEST(Conformance, RealSnapshotsLoadAndReadBackEveryCommittedEvent) {
    const char* dir = std::getenv("EVRING_CONFORMANCE_DIR");
    if (dir == nullptr || *dir == '\0')
        GTEST_SKIP() << "EVRING_CONFORMANCE_DIR is not set (it names a folder of real RING01 "
                        "snapshots, *.zst; the meson test sets it when "
                        "../shared/data/monad-snapshots exists beside the repository)";
    const auto files = snapshots_in(dir);
    if (files.empty()) GTEST_SKIP() << "no *.zst snapshots in EVRING_CONFORMANCE_DIR=" << dir;
    for (const auto& file : files) check_snapshot(file);
}

}  // namespace
}  // namespace evring
