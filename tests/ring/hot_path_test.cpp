// Proof that the write and read paths, a registered reader's publications
// included, neither allocate nor make system calls.
//
// Allocation: this binary replaces the global operator new/delete and malloc
// family with counting versions; the loop runs with counting switched on.
// System calls: the loop runs in a forked child under a seccomp filter that
// turns every system call except the few needed to leave (exit, exit_group,
// rt_sigreturn) into SIGSYS; the handler counts them in shared memory and the
// parent checks the count. Each detector is first shown to detect.
#include <fcntl.h>
#include <linux/audit.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include <gtest/gtest.h>

#include "evring/clock.hpp"
#include "evring/source/flow_filter.hpp"
#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/publisher.hpp"
#include "registry/reader_kinds.hpp"
#include "evring/ring/ring_writer.hpp"
#include "registry/reader_listing.hpp"
#include "registry/reader_registration.hpp"
#include "evring/schema/typed_publish.hpp"
#include "support/seccomp_filter.hpp"
#include "support/temp_ring.hpp"

#if defined(__SANITIZE_ADDRESS__)
// AddressSanitizer owns malloc and operator new: counting replacements cannot
// be installed beside it. The allocation proof runs in the release build.
#define EVRING_COUNTING_ALLOCATOR 0
#else
#define EVRING_COUNTING_ALLOCATOR 1
#endif

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
}  // namespace

#if EVRING_COUNTING_ALLOCATOR
extern "C" void* __libc_malloc(size_t);
extern "C" void* __libc_calloc(size_t, size_t);
extern "C" void* __libc_realloc(void*, size_t);
extern "C" void __libc_free(void*);

