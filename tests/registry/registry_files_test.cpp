// The registry file against the world: damaged headers and entries, a
// registry of another ring instance, files in the way, readers without
// write permission, truncation under a registered reader, the writer's
// part, and a registry on hugetlbfs.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>

#include <gtest/gtest.h>

#include "evring/ring/iterator.hpp"
#include "files/writer_registry.hpp"
#include "registry/reader_listing.hpp"
#include "registry/reader_registration.hpp"
#include "evring/ring/ring_writer.hpp"
#include "support/child_process.hpp"
#include "support/registry_ring.hpp"

#ifndef HUGETLBFS_MAGIC
#define HUGETLBFS_MAGIC 0x958458f6
#endif

namespace evring::test {
namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// Runs `body` in a child process, as an unprivileged user when we are root
// (permissions do not bind root). Returns its exit code.
int run_unprivileged(const std::function<int()>& body) {
    return exit_code_of(spawn([&] {
        if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) return 90;
        return body();
    }));
}

struct HeaderDamage {
    const char* what;
    std::uint64_t offset;
    std::uint32_t value;
    const char* named;  // in the problem
};

TEST(DamagedRegistry, EachHeaderFieldIsReportedAndTheNextRegistrantReplacesTheFile) {
    const HeaderDamage cases[] = {
        {"version 0", offsetof(RegistryHeader, version), 0, "version is 0"},
        {"header size", offsetof(RegistryHeader, header_size), 64, "header_size is 64"},
        {"slot size", offsetof(RegistryHeader, slot_size), 512, "slot_size is 512"},
        {"capacity", offsetof(RegistryHeader, capacity), 5000, "capacity is 5000"},
        {"file size", offsetof(RegistryHeader, file_size), 4096, "file_size says 4096"},
        {"reserved", offsetof(RegistryHeader, reserved1), 1, "reserved header bytes"},
        {"ring inode", offsetof(RegistryHeader, ring) + offsetof(RingIdentity, inode), 1,
         "ring inode"},
        {"ring content type", offsetof(RegistryHeader, ring) + offsetof(RingIdentity, content_type),
         9, "content type"},
    };
    for (const HeaderDamage& c : cases) {
        SCOPED_TRACE(c.what);
        RegistryRing ring;
        { ReaderRegistration first = attach(ring, "first"); }
        poke_value(ring.registry_path(), c.offset, c.value);
        const ReaderListing listing = listing_of(ring);
        EXPECT_TRUE(listing.state == RegistryState::Damaged ||
                    listing.state == RegistryState::OtherRing);
        EXPECT_TRUE(contains(listing.problem, c.named)) << listing.problem;
        EXPECT_TRUE(contains(listing.problem, ring.registry_path())) << listing.problem;
        EXPECT_TRUE(listing.readers.empty());

        ReaderRegistration next = attach(ring, "next");
        ASSERT_TRUE(next.registered()) << next.warning();
        EXPECT_TRUE(contains(next.notice(), "replaced reader registry")) << next.notice();
        EXPECT_TRUE(contains(next.notice(), c.named)) << next.notice();
        const ReaderListing healed = listing_of(ring);
        EXPECT_EQ(healed.state, RegistryState::Valid);
        EXPECT_EQ(names_of(healed), std::vector<std::string>{"next"});
    }
}

TEST(DamagedRegistry, ATruncatedRegistryIsDamagedAndReplaced) {
    RegistryRing ring;
    { ReaderRegistration first = attach(ring, "first"); }
    ASSERT_EQ(::truncate(ring.registry_path().c_str(), 100), 0);
    const ReaderListing listing = listing_of(ring);
    EXPECT_EQ(listing.state, RegistryState::Damaged);
    EXPECT_TRUE(contains(listing.problem, "truncated")) << listing.problem;
    EXPECT_TRUE(attach(ring, "next").registered());
}

struct EntryDamage {
    std::uint64_t offset;  // within the slot
    std::uint64_t value;
    const char* named;
};

