// evring/source/wait_set.hpp — one wait over many event sources, and a file
// descriptor for event loops (epoll, poll, select, asyncio, libuv, tokio).
//
// How to follow several sources in one thread:
//
//     evring::WaitSet set;
//     set.add(*ring_a);                       // any EventSource: a ring, a ring
//     set.add(*ring_set_b);                   // set, a stream, a recording
//     for (;;) {
//         for (evring::EventSource* ready : set.wait(1s))
//             drain(*ready);                  // next() until NotReady (or End)
//     }
//
// and inside an application's own loop:
//
//     int fd = set.fd().value();              // register it for reading
//     ... epoll_wait / poll / select / loop.add_reader(fd, ...) says fd is readable:
//     for (evring::EventSource* ready : set.ready()) drain(*ready);
//
// Contract:
// - A member is ready when its next() has something other than NotReady to
//   give: an event, a gap, a notice, End or Failed. ready() looks at every
//   member, in the calling thread, and returns the ready ones in the order
//   they were added (valid until the next call on the set). wait(timeout)
//   does the same, sleeping up to `timeout` until one is ready; empty when
//   none became ready in time. A member stays ready until it is read to
//   NotReady; a member that ended (End, Failed) is always ready: remove it.
//   A member's answer may be early by one look (a ring set's merge holding
//   an event back, a writer seen leaving by the set before its source saw
//   it): its next() then says NotReady, and the next ready() looks again.
// - fd() is readable from the moment a commit on a watched ring, a writer
//   leaving, or a source's own signal may have made a member ready, until a
//   ready() or wait() call finds none ready; ready() leaves it readable when
//   it returns members. Read nothing from it and write nothing to it: use it
//   only to be woken. It stays the same descriptor for the set's life and is
//   closed with the set (which removes it from any epoll set it is in; a
//   duplicate, if anyone holds one, is made readable once first, so a loop
//   waiting on a duplicate wakes and finds the set gone). notify() makes it
//   readable now (a wake-up for the loop's own reasons).
// - How it sleeps (docs/event-loops.md): once ready() found nothing, a
//   thread of the set (started by the first fd() call; wait() without fd()
//   sleeps in the caller instead) announces itself on every watched ring's
//   doorbell and sleeps on all of them in one futex_waitv (doorbell.hpp's
//   protocol, steps D1-D5, once for the whole set), woken by the first
//   commit that follows; at most once per 100 us (the doorbell's bound on a
//   reader's wake rate). Writers pay nothing they did not pay for a sleeping
//   reader. While idle the thread looks every 100 ms at whether a watched
//   ring's writer is gone (the writer's pidfd, else its lock, as the follow
//   loop does), and at each source's own signals (a ring set's manifest, a
//   stream's received messages); it spends no other CPU. Rings whose
//   doorbell cannot be used (no write access, no evring extension, or a
//   kernel without futex_waitv, before Linux 5.16), or more than 127 rings
//   in one set, are looked at every millisecond instead.
// - Members are not owned. A member must outlive its membership: remove()
//   it before destroying it; remove() returns once the set's thread no
//   longer touches anything of it. add() refuses a source already in the set.
//
// WaitArm is what a source tells a set about itself: EventSource::arm_wait
// fills one (in the source's thread) and the set sleeps on it (in its own).
// Sources of this library fill it; an application's own EventSource may
// override EventSource::prepare_wait, whose default (a live source is looked
// at every 100 ms, any other is ready) is always correct.
//
// Thread safety: a WaitSet is used by one thread at a time, which is also
// the thread that reads its members (each source is used by one thread at a
// time: event_source.hpp); its descriptor may be polled from any thread.
// Sets are independent: a source may be in several.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "evring/error.hpp"

namespace evring {

class EventSource;
class RingReader;

class WaitArm {
public:
    // The source has something for next() now: no sleep.
    void set_ready() noexcept { ready_ = true; }
    // Sleep on `reader`'s doorbell until the event `next_seqno` is committed
    // (or overwritten), or anything is committed; and look every 100 ms at
    // whether its writer is gone. `reader` is shared so that the set may use
    // it until it looks again, whatever the source does meanwhile.
    void watch_ring(std::shared_ptr<const RingReader> reader, std::uint64_t next_seqno);
    // Wake after `delay` at most (a source without a wake-up of its own).
    void recheck_within(std::chrono::nanoseconds delay) noexcept;
    // Called by the set's thread every `period` while it sleeps: true when
    // the source may have something now. It runs while the source's own
    // thread uses the source, so it may only touch what is safe from another
    // thread and lives as long as the source is a member.
    void watch(std::chrono::nanoseconds period, std::function<bool()> changed);

    struct Ring {
        std::shared_ptr<const RingReader> reader;
        std::uint64_t next_seqno = 0;
    };
    struct Probe {
        std::chrono::nanoseconds period{};
        std::function<bool()> changed;
    };
    bool ready() const noexcept { return ready_; }
    const std::vector<Ring>& rings() const noexcept { return rings_; }
    const std::vector<Probe>& probes() const noexcept { return probes_; }
    // The shortest recheck_within asked for (max(): none).
    std::chrono::nanoseconds recheck() const noexcept { return recheck_; }

private:
    bool ready_ = false;
    std::vector<Ring> rings_;
    std::vector<Probe> probes_;
    std::chrono::nanoseconds recheck_ = std::chrono::nanoseconds::max();
};

class WaitSet {
public:
    WaitSet();
    ~WaitSet();
    WaitSet(const WaitSet&) = delete;
    WaitSet& operator=(const WaitSet&) = delete;

    // EEXIST when `source` is a member already.
    Status add(EventSource& source);
    // False when it was not a member.
    bool remove(EventSource& source);
    std::size_t size() const noexcept;

    // See the contract. The vector is the set's, valid until its next call.
    const std::vector<EventSource*>& ready();
    const std::vector<EventSource*>& wait(std::chrono::nanoseconds timeout);

    // The descriptor (see the contract); starts the set's thread the first
    // time. An error when the system refuses a thread or an eventfd.
    Result<int> fd();
    void notify();

    // What the set did, for tests and benchmarks: looks at the members
    // (ready/wait calls), sleeps (futex_waitv calls, polls), wakes that made
    // the descriptor readable.
    struct Stats {
        std::uint64_t looks = 0;
        std::uint64_t sleeps = 0;
        std::uint64_t fires = 0;
    };
    Stats stats() const;

    struct Impl;  // lib/source/wait_set.cpp

private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace evring
