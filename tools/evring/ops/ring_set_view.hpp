// tools/evring/ops/ring_set_view.hpp — a live ring set as `top`, `metrics` and
// `readers` see it: one RingView (ring_view.hpp) per member, each a plain
// ring, labelled with its member index (docs/ring-sets.md).
//
// Each refresh re-reads the manifest of the set now at the name (so a set
// re-created under it is followed, as `watch --follow-name` follows it):
// members new in the manifest are opened, a member whose ring file was
// re-created is moved to the new file (RingView::reopen_if_renamed, `moved`
// says so), and members no longer listed are dropped. A member that cannot be
// opened is kept with its error, tried again next refresh.
//
// A filter expression (`top SET --where EXPR`) is applied per member: each
// member's RingView compiles it against that member's schema, and a span
// label is looked up in that member (a member that holds no event with the
// label keeps that error as its own). An expression no member could compile
// (EINVAL: a name the schema lacks, a syntax error) fails open_if_set and
// refresh instead.
//
// Thread safety: one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "evring/error.hpp"
#include "ops/ring_view.hpp"

namespace evring::cli {

class RingSetView {
public:
    struct Member {
        std::uint32_t index = 0;
        std::unique_ptr<RingView> view;     // null: not open (error says why)
        std::string error;
        std::optional<RingRefresh> latest;  // the last refresh() of this member, when it succeeded
        bool moved = false;                 // the last refresh() moved it to a new ring file
    };

    // Null when `location` names no ring set (a ring, a snapshot, a set
    // snapshot, a recording: the caller handles those); an error when the
    // name resolves to nothing or the set's manifest cannot be read.
    static Result<std::unique_ptr<RingSetView>> open_if_set(const std::string& location,
                                                          const std::optional<std::string>& where = std::nullopt);

    // Follows the manifest (see above), then refreshes every open member.
    // Fails only when the name no longer leads to a readable set.
    Status refresh();

    const std::string& location() const noexcept { return location_; }
    const std::string& directory() const noexcept { return directory_; }
    std::uint32_t max_members() const noexcept { return max_members_; }
    std::vector<Member>& members() noexcept { return members_; }

private:
    RingSetView() = default;
    Status follow_manifest();

    std::string location_;
    std::optional<std::string> where_;  // applied per member (see above)
    std::string directory_;
    std::uint32_t max_members_ = 0;
    std::vector<Member> members_;  // ascending index
};

}  // namespace evring::cli