TEST(DamagedRegistry, EachEntryFieldOutOfRangeIsReportedAndNotUsed) {
    const EntryDamage cases[] = {
        {offsetof(RegistrySlot, state), 7, "state is 7"},
        {offsetof(RegistrySlot, generation), 0, "generation is 0"},
        {offsetof(RegistrySlot, pid), 0, "pid is 0"},
        {offsetof(RegistrySlot, pid), std::uint64_t{1} << 40, "pid is 1099511627776"},
        {offsetof(RegistrySlot, uid), std::uint64_t{1} << 33, "uid is"},
        {offsetof(RegistrySlot, kind), std::uint64_t{1} << 33, "kind is"},
        {offsetof(RegistrySlot, next_seqno), kMaxSeqno + 2, "next_seqno is"},
        {offsetof(RegistrySlot, lost), kMaxSeqno + 1, "lost is"},
        {offsetof(RegistrySlot, abandoned), ~std::uint64_t{0}, "abandoned is"},
        {offsetof(RegistrySlot, name) + 40, 0x4141414141414141u, "name has no terminating NUL"},
        {offsetof(RegistrySlot, detail) + 72, 0x4141414141414141u, "detail has no terminating NUL"},
        {offsetof(RegistrySlot, flags), 2, "flags are 0x2: unknown bits set"},
    };
    for (const EntryDamage& c : cases) {
        SCOPED_TRACE(c.named);
        RegistryRing ring;
        ring.publish(3);
        ReaderRegistration seen = attach(ring, "victim");
        seen.update(2, 0, 0);
        if (c.offset == offsetof(RegistrySlot, name) + 40) {  // fill the whole name
            for (std::uint64_t at = 0; at < kReaderNameBytes; at += 8)
                poke_value(ring.registry_path(),
                           registry_slot_offset(0) + offsetof(RegistrySlot, name) + at, c.value);
        } else if (c.offset == offsetof(RegistrySlot, detail) + 72) {
            for (std::uint64_t at = 0; at < kReaderDetailBytes; at += 8)
                poke_value(ring.registry_path(),
                           registry_slot_offset(0) + offsetof(RegistrySlot, detail) + at, c.value);
        } else {
            poke_value(ring.registry_path(), registry_slot_offset(0) + c.offset, c.value);
        }
        const ReaderListing listing = listing_of(ring);
        ASSERT_EQ(listing.readers.size(), 1u);
        EXPECT_TRUE(contains(listing.readers[0].problem, c.named)) << listing.readers[0].problem;
        EXPECT_FALSE(listing.readers[0].lag.has_value());
        EXPECT_EQ(listing.readers[0].liveness, ReaderLiveness::Alive);  // the lock still says so
        EXPECT_FALSE(listing.readers[0].reclaimed);
    }
}

TEST(OtherRingInstance, ARecreatedRingDoesNotInheritTheOldEntries) {
    RegistryRing ring;
    ReaderRegistration old_reader = attach(ring, "old");  // keeps its old registry file
    ASSERT_TRUE(old_reader.registered());
    ring.recreate();  // same path, content and sizes: a new instance
    const ReaderListing stale = listing_of(ring);
    EXPECT_EQ(stale.state, RegistryState::OtherRing);
    EXPECT_TRUE(contains(stale.problem, "another instance of the ring")) << stale.problem;
    EXPECT_TRUE(stale.readers.empty());

    ReaderRegistration fresh = attach(ring, "fresh");
    ASSERT_TRUE(fresh.registered()) << fresh.warning();
    EXPECT_TRUE(contains(fresh.notice(), "another instance")) << fresh.notice();
    old_reader.update(5, 0, 0);  // writes to the old, replaced file
    const ReaderListing listing = listing_of(ring);
    EXPECT_EQ(listing.state, RegistryState::Valid);
    EXPECT_EQ(names_of(listing), std::vector<std::string>{"fresh"});
}

TEST(OtherRingInstance, AReaderOfTheOldInstanceIsNotRegisteredAndLeavesTheNewRegistryAlone) {
    RegistryRing ring;
    auto old_ring =
        RingReader::open(ring.path);  // still reads the old instance after it is replaced
    ASSERT_TRUE(old_ring);
    ring.recreate();
    ReaderRegistration fresh = attach(ring, "fresh");
    ASSERT_TRUE(fresh.registered()) << fresh.warning();
    ReaderRegistration late = ReaderRegistration::attach(*old_ring, reader_info("late"), quiet());
    EXPECT_FALSE(late.registered());
    EXPECT_TRUE(contains(late.warning(), "re-created since this reader opened it"))
        << late.warning();
    const ReaderListing listing = listing_of(ring);
    EXPECT_EQ(listing.state, RegistryState::Valid);
    EXPECT_EQ(names_of(listing), std::vector<std::string>{"fresh"});

    ::unlink(ring.path.c_str());  // removed, not re-created: not registered either
    EXPECT_FALSE(attach(ring, "orphan").registered());
}

