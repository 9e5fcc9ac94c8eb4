// Private to the ring set source: one member as the merge sees it.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "evring/ring/doorbell.hpp"
#include "source/ring_set_source.hpp"
#include "source/ring_source.hpp"

namespace evring {

struct RingSetSource::Member {
    // Descriptors read ahead per member (RingSource::read_run): one SIGBUS
    // guard and one call into the member's source per run instead of per
    // event. 32 × 64 B per member: memory stays O(members).
    static constexpr std::size_t kRun = 32;

    std::uint32_t index = 0;
    // run[at..end) (below): beside `index`, so that handing out an event
    // touches one line of the member besides the run's.
    std::uint32_t at = 0;
    std::uint32_t end = 0;
    std::string name;
    std::string path;
    std::unique_ptr<RingSource> source;
    std::optional<Doorbell> bell;
    // The member's next events, run[at..end) in sequence order; run[at] is
    // the head the merge compares. Counted by the member's source as handed
    // out already (member_counters subtracts what is still held).
    std::array<EventDescriptor, kRun> run{};
    // A Gap or Notice the run stopped at, handed out once the run is (Event:
    // none). Its text (gap detail, notice) lives in the member's source,
    // which is not called again before it is handed out.
    SourceStep after = SourceStep::Event;
    SourceItem after_item;
    bool idle = false;       // its last read found nothing: read again only when it has something
    bool pending = false;    // probe_pending: its writer reserved what its source has not read
    std::uint64_t probed = ~std::uint64_t{0};  // the merge's run count when `pending` was last probed
    bool ended = false;      // read to its end (writer gone) or failed
    bool reopen = false;     // a new ring is at its name: read it once this one ends
    std::uint64_t serial = 0;       // member_version() when it was opened: tells a re-created member apart
    std::uint64_t stuck_since = 0;  // monotonic ns when the merge first waited on its reservation; 0: not waiting
    dev_t device = 0;
    ino_t inode = 0;

    bool has_head() const noexcept { return at < end; }
    const EventDescriptor& head() const noexcept { return run[at]; }
    std::uint32_t held() const noexcept { return end - at; }
    // Forgets the run and what is known of the member's ring (after a seek).
    void drop_run() noexcept {
        at = end = 0;
        after = SourceStep::Event;
        idle = false;
        probed = ~std::uint64_t{0};
    }
};

// Sets `pending` of every member that holds no event and has not ended:
// true when its writer has reserved a sequence number its source has not
// read yet (a reservation between reserve and commit, or committed events
// not read). One SIGBUS guard for all of them (a truncated file: all true,
// so that their sources, which read under their own guards, report it).
//
// `runs` counts the runs the merge has read so far. A member found not
// pending at run count `runs` is not probed again until it changes: every
// event held then was read before that probe, and the member's next
// reservation is stamped after it (reserve() takes the timestamp; up to the
// instant between a writer's clock read and its reservation, the contract's
// late case, as for a fresh probe), so the answer stays true for every held
// event until another run is read. This keeps an idle member from costing a
// probe (a SIGBUS guard and a shared load) per merged event.
void probe_pending(std::vector<std::unique_ptr<RingSetSource::Member>>& members, std::uint64_t runs);

}  // namespace evring