namespace {
void note_allocation() {
    // Relaxed: a counter read after the loop by the same thread.
    if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

extern "C" void* malloc(size_t size) {
    note_allocation();
    return __libc_malloc(size);
}
extern "C" void* calloc(size_t n, size_t size) {
    note_allocation();
    return __libc_calloc(n, size);
}
extern "C" void* realloc(void* p, size_t size) {
    note_allocation();
    return __libc_realloc(p, size);
}
extern "C" void free(void* p) { __libc_free(p); }

void* operator new(std::size_t size) {
    note_allocation();
    if (void* p = __libc_malloc(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
    note_allocation();
    return __libc_malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
void operator delete(void* p) noexcept { __libc_free(p); }
void operator delete[](void* p) noexcept { __libc_free(p); }
void operator delete(void* p, std::size_t) noexcept { __libc_free(p); }
void operator delete[](void* p, std::size_t) noexcept { __libc_free(p); }
#endif  // EVRING_COUNTING_ALLOCATOR

namespace evring {
namespace {

using test::RingPair;

struct Sample {
    std::uint64_t a, b, c;
};

// A reader of `rings` registered in the registry beside the ring file, which
// publishes every 64 events so that the proofs cover many publications.
ReaderRegistration registered_reader_of(const RingPair& rings) {
    const int fd = ::open(rings.path.c_str(), O_RDONLY | O_CLOEXEC);
    RegistrationOptions options;
    options.update_every_events = 64;
    options.print_warning = false;
    const ReaderInfo info{"hot-path", reader_kinds::kApplication, {}};
    auto seen = ReaderRegistration::register_reader(rings.path, fd, *rings.reader, info, options);
    ::close(fd);
    if (!seen) {
        ADD_FAILURE() << seen.error().message();
        return {};
    }
    return std::move(seen).value();
}

// The hot paths, exercised broadly: raw and typed writes, batches, a reader that keeps
// up (Success, NotReady) and is registered (on_event, on_idle), one that is
// lapped (Gap, Expired), payload copies, flow filters, and enough wrapping to
// advance the payload window many times. Returns a checksum so nothing is
// optimised away.
std::uint64_t exercise_hot_paths(Publisher& publisher, const MappedRing& reader_ring,
                                 ReaderRegistration& seen, int rounds) {
    Iterator keeping_up(reader_ring);
    Iterator lagging(reader_ring);
    FlowFilter filter;
    filter.types.add(7);
    filter.require_flow(1, 3);
    EventDescriptor event{};
    alignas(16) std::byte buffer[4096];
    std::byte source[1024] = {};
    std::uint64_t checksum = 0;
    for (int i = 0; i < rounds; ++i) {
        const std::size_t size = 16 + static_cast<std::size_t>(i % 64) * 16;
        Reservation r = publisher.reserve(size);
        r.descriptor().event_type = 7;
        r.descriptor().content_ext[1] = static_cast<std::uint64_t>(i % 5);
        std::memcpy(r.payload(), source, size);
        publisher.commit(r);
        Sample sample{static_cast<std::uint64_t>(i), 2, 3};
        checksum += publish(publisher, 9, {0, 3, 0, 0}, sample, std::span<const std::byte>(source, 8));
        if (i % 4 == 0) {  // batches: raw, typed, and publish_many over the batch limit
            const BatchEvent batch[3] = {{source, {1, 3, 0, 0}, static_cast<std::uint32_t>(size), 7},
                                         {source, {}, 0, 8},
                                         {source, {2, 3, 0, 0}, 40, 7}};
            checksum += publisher.publish_batch(batch);
            const Sample samples[2] = {sample, sample};
            checksum += publish_many<Sample>(publisher, 9, samples);
            BatchEvent many[Publisher::kMaxBatchEvents + 3];
            for (BatchEvent& e : many) e = {source, {0, 3, 0, 0}, 24, 10};
            checksum += publish_many(publisher, many);
        }
        for (;;) {
            const NextResult result = keeping_up.try_next(event);
            if (result == NextResult::NotReady) {
                seen.on_idle(keeping_up);
                break;
            }
            if (result == NextResult::Success) seen.on_event(keeping_up, event);
            if (result == NextResult::Success && filter.matches(event) &&
                copy_payload(reader_ring, event, buffer, sizeof buffer) == PayloadResult::Ok)
                checksum += buffer[0] == std::byte{0} ? 1 : 0;
        }
        if (i % 1000 == 0 && lagging.try_next(event) == NextResult::Success)
            checksum += static_cast<std::uint64_t>(copy_payload(reader_ring, event, buffer, sizeof buffer));
        checksum += wall_clock_nanos() & 1;
    }
    return checksum + lagging.total_lost();
}

TEST(HotPath, AllocationCounterSeesAnAllocation) {
    if (!EVRING_COUNTING_ALLOCATOR)
        GTEST_SKIP() << "AddressSanitizer replaces malloc, so the counting allocator is not installed; "
                        "the release build runs this proof";
    g_counting.store(true);
    const long before = g_allocations.load();
    void* p = std::malloc(32);
    auto* q = new int(5);
    g_counting.store(false);
    std::free(p);
    delete q;
    EXPECT_EQ(g_allocations.load() - before, 2);
}

TEST(HotPath, WritingAndReadingAllocateNothing) {
    if (!EVRING_COUNTING_ALLOCATOR)
        GTEST_SKIP() << "AddressSanitizer replaces malloc, so the counting allocator is not installed; "
                        "the release build runs this proof";
    RingPair rings(test::small_params(8, 16));
    Publisher publisher(*rings.writer);
    ReaderRegistration seen = registered_reader_of(rings);
    ASSERT_TRUE(seen.registered());
    exercise_hot_paths(publisher, *rings.reader, seen, 1000);  // warm-up: clock calibration etc.
    g_counting.store(true);
    const long before = g_allocations.load();
    const std::uint64_t checksum = exercise_hot_paths(publisher, *rings.reader, seen, 400'000);
    g_counting.store(false);
    EXPECT_EQ(g_allocations.load() - before, 0);
    EXPECT_GT(checksum, 0u);
    // The registration did publish during the proof (every 64th of 800,000
    // events, and whenever the reader found nothing new after progress).
    const int fd = ::open(rings.path.c_str(), O_RDONLY | O_CLOEXEC);
    auto listing = list_readers(rings.path, fd, *rings.reader);
    ::close(fd);
    ASSERT_TRUE(listing) << listing.error().message();
    ASSERT_EQ(listing->readers.size(), 1u);
    EXPECT_GT(listing->readers[0].updates, 12'000u);
}

// Shared between the filtered child and the parent.
struct SyscallLog {
    std::atomic<long> count;
    std::atomic<long> first_number;
    std::atomic<int> finished;
};
SyscallLog* g_log = nullptr;

void on_sigsys(int, siginfo_t* info, void*) {
    // Relaxed: read by the parent after waitpid, which orders everything.
    if (g_log->count.fetch_add(1, std::memory_order_relaxed) == 0)
        g_log->first_number.store(info->si_syscall, std::memory_order_relaxed);
}

// Every system call but exit, exit_group and rt_sigreturn raises SIGSYS.
bool install_trap_filter() {
    sock_filter program[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigreturn, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    return test::install_seccomp_filter(program);
}

// Runs `body` in a child under the trap filter; returns the number of system
// calls it attempted (or -1 when the filter could not be installed).
template <class Body>
long syscalls_made_by(Body body, long* first_number) {
    void* shared = ::mmap(nullptr, sizeof(SyscallLog), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) return -1;
    g_log = new (shared) SyscallLog{};
    const pid_t pid = ::fork();
    if (pid == 0) {
        struct sigaction action {};
        action.sa_sigaction = on_sigsys;
        action.sa_flags = SA_SIGINFO;
        ::sigaction(SIGSYS, &action, nullptr);
        if (!install_trap_filter()) ::_exit(3);
        body();
        g_log->finished.store(1, std::memory_order_relaxed);  // relaxed: see on_sigsys
        ::syscall(SYS_exit_group, 0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    long result = -1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && g_log->finished.load() == 1) {
        result = g_log->count.load();
        *first_number = g_log->first_number.load();
    }
    ::munmap(shared, sizeof(SyscallLog));
    return result;
}

TEST(HotPath, SyscallTrapSeesASystemCall) {
    long first = -1;
    const long made = syscalls_made_by([] { ::syscall(SYS_getppid); }, &first);
    ASSERT_GE(made, 0) << "could not run a child under a seccomp filter";
    EXPECT_EQ(made, 1);
    EXPECT_EQ(first, SYS_getppid);
}

void expect_no_syscalls_in_hot_paths() {
    RingPair rings(test::small_params(8, 16));
    Publisher publisher(*rings.writer);
    ReaderRegistration seen = registered_reader_of(rings);
    ASSERT_TRUE(seen.registered());
    exercise_hot_paths(publisher, *rings.reader, seen, 1000);  // warm-up: clock calibration etc.
    long first = -1;
    const long made = syscalls_made_by(
        [&] {
            volatile std::uint64_t sink =
                exercise_hot_paths(publisher, *rings.reader, seen, 400'000);
            (void)sink;
        },
        &first);
    ASSERT_GE(made, 0) << "could not run a child under a seccomp filter";
    EXPECT_EQ(made, 0) << "first system call number: " << first;
}

// The default publisher of a ring its RingWriter holds exclusively takes the
// claimed path (writer_claim.hpp): the same proof for it.
std::uint64_t publish_on_claimed_path(Publisher& publisher, std::uint64_t events) {
    std::uint64_t sum = 0;
    alignas(16) std::byte payload[64] = {};
    for (std::uint64_t i = 0; i < events; ++i) {
        Reservation r = publisher.reserve(8 + (i % 7) * 8);
        r.descriptor().event_type = 3;
        std::memcpy(r.payload(), payload, r.descriptor().payload_size);
        publisher.commit(r);
        sum += r.seqno();
    }
    return sum;
}

TEST(HotPath, TheClaimedWriterPathAllocatesNothingAndMakesNoSystemCalls) {
    test::TempDir dir;
    auto owner = RingWriter::create(test::small_spec(dir.file("ring"), 8, 16));
    ASSERT_TRUE(owner.ok()) << owner.error().message();
    {
        Publisher warm(owner->ring());  // clock calibration, claim set-up; gives the claim back
        ASSERT_TRUE(warm.holds_claim());
        publish_on_claimed_path(warm, 1000);
    }
    if (EVRING_COUNTING_ALLOCATOR) {
        Publisher publisher(owner->ring());
        publish_on_claimed_path(publisher, 10);  // its thread takes the plain path
        g_counting.store(true);
        const long before = g_allocations.load();
        publish_on_claimed_path(publisher, 400'000);
        g_counting.store(false);
        EXPECT_EQ(g_allocations.load() - before, 0);
        EXPECT_TRUE(publisher.holds_claim());
    }
    // Made in the child: a publisher inherited across fork would revoke.
    auto* claimed = static_cast<std::atomic<int>*>(
        ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(static_cast<void*>(claimed), MAP_FAILED);
    long first = -1;
    const long made = syscalls_made_by(
        [&] {
            Publisher publisher(owner->ring());
            volatile std::uint64_t sink = publish_on_claimed_path(publisher, 400'000);
            (void)sink;
            claimed->store(publisher.holds_claim() ? 1 : 0);
        },
        &first);
    ASSERT_GE(made, 0) << "could not run a child under a seccomp filter";
    EXPECT_EQ(made, 0) << "first system call number: " << first;
    EXPECT_EQ(claimed->load(), 1) << "the child's publisher did not take the claimed path";
    ::munmap(static_cast<void*>(claimed), 4096);
}

TEST(HotPath, WritingAndReadingMakeNoSystemCallsWithTheTscClock) {
    restart_wall_clock();
    expect_no_syscalls_in_hot_paths();
}

TEST(HotPath, WritingAndReadingMakeNoSystemCallsWithTheRealtimeClock) {
    ::setenv("EVRING_CLOCK", "realtime", 1);
    restart_wall_clock();
    expect_no_syscalls_in_hot_paths();
    ::unsetenv("EVRING_CLOCK");
    restart_wall_clock();
}

}  // namespace
}  // namespace evring