TEST(FilesInTheWay, AFileThatIsNotARegistryIsNeverTouched) {
    RegistryRing ring;
    const std::string text = "my notes, not a registry\n";
    FILE* f = std::fopen(ring.registry_path().c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(text.c_str(), f);
    std::fclose(f);

    ReaderRegistration seen = attach(ring, "polite");
    EXPECT_FALSE(seen.registered());
    EXPECT_TRUE(contains(seen.warning(), "is in the way of the reader registry and is left alone"))
        << seen.warning();
    EXPECT_EQ(listing_of(ring).state, RegistryState::NotARegistry);
    EXPECT_EQ(file_bytes(ring.registry_path()), text);

    // A registry of a newer version is left alone too.
    ::unlink(ring.registry_path().c_str());
    { ReaderRegistration first = attach(ring, "first"); }
    poke_value(ring.registry_path(), offsetof(RegistryHeader, version), std::uint32_t{2});
    EXPECT_FALSE(attach(ring, "old-evring").registered());
    EXPECT_EQ(listing_of(ring).state, RegistryState::UnsupportedVersion);
}

TEST(FilesInTheWay, ASymbolicLinkOrAFifoIsRefusedWithoutWaiting) {
    RegistryRing ring;
    const std::string target = ring.dir.file("elsewhere");
    ASSERT_EQ(::symlink(target.c_str(), ring.registry_path().c_str()), 0);
    ReaderRegistration via_link = attach(ring, "linked");
    EXPECT_FALSE(via_link.registered());
    EXPECT_TRUE(contains(via_link.warning(), "symbolic link")) << via_link.warning();
    EXPECT_NE(::access(target.c_str(), F_OK), 0);  // nothing created through it
    EXPECT_EQ(listing_of(ring).state, RegistryState::NotARegistry);

    ::unlink(ring.registry_path().c_str());
    ASSERT_EQ(::mkfifo(ring.registry_path().c_str(), 0644), 0);
    ReaderRegistration via_fifo = attach(ring, "fifo");
    EXPECT_FALSE(via_fifo.registered());
    EXPECT_TRUE(contains(via_fifo.warning(), "FIFO")) << via_fifo.warning();
    EXPECT_EQ(listing_of(ring).state, RegistryState::NotARegistry);
}

TEST(Permissions, TheRegistryTakesTheRingFilesModeBits) {
    RegistryRing ring;
    ASSERT_EQ(::chmod(ring.path.c_str(), 0640), 0);
    { ReaderRegistration seen = attach(ring, "a"); }
    struct stat st {};
    ASSERT_EQ(::stat(ring.registry_path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0640u);

    ::unlink(ring.registry_path().c_str());
    RegistrationOptions options = quiet();
    options.registry.file_mode = 0600;
    { ReaderRegistration seen = attach(ring, "b", options); }
    ASSERT_EQ(::stat(ring.registry_path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
}

// A reader that may read the ring but not write in its directory: reads
// every event, is not registered, and says so once.
TEST(Permissions, AReaderThatCannotCreateTheRegistryStillReadsAndWarnsOnce) {
    RegistryRing ring;
    ring.publish(5);
    // Root's child drops to nobody; anyone else is kept out by the mode alone.
    ASSERT_EQ(::chmod(ring.dir.path().c_str(), ::geteuid() == 0 ? 0755 : 0555), 0);
    ASSERT_EQ(::chmod(ring.path.c_str(), 0644), 0);
    int err_pipe[2];
    ASSERT_EQ(::pipe(err_pipe), 0);
    const int code = run_unprivileged([&] {
        ::dup2(err_pipe[1], 2);
        auto reader = RingReader::open(ring.path);
        if (!reader) return 10;
        RegistrationOptions options;  // prints its warning
        ReaderRegistration first =
            ReaderRegistration::attach(*reader, reader_info("nobody"), options);
        ReaderRegistration second =
            ReaderRegistration::attach(*reader, reader_info("nobody"), options);
        if (first.registered() || second.registered()) return 11;
        if (!contains(first.warning(), "Permission denied")) return 12;
        Iterator it(reader->ring());
        it.seek(1);
        EventDescriptor event{};
        int read = 0;
        while (it.try_next(event) == NextResult::Success) {
            first.on_event(it, event);
            ++read;
        }
        return read == 5 ? 0 : 13;
    });
    ::close(err_pipe[1]);
    std::string err;
    char buf[512];
    for (ssize_t n; (n = ::read(err_pipe[0], buf, sizeof buf)) > 0;)
        err.append(buf, static_cast<std::size_t>(n));
    ::close(err_pipe[0]);
    EXPECT_EQ(code, 0);
    EXPECT_NE(err.find("evring: reader not registered: "), std::string::npos) << err;
    EXPECT_EQ(err.find("evring: reader not registered: "),
              err.rfind("evring: reader not registered: "))
        << err;
    EXPECT_NE(::access(ring.registry_path().c_str(), F_OK), 0);
    ::chmod(ring.dir.path().c_str(), 0700);  // so it can be removed
}

TEST(Permissions, AReaderThatCannotWriteTheRegistryIsUnregisteredAndListsReadOnly) {
    RegistryRing ring;
    ASSERT_EQ(::chmod(ring.dir.path().c_str(), 0755), 0);
    ASSERT_EQ(::chmod(ring.path.c_str(), 0644), 0);
    { ReaderRegistration owner = attach(ring, "owner"); }  // registry 0644, ours
    if (::geteuid() != 0) {
        ASSERT_EQ(::chmod(ring.registry_path().c_str(), 0444), 0);
    }
    const int code = run_unprivileged([&] {
        auto reader = RingReader::open(ring.path);
        if (!reader) return 10;
        ReaderRegistration seen =
            ReaderRegistration::attach(*reader, reader_info("nobody"), quiet());
        if (seen.registered()) return 11;
        if (!contains(seen.warning(), "to write")) return 12;
        auto listing = list_readers(*reader);
        if (!listing || listing->state != RegistryState::Valid || listing->writable) return 13;
        return 0;
    });
    EXPECT_EQ(code, 0);
}

TEST(Truncation, ARegistryTruncatedUnderARegisteredReaderUnregistersItInsteadOfKillingIt) {
    RegistryRing ring;
    ReaderRegistration seen = attach(ring, "sturdy");
    ASSERT_TRUE(seen.registered());
    ASSERT_EQ(::truncate(ring.registry_path().c_str(), 0), 0);
    seen.update(1, 0, 0);  // SIGBUS, caught
    EXPECT_FALSE(seen.registered());
    EXPECT_TRUE(contains(seen.warning(), "was truncated")) << seen.warning();
    seen.update(2, 0, 0);
    EXPECT_EQ(listing_of(ring).state, RegistryState::NotARegistry);
}

TEST(WriterPart, CreatesARegistryForItsInstanceAndRemovesItOnClose) {
    TempDir dir;
    const std::string path = dir.file("feed");
    auto writer = RingWriter::create(small_spec(path));
    ASSERT_TRUE(writer) << writer.error().message();
    ASSERT_TRUE(create_reader_registry(*writer).ok());
    auto reader = RingReader::open(path);
    ASSERT_TRUE(reader);
    auto listing = list_readers(*reader);
    ASSERT_TRUE(listing);
    EXPECT_EQ(listing->state, RegistryState::Valid);
    {
        ReaderRegistration seen = ReaderRegistration::attach(*reader, reader_info("r"), quiet());
        ASSERT_TRUE(seen.registered());
        EXPECT_EQ(seen.notice(), "");  // the writer's registry was used as it is
        ASSERT_TRUE(create_reader_registry(*writer).ok());  // kept: the reader stays listed
        EXPECT_EQ(list_readers(*reader)->readers.size(), 1u);
    }
    ASSERT_TRUE(remove_reader_registry(*writer).ok());
    EXPECT_NE(::access((path + ".readers").c_str(), F_OK), 0);
    EXPECT_TRUE(remove_reader_registry(*writer).ok());  // missing is fine
}

TEST(WriterPart, ReplacesAnEarlierInstancesRegistryButNeverAForeignFile) {
    TempDir dir;
    const std::string path = dir.file("feed");
    // A reader of the first instance keeps its registry in use, so neither
    // the first writer's close nor the second writer's creation removes it.
    std::optional<RingReader> old_reader;
    ReaderRegistration old_registration;
    {
        auto first = RingWriter::create(small_spec(path));
        ASSERT_TRUE(first);
        ASSERT_TRUE(create_reader_registry(*first).ok());
        old_reader.emplace(RingReader::open(path).value());
        old_registration = ReaderRegistration::attach(*old_reader, reader_info("old"), quiet());
        ASSERT_TRUE(old_registration.registered());
    }
    auto second = RingWriter::create(small_spec(path));
    ASSERT_TRUE(second);
    ASSERT_TRUE(remove_reader_registry(*second).ok());  // not its instance's: left
    EXPECT_EQ(::access((path + ".readers").c_str(), F_OK), 0);
    old_registration.unregister();  // the old ring's last reader takes its registry along
    EXPECT_NE(::access((path + ".readers").c_str(), F_OK), 0);
    ASSERT_TRUE(create_reader_registry(*second).ok());
    auto reader = RingReader::open(path);
    ASSERT_TRUE(reader);
    EXPECT_EQ(list_readers(*reader)->state, RegistryState::Valid);

    ::unlink((path + ".readers").c_str());
    FILE* f = std::fopen((path + ".readers").c_str(), "w");
    std::fputs("not ours", f);
    std::fclose(f);
    const Status refused = create_reader_registry(*second);
    EXPECT_FALSE(refused.ok());
    EXPECT_TRUE(contains(refused.error().message(), "left alone")) << refused.error().message();
}

// A directory on a hugetlbfs mount we may write, or "" and why not.
std::string hugetlbfs_directory(std::string& why) {
    for (const char* mount : {"/dev/hugepages", "/mnt/huge"}) {
        struct statfs fs {};
        if (::statfs(mount, &fs) != 0 || static_cast<unsigned long>(fs.f_type) != HUGETLBFS_MAGIC)
            continue;
        std::string dir =
            std::string(mount) + "/evring-registry-test-" + std::to_string(::getpid());
        if (::mkdir(dir.c_str(), 0700) == 0) return dir;
        why = std::string("cannot create a directory on ") + mount + ": " + std::strerror(errno);
        return {};
    }
    why = "no hugetlbfs mount at /dev/hugepages or /mnt/huge";
    return {};
}

TEST(Hugetlbfs, TheRegistryIsMappedInWholeHugePages) {
    std::string why;
    const std::string dir = hugetlbfs_directory(why);
    if (dir.empty()) GTEST_SKIP() << why;
    const std::string path = dir + "/feed";
    {
        auto writer = RingWriter::create(small_spec(path, 15, 21));
        if (!writer) {
            ::rmdir(dir.c_str());
            GTEST_SKIP() << "cannot create a ring on hugetlbfs: " << writer.error().message();
        }
        auto reader = RingReader::open(path);
        ASSERT_TRUE(reader);
        ReaderRegistration seen = ReaderRegistration::attach(*reader, reader_info("huge"), quiet());
        ASSERT_TRUE(seen.registered()) << seen.warning();
        seen.update(1, 0, 0);
        struct stat st {};
        ASSERT_EQ(::stat((path + ".readers").c_str(), &st), 0);
        EXPECT_EQ(st.st_size % (2 << 20), 0);
        auto listing = list_readers(*reader);
        ASSERT_TRUE(listing);
        EXPECT_EQ(listing->state, RegistryState::Valid) << listing->problem;
        ASSERT_EQ(listing->readers.size(), 1u);
        EXPECT_EQ(listing->readers[0].liveness, ReaderLiveness::Alive);
        seen.unregister();
        ASSERT_TRUE(remove_reader_registry(*writer).ok());
    }
    ::rmdir(dir.c_str());
}

}  // namespace
}  // namespace evring::test
