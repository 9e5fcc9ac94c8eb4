// evring/set/ring_set.hpp — writing a ring set: one member ring per writer thread.
//
// How to write from many threads without sharing reservation words:
//
//     auto config = evring::parse_ring_config("feed:18:24").value();   // sizes are per member
//     auto set = evring::RingSetWriter::create({config, content, /*max_members=*/64});
//     if (!set) fail(set.error().message());
//     // in each writer thread:
//     auto publisher = set->publisher();          // this thread's member, taken on first use
//     if (!publisher) fail(publisher.error().message());   // e.g. all members taken
//     auto r = (*publisher)->reserve(size); ...; (*publisher)->commit(r);
//
// Contract:
// - A set NAME is the directory NAME/ in the ring directory (hugetlbfs when
//   mounted, else /dev/shm, as for rings: ring_directory.hpp) holding
//   `manifest` (ring_set_format.hpp) and member rings m0, m1, ... Each member
//   is a plain RING01 ring file with the set's content type, schema hash and
//   embedded schema, readable alone by any RING01 reader. docs/ring-sets.md.
// - Creation is atomic: the directory and its manifest are built under a
//   temporary name and renamed into place (RENAME_NOREPLACE), so a directory
//   at the name with a manifest always has a complete one. A second writer
//   (another process, or another RingSetWriter) joins an existing set when
//   its content type, schema hash, member sizes and max_members match
//   (EPROTO otherwise; a mismatching set nobody writes is replaced).
// - Members are taken with RingWriter::create in Exclusive mode, so each
//   member has the same liveness (flock + writer marker) and crash reclaim as
//   any ring: a member held by a live writer of any process is skipped, a
//   member whose writer died is reclaimed by the next writer that needs one.
//   When all max_members members are held, publisher() fails (ENOSPC).
// - publisher(): the calling thread's publisher, bound to a member of its
//   own on first use (later calls on that thread: a thread-local lookup, no
//   lock). The publisher is an Auto publisher on a ring this process holds
//   exclusively and only this thread uses, so it takes the claimed
//   plain-store path (writer_claim.hpp): no atomic read-modify-write per event.
// - Thread exit: the member is released for reuse by the next thread of this
//   process that asks, and its ring (with its events) is kept until the set
//   writer closes. Why: threads of pools come and go, and one member per
//   thread ever started would exhaust max_members; keeping the ring keeps its
//   events readable, and the next thread continues its sequence numbers. The
//   thread's Publisher is destroyed at its exit (giving the claim back), so
//   the next thread's publisher takes the claimed path again.
// - Closing (the destructor) removes this writer's members (unless
//   keep_on_close) and, when it is the set's last writer, the set directory.
//   Every thread must have stopped publishing before then.
//
// Thread safety: publisher() may be called from any thread; the publisher it
// returns belongs to the calling thread. Several processes may write into one
// set, each thread of each getting its own member.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "evring/config.hpp"
#include "evring/error.hpp"
#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_directory.hpp"

namespace evring {

struct RingSetSpec {
    RingSetSpec(RingConfig set_config, RingContent set_content, std::uint32_t members)
        : config(std::move(set_config)), content(std::move(set_content)), max_members(members) {}
    RingConfig config;  // the set's name or path, and each member's sizes
    RingContent content;
    std::uint32_t max_members = 16;
};

struct SetCreateOptions {
    bool keep_on_close = false;  // leave the set (and its members) in place on close
    DirectoryOptions directory;
};

namespace detail {
struct SetShared;
}

class RingSetWriter {
public:
    static Result<RingSetWriter> create(const RingSetSpec& spec, const SetCreateOptions& options = {});
    RingSetWriter(RingSetWriter&&) noexcept;
    RingSetWriter& operator=(RingSetWriter&&) noexcept;
    ~RingSetWriter();

    // This thread's publisher (see the contract). Valid until the thread
    // exits or the set writer closes.
    Result<Publisher*> publisher();

    // The set's directory.
    const std::string& path() const noexcept;
    // How many members this writer holds now (bound to a thread or free).
    std::uint32_t members_held() const;
    // True when this writer made the set rather than joining it.
    bool created() const noexcept;

private:
    RingSetWriter() = default;
    Result<Publisher*> bind_this_thread();

    std::shared_ptr<detail::SetShared> shared_;
};

}  // namespace evring
