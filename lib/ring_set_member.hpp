// Private to the ring set source: one member as the merge sees it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "evring/doorbell.hpp"
#include "evring/ring_set_source.hpp"
#include "evring/ring_source.hpp"

namespace evring {

struct RingSetSource::Member {
    std::uint32_t index = 0;
    std::string name;
    std::string path;
    std::unique_ptr<RingSource> source;
    std::optional<Doorbell> bell;
    SourceItem head;         // the member's next event, while has_head
    bool has_head = false;
    bool idle = false;       // its last pull found nothing: pulled again only when it has something
    bool ended = false;      // read to its end (writer gone) or failed
    bool reopen = false;     // a new ring is at its name: read it once this one ends
    std::uint64_t stuck_since = 0;  // monotonic ns when the merge first waited on its reservation; 0: not waiting
    dev_t device = 0;
    ino_t inode = 0;
};

// True when the member's writer has reserved a sequence number the member's
// source has not read yet (a reservation between reserve and commit, or
// committed events not read). Guarded against a truncated file.
bool member_has_pending(const RingSetSource::Member& member);

}  // namespace evring
