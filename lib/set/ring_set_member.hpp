// Private to the ring set source: one member as the merge sees it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "evring/ring/doorbell.hpp"
#include "evring/set/ring_set_source.hpp"
#include "evring/source/ring_source.hpp"

namespace evring {

struct RingSetSource::Member {
    std::uint32_t index = 0;
    std::string name;
    std::string path;
    std::unique_ptr<RingSource> source;
    std::optional<Doorbell> bell;
    SourceItem head;         // the member's next event, while has_head
    bool has_head = false;
    bool idle = false;
    bool pending = false;    // probe_pending: its writer reserved what its source has not read       // its last pull found nothing: pulled again only when it has something
    bool ended = false;      // read to its end (writer gone) or failed
    bool reopen = false;     // a new ring is at its name: read it once this one ends
    std::uint64_t stuck_since = 0;  // monotonic ns when the merge first waited on its reservation; 0: not waiting
    dev_t device = 0;
    ino_t inode = 0;
};

// Sets `pending` of every member that holds no event and has not ended:
// true when its writer has reserved a sequence number its source has not
// read yet (a reservation between reserve and commit, or committed events
// not read). One SIGBUS guard for all of them (a truncated file: all true,
// so that their sources, which read under their own guards, report it).
void probe_pending(std::vector<std::unique_ptr<RingSetSource::Member>>& members);

}  // namespace evring
