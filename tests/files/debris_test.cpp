// Nothing left behind (ring_debris.hpp, lib/registry/registry_remove.cpp): registries
// go with their rings, what a killed writer leaves is found and reclaimed,
// and nothing that is someone else's is ever taken for debris.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/magic.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "registry/reader_registration.hpp"
#include "registry/reader_registry.hpp"
#include "files/ring_debris.hpp"
#include "files/writer_registry.hpp"
#include "evring/ring/ring_reader.hpp"
#include "evring/ring/ring_writer.hpp"
#include "registry/registry_file.hpp"
#include "registry/registry_identity.hpp"
#include "support/registry_ring.hpp"
#include "support/temp_ring.hpp"

namespace evring::test {
namespace {

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

RingIdentity identity_of(const RingReader& reader) {
    return detail::ring_identity_of(reader.fd(), reader.ring().header()).value();
}

// A pid no process has: a child that exited and was reaped.
pid_t dead_pid() {
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    int status = 0;
    ::waitpid(child, &status, 0);
    return child;
}

// A writer of `path` SIGKILLed while creating it: stopped by the test hook
// once its temporary file has its full size, then killed. Returns its pid.
pid_t kill_writer_mid_creation(const RingSpec& spec) {
    const pid_t child = ::fork();
    if (child == 0) {
        ::setenv("EVRING_TEST_STOP_AFTER_ALLOCATE", "1", 1);
        auto writer = RingWriter::create(spec);
        ::_exit(writer ? 0 : 1);
    }
    int status = 0;
    ::waitpid(child, &status, WUNTRACED);
    EXPECT_TRUE(WIFSTOPPED(status)) << "the hook did not stop the writer";
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
    return child;
}

// A directory on a hugetlbfs mount, or "" (and why not).
std::string hugetlbfs_directory(std::string& why) {
    for (const char* mount : {"/dev/hugepages", "/mnt/huge"}) {
        struct statfs fs {};
        if (::statfs(mount, &fs) != 0 || static_cast<unsigned long>(fs.f_type) != HUGETLBFS_MAGIC) continue;
        std::string dir = std::string(mount) + "/evring-debris-test-" + std::to_string(::getpid());
        if (::mkdir(dir.c_str(), 0700) == 0) return dir;
        why = std::string("cannot create a directory on ") + mount + ": " + std::strerror(errno);
        return {};
    }
    why = "no hugetlbfs mount at /dev/hugepages or /mnt/huge";
    return {};
}

TEST(WriterClosing, RemovesItsRegistryWhenNoReaderUsesIt) {
    TempDir dir;
    const std::string path = dir.file("feed");
    {
        auto writer = RingWriter::create(small_spec(path));
        ASSERT_TRUE(writer) << writer.error().message();
        auto reader = RingReader::open(path);
        ASSERT_TRUE(reader);
        ReaderRegistration r = ReaderRegistration::attach(*reader, reader_info("r"), quiet());
        ASSERT_TRUE(r.registered()) << r.warning();
        ASSERT_TRUE(exists(path + ".readers"));
    }  // the reader leaves first (its ring is still there), then the writer
    EXPECT_FALSE(exists(path));
    EXPECT_FALSE(exists(path + ".readers"));
}

TEST(WriterClosing, LeavesARegistryInUseAndItsLastReaderRemovesIt) {
    TempDir dir;
    const std::string path = dir.file("feed");
    auto created = RingWriter::create(small_spec(path));
    ASSERT_TRUE(created);
    std::optional<RingWriter> writer(std::move(created).value());
    auto reader = RingReader::open(path);
    ASSERT_TRUE(reader);
    ReaderRegistration first = ReaderRegistration::attach(*reader, reader_info("first"), quiet());
    ReaderRegistration second = ReaderRegistration::attach(*reader, reader_info("second"), quiet());
    ASSERT_TRUE(first.registered() && second.registered());
    writer.reset();  // the writer removes its ring
    EXPECT_FALSE(exists(path));
    EXPECT_TRUE(exists(path + ".readers"));  // two readers use it
    first.unregister();
    EXPECT_TRUE(exists(path + ".readers"));  // one still does
    second.unregister();
    EXPECT_FALSE(exists(path + ".readers"));
}

TEST(Remover, LeavesARegistryWhileARegistrantHoldsItShared) {
    TempDir dir;
    const std::string path = dir.file("feed");
    auto writer = RingWriter::create(small_spec(path));
    ASSERT_TRUE(writer);
    ASSERT_TRUE(create_reader_registry(*writer).ok());
    auto reader = RingReader::open(path);
    ASSERT_TRUE(reader);
    // What a registrant holds from attaching until its slot is claimed.
    const int registrant = ::open((path + ".readers").c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(registrant, 0);
    ASSERT_EQ(::flock(registrant, LOCK_SH), 0);
    auto removed = detail::remove_unused_registry(path + ".readers", identity_of(*reader),
                                                  detail::RegistryOwner::ThisInstance);
    ASSERT_TRUE(removed);
    EXPECT_FALSE(*removed);
    EXPECT_TRUE(exists(path + ".readers"));
    ::close(registrant);
    removed = detail::remove_unused_registry(path + ".readers", identity_of(*reader),
                                             detail::RegistryOwner::ThisInstance);
    ASSERT_TRUE(removed);
    EXPECT_TRUE(*removed);
    EXPECT_FALSE(exists(path + ".readers"));
}

TEST(Remover, LeavesAnotherInstancesRegistryWhenAskedForItsOwn) {
    RegistryRing ring;
    ReaderRegistration old = attach(ring, "old");
    ASSERT_TRUE(old.registered());
    const RingIdentity old_identity = identity_of(*ring.reader);
    old = ReaderRegistration();  // leaves while its ring is still there: the registry stays
    ring.recreate();
    auto removed = detail::remove_unused_registry(ring.registry_path(), identity_of(*ring.reader),
                                                  detail::RegistryOwner::ThisInstance);
    ASSERT_TRUE(removed);
    EXPECT_FALSE(*removed);
    removed = detail::remove_unused_registry(ring.registry_path(), old_identity, detail::RegistryOwner::ThisInstance);
    ASSERT_TRUE(removed);
    EXPECT_TRUE(*removed);
}

void expect_killed_writer_debris_reclaimed(const std::string& dir, const RingSpec& spec, const std::string& path) {
    const pid_t killed = kill_writer_mid_creation(spec);
    const std::string temp = path + "." + std::to_string(killed);
    struct stat st {};
    ASSERT_EQ(::stat(temp.c_str(), &st), 0) << "no temporary file left by the killed writer";
    const auto file_size = static_cast<std::uint64_t>(RingLayout::of(spec.params().size()).file_size);
    auto found = list_debris(dir);
    ASSERT_TRUE(found) << found.error().message();
    ASSERT_EQ(found->size(), 1u);
    const DebrisEntry& d = found->front();
    EXPECT_EQ(d.path, temp);
    EXPECT_EQ(d.kind, DebrisKind::TempRing);
    EXPECT_EQ(d.pid, killed);
    EXPECT_GE(d.size, file_size);
    EXPECT_GE(d.allocated, file_size);  // it holds the whole ring's memory (huge pages on hugetlbfs)
    // The next writer of the name reclaims it.
    {
        auto writer = RingWriter::create(spec);
        ASSERT_TRUE(writer) << writer.error().message();
        EXPECT_FALSE(exists(temp));
        found = list_debris(dir);
        ASSERT_TRUE(found);
        EXPECT_TRUE(found->empty());
    }
    // And gc, when no writer comes.
    const pid_t again = kill_writer_mid_creation(spec);
    found = list_debris(dir);
    ASSERT_TRUE(found);
    ASSERT_EQ(found->size(), 1u);
    auto removed = remove_debris(found->front());
    ASSERT_TRUE(removed) << removed.error().message();
    EXPECT_TRUE(*removed);
    EXPECT_FALSE(exists(path + "." + std::to_string(again)));
}

TEST(Debris, AWriterKilledMidCreationLeavesAFullSizeTempThatIsReclaimed) {
    TempDir dir;
    const std::string path = dir.file("feed");
    expect_killed_writer_debris_reclaimed(dir.path(), small_spec(path), path);
}

// On hugetlbfs the temporary file holds huge pages (allocated counts them)
// until it is removed; the directory is empty at the end.
TEST(Debris, OnHugetlbfsTheKilledWritersHugePagesAreReclaimed) {
    std::string why;
    const std::string dir = hugetlbfs_directory(why);
    if (dir.empty()) GTEST_SKIP() << why;
    const std::string path = dir + "/feed";
    {
        auto probe = RingWriter::create(small_spec(path, 15, 21));
        if (!probe) {
            ::rmdir(dir.c_str());
            GTEST_SKIP() << "cannot create a ring on hugetlbfs: " << probe.error().message();
        }
    }
    expect_killed_writer_debris_reclaimed(dir, small_spec(path, 15, 21), path);
    EXPECT_EQ(::rmdir(dir.c_str()), 0) << "files left on hugetlbfs: " << std::strerror(errno);
}

TEST(Debris, AnOrphanRegistryIsFoundAndRemovedButNotOneInUse) {
    TempDir dir;
    const std::string path = dir.file("feed");
    CreateOptions keep;
    keep.keep_on_close = true;  // as if killed: the ring and its registry stay
    {
        auto writer = RingWriter::create(small_spec(path), keep);
        ASSERT_TRUE(writer);
        ASSERT_TRUE(create_reader_registry(*writer).ok());
    }
    auto reader = RingReader::open(path);
    ASSERT_TRUE(reader);
    ReaderRegistration user = ReaderRegistration::attach(*reader, reader_info("user"), quiet());
    ASSERT_TRUE(user.registered());
    ASSERT_EQ(::unlink(path.c_str()), 0);
    auto found = list_debris(dir.path());
    ASSERT_TRUE(found);
    EXPECT_TRUE(found->empty()) << "a registry with a live reader listed as debris: " << found->front().path;
    user.unregister();  // the last reader of a removed ring takes the registry along
    EXPECT_FALSE(exists(path + ".readers"));
    // An orphan as a crash leaves it: a registry whose ring is gone.
    {
        auto writer = RingWriter::create(small_spec(path), keep);
        ASSERT_TRUE(writer);
        ASSERT_TRUE(create_reader_registry(*writer).ok());
    }
    ASSERT_EQ(::unlink(path.c_str()), 0);
    found = list_debris(dir.path());
    ASSERT_TRUE(found);
    ASSERT_EQ(found->size(), 1u);
    EXPECT_EQ(found->front().kind, DebrisKind::OrphanRegistry);
    EXPECT_EQ(found->front().why, "ring 'feed' is gone");
    auto removed = remove_debris(found->front());
    ASSERT_TRUE(removed);
    EXPECT_TRUE(*removed);
    EXPECT_FALSE(exists(path + ".readers"));
}

TEST(Debris, ANewWriterOfTheNameReclaimsAnEarlierInstancesRegistry) {
    TempDir dir;
    const std::string path = dir.file("feed");
    CreateOptions keep;
    keep.keep_on_close = true;  // as if killed: the ring and its registry stay
    {
        auto writer = RingWriter::create(small_spec(path), keep);
        ASSERT_TRUE(writer);
        ASSERT_TRUE(create_reader_registry(*writer).ok());
    }
    ASSERT_TRUE(exists(path + ".readers"));
    auto writer = RingWriter::create(small_spec(path));  // reclaims the zombie ring
    ASSERT_TRUE(writer);
    EXPECT_TRUE(writer->reclaimed_zombie());
    EXPECT_FALSE(exists(path + ".readers"));
}

TEST(Debris, NeverTakesFilesThatAreNotIts) {
    TempDir dir;
    const pid_t gone = dead_pid();
    {
        std::ofstream data(dir.file("data." + std::to_string(gone)));
        data << "someone's numbers\n";
    }
    {
        std::ofstream zeros(dir.file("mine." + std::to_string(::getpid())));  // a live process's
        zeros << std::string(64, '\0');
    }
    CreateOptions keep;
    keep.keep_on_close = true;
    {
        // A complete ring with a temporary-looking name: a ring, never debris.
        auto writer = RingWriter::create(small_spec(dir.file("ring." + std::to_string(gone))), keep);
        ASSERT_TRUE(writer);
    }
    auto found = list_debris(dir.path());
    ASSERT_TRUE(found);
    for (const DebrisEntry& d : *found) ADD_FAILURE() << d.path << " taken for debris: " << d.why;
}

}  // namespace
}  // namespace evring::test
