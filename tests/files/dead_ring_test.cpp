// Rings whose writers were killed (lib/files/dead_ring.hpp, writers_open.hpp):
// told from rings kept on purpose and from live ones, listed as debris and
// removed with their registry; never a live writer's.
#include <sys/stat.h>
#include <unistd.h>

#include <fcntl.h>

#include <optional>

#include <gtest/gtest.h>

#include "evring/ring/ring_extension.hpp"
#include "evring/ring/ring_writer.hpp"
#include "evring/ring/shared_word.hpp"
#include "registry/reader_registration.hpp"
#include "files/dead_ring.hpp"
#include "files/ring_debris.hpp"
#include "ring/writers_open.hpp"
#include "support/child_process.hpp"
#include "support/registry_ring.hpp"
#include "support/temp_ring.hpp"

namespace evring {
namespace {

using detail::RingWriters;

RingWriters writers_of(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0) return RingWriters::NotARing;
    const RingWriters found = detail::ring_writers(fd, st);
    ::close(fd);
    return found;
}

std::uint64_t writers_open_of(const RingWriter& writer) {
    return shared::load_relaxed(
        detail::writers_open_word(*extension_in(const_cast<RingHeader*>(&writer.ring().header()))));
}

// A writer process killed while it writes: it leaves its ring (and the
// registry its reader made) behind.
void killed_writer(const std::string& path, bool with_reader) {
    const pid_t child = test::spawn([&] {
        auto writer = RingWriter::create(test::small_spec(path));
        if (!writer) return 2;
        if (with_reader) {
            auto ring = RingReader::open(path);
            if (!ring) return 3;
            auto seen = ReaderRegistration::attach(*ring, test::reader_info("reader"), test::quiet());
            if (!seen.registered()) return 4;
            ::_exit(0);  // no destructor runs: killed as far as the files can tell
        }
        ::_exit(0);
    });
    ASSERT_EQ(test::exit_code_of(child), 0);
}

TEST(DeadRing, AKilledWritersRingIsDebrisAndGoesWithItsRegistry) {
    test::TempDir dir;
    const std::string path = dir.file("killed");
    killed_writer(path, true);
    ASSERT_EQ(::access((path + ".readers").c_str(), F_OK), 0) << "the reader's registry";
    EXPECT_EQ(writers_of(path), RingWriters::Killed);
    auto found = list_debris(dir.path());
    ASSERT_TRUE(found.ok()) << found.error().message();
    ASSERT_EQ(found->size(), 1u);
    EXPECT_EQ(found->at(0).kind, DebrisKind::DeadRing);
    EXPECT_EQ(found->at(0).path, path);
    auto dead_left_out = list_debris(dir.path(), {}, false);
    ASSERT_TRUE(dead_left_out.ok());
    EXPECT_TRUE(dead_left_out->empty()) << "a live set's members are left to its next writer";
    auto removed = remove_debris(found->at(0));
    ASSERT_TRUE(removed.ok()) << removed.error().message();
    EXPECT_TRUE(*removed);
    EXPECT_NE(::access(path.c_str(), F_OK), 0);
    EXPECT_NE(::access((path + ".readers").c_str(), F_OK), 0) << "its unused registry goes too";
}

TEST(DeadRing, ARingKeptOnPurposeIsNot) {
    test::TempDir dir;
    const std::string path = dir.file("kept");
    {
        CreateOptions keep;
        keep.keep_on_close = true;
        auto writer = RingWriter::create(test::small_spec(path), keep);
        ASSERT_TRUE(writer.ok()) << writer.error().message();
        EXPECT_EQ(writers_open_of(*writer), 1u) << "open until its writer closes it";
        EXPECT_EQ(writers_of(path), RingWriters::Live);
    }
    EXPECT_EQ(writers_of(path), RingWriters::Kept);
    auto found = list_debris(dir.path());
    ASSERT_TRUE(found.ok());
    EXPECT_TRUE(found->empty());
}

// The word as a pread of the file sees it (the ring's writers may be gone).
std::uint64_t writers_open_in_file(const std::string& path) {
    RingExtension extension{};
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ~std::uint64_t{0};
    const bool read = ::pread(fd, &extension, sizeof extension, kRingExtensionOffset) ==
                      static_cast<ssize_t>(sizeof extension);
    ::close(fd);
    return read ? detail::writers_open_word(extension) : ~std::uint64_t{0};
}

TEST(DeadRing, AmongSharedWritersOnlyTheLastToCloseKeepingItClearsTheWord) {
    test::TempDir dir;
    const std::string path = dir.file("shared");
    CreateOptions shared_keep;
    shared_keep.mode = WriterProcesses::Many;
    shared_keep.keep_on_close = true;
    CreateOptions shared_remove = shared_keep;
    shared_remove.keep_on_close = false;
    std::optional<RingWriter> first, second;
    auto made = RingWriter::create(test::small_spec(path), shared_keep);
    ASSERT_TRUE(made.ok()) << made.error().message();
    first.emplace(std::move(made).value());
    EXPECT_EQ(writers_open_in_file(path), 1u);
    auto joined = RingWriter::create(test::small_spec(path), shared_remove);
    ASSERT_TRUE(joined.ok()) << joined.error().message();
    second.emplace(std::move(joined).value());
    EXPECT_EQ(writers_open_in_file(path), 1u);
    second.reset();
    EXPECT_EQ(writers_open_in_file(path), 1u) << "a writer still holds it";
    first.reset();
    EXPECT_EQ(writers_open_in_file(path), 0u) << "the last writer kept it on purpose";
    EXPECT_EQ(writers_of(path), RingWriters::Kept);
}

TEST(DeadRing, ALiveWritersRingIsNeverRemoved) {
    test::TempDir dir;
    const std::string path = dir.file("live");
    auto writer = RingWriter::create(test::small_spec(path));
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    const int dirfd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(dirfd, 0);
    auto refused = detail::remove_unheld_ring(dirfd, "live", path, false);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().errno_value(), EBUSY);
    EXPECT_NE(refused.error().message().find("in use by a live writer (pid " + std::to_string(::getpid())),
              std::string::npos)
        << refused.error().message();
    EXPECT_EQ(::access(path.c_str(), F_OK), 0);
    auto found = list_debris(dir.path());
    ASSERT_TRUE(found.ok());
    EXPECT_TRUE(found->empty());
    // A ring no writer holds goes, kept or not.
    { RingWriter closing = std::move(writer).value(); }  // removes its ring (not kept)
    killed_writer(path, false);
    auto removed = detail::remove_unheld_ring(dirfd, "live", path, false);
    ::close(dirfd);
    ASSERT_TRUE(removed.ok()) << removed.error().message();
    EXPECT_TRUE(*removed);
    EXPECT_NE(::access(path.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace evring
