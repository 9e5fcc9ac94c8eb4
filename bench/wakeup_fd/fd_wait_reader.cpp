// FdWaitReader (fd_wait_reader.hpp).
#include "wakeup_fd/fd_wait_reader.hpp"

#include <poll.h>

#include <cerrno>
#include <cstring>

#include "evring/ring/shared_word.hpp"
#include "evring/source/event_source.hpp"
#include "support/bench_ring.hpp"

namespace evring::wakeup {

// An event source that reads nothing: it only tells a wait set to watch its
// ring from the sequence number the harness's iterator expects.
class FdWaitReader::Watch final : public EventSource {
public:
    explicit Watch(std::shared_ptr<const RingReader> reader) : reader_(std::move(reader)) {}
    void track(std::uint64_t next_seqno) noexcept { next_ = next_seqno; }
    Result<std::string> seek(const Position&) override { return std::string(); }
    void wait(std::chrono::nanoseconds) override {}
    bool live() const override { return true; }
    Result<std::uint64_t> now_nanos() override { return std::uint64_t{0}; }
    std::uint64_t next_seqno() const override { return next_; }

protected:
    SourceStep read(SourceItem&, PayloadRead) override { return SourceStep::NotReady; }
    void prepare_wait(WaitArm& arm) override {
        const MappedRing& ring = reader_->ring();
        const std::uint64_t* slot = ring.descriptors()[(next_ - 1) & ring.descriptor_mask()].words;
        // Acquire, as the iterator's first load (R1): committed means readable.
        if (shared::load_acquire(slot[0]) >= next_) return arm.set_ready();
        arm.watch_ring(reader_, next_);
    }

private:
    std::shared_ptr<const RingReader> reader_;
    std::uint64_t next_ = 1;
};

FdWaitReader::FdWaitReader(const std::string& path) {
    auto reader = RingReader::open(path);
    if (!reader) bench::die(reader.error().message());
    watch_ = std::make_unique<Watch>(std::make_shared<const RingReader>(std::move(reader).value()));
    if (auto added = set_.add(*watch_); !added) bench::die(added.error().message());
    auto fd = set_.fd();
    if (!fd) bench::die(fd.error().message());
    fd_ = *fd;
}

FdWaitReader::~FdWaitReader() { set_.remove(*watch_); }

void FdWaitReader::sleep(const Iterator& it) {
    watch_->track(it.next_seqno());
    if (!set_.ready().empty()) return;  // arrived meanwhile
    ++sleeps_;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 1000) < 0 && errno != EINTR)
        bench::die(std::string("evring-wakeup-fd reader: poll: ") + std::strerror(errno));
}

}  // namespace evring::wakeup
