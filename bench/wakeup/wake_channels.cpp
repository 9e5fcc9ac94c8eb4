// The wake-up variants (wake_channel.hpp): the futex doorbell (with and
// without its bound on the wake rate), and a pipe and an eventfd that the
// writer writes after each commit, as an application without evring's
// doorbell would signal its reader.
#include "wakeup/wake_channel.hpp"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "evring/ring/doorbell.hpp"
#include "support/bench_ring.hpp"

namespace evring::wakeup {

namespace {

using namespace std::chrono_literals;

class NoWake final : public WakeWriter {
public:
    void after_commit() override {}  // commit rang the doorbell
};

// The doorbell (doorbell.hpp): a FUTEX_WAIT in the ring's extension block,
// woken by the commit that follows the reader's announcement.
// `min_interval`: the Doorbell's bound on futex sleeps (default 100 us); 0
// makes every wait sleep on the futex, so each event measures a wake-up.
class DoorbellReader final : public WakeReader {
public:
    DoorbellReader(const MappedRing& ring, std::chrono::nanoseconds min_interval)
        : bell_(Doorbell::attach(ring)) {
        if (bell_.mode() != Doorbell::Mode::Futex)
            bench::die("evring-wakeup: the doorbell polls instead of sleeping: " + bell_.fallback_reason());
        if (min_interval >= 0ns) bell_.set_min_sleep_interval(min_interval);
    }
    void sleep(const Iterator& it) override { (void)bell_.wait(it.next_seqno(), 1s); }
    std::uint64_t sleeps() const override { return bell_.sleeps(); }

private:
    Doorbell bell_;
};

// A descriptor the writer writes after each commit and the reader blocks in
// read() on: a pipe (one byte per event) or an eventfd (a counter).
class FdWriter final : public WakeWriter {
public:
    FdWriter(int fd, bool eventfd) : fd_(fd), eventfd_(eventfd) {}
    void after_commit() override {
        const std::uint64_t one = 1;
        const ssize_t n = eventfd_ ? ::write(fd_, &one, sizeof one) : ::write(fd_, "x", 1);
        if (n <= 0) bench::die(std::string("evring-wakeup writer: write: ") + std::strerror(errno));
    }

private:
    int fd_;
    bool eventfd_;
};

class FdReader final : public WakeReader {
public:
    explicit FdReader(int fd) : fd_(fd) {}
    void sleep(const Iterator&) override {
        char drained[512];  // every pending byte (pipe) or the whole count (eventfd)
        ++sleeps_;
        if (::read(fd_, drained, sizeof drained) < 0 && errno != EINTR)
            bench::die(std::string("evring-wakeup reader: read: ") + std::strerror(errno));
    }
    std::uint64_t sleeps() const override { return sleeps_; }

private:
    int fd_;
    std::uint64_t sleeps_ = 0;
};

int fd_option(const ipc::PeerOptions& options, const char* key) {
    const std::string text = options.text(key);
    if (text.empty()) bench::die(std::string("evring-wakeup: peer option ") + key + "= is missing");
    return static_cast<int>(options.count(key));
}

std::vector<int> make_pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) bench::die(std::string("pipe2: ") + std::strerror(errno));
    return {fds[0], fds[1]};  // fd0: the reader's end, fd1: the writer's
}

std::vector<int> make_eventfd() {
    const int fd = ::eventfd(0, EFD_CLOEXEC);
    if (fd < 0) bench::die(std::string("eventfd: ") + std::strerror(errno));
    return {fd};
}

}  // namespace

const std::vector<WakeVariant>& wake_variants() {
    static const std::vector<WakeVariant> variants{
        {"futex", "doorbell, every wait on the futex (min_sleep_interval 0)", [] { return std::vector<int>{}; },
         [](const ipc::PeerOptions&) { return std::make_unique<NoWake>(); },
         [](const MappedRing& ring, const ipc::PeerOptions&) {
             return std::make_unique<DoorbellReader>(ring, std::chrono::nanoseconds(0));
         }},
        {"doorbell", "doorbell as readers get it (futex sleeps at most every 100 us)",
         [] { return std::vector<int>{}; }, [](const ipc::PeerOptions&) { return std::make_unique<NoWake>(); },
         [](const MappedRing& ring, const ipc::PeerOptions&) {
             return std::make_unique<DoorbellReader>(ring, std::chrono::nanoseconds(-1));
         }},
        {"pipe", "a pipe the writer writes one byte to after each commit", make_pipe,
         [](const ipc::PeerOptions& o) { return std::make_unique<FdWriter>(fd_option(o, "fd1"), false); },
         [](const MappedRing&, const ipc::PeerOptions& o) { return std::make_unique<FdReader>(fd_option(o, "fd0")); }},
        {"eventfd", "an eventfd the writer adds 1 to after each commit", make_eventfd,
         [](const ipc::PeerOptions& o) { return std::make_unique<FdWriter>(fd_option(o, "fd0"), true); },
         [](const MappedRing&, const ipc::PeerOptions& o) { return std::make_unique<FdReader>(fd_option(o, "fd0")); }},
    };
    return variants;
}

const WakeVariant& wake_variant(const std::string& name) {
    for (const WakeVariant& v : wake_variants())
        if (v.name == name) return v;
    bench::die("evring-wakeup: no variant '" + name + "'");
}

}  // namespace evring::wakeup
