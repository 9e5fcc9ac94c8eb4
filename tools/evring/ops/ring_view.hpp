// tools/evring/ops/ring_view.hpp — one live ring as `top` and `metrics` see it:
// the ring, its traffic sampler (ring_sample.hpp), its event type names (from
// the schema resolve_schema finds, else numbers) and, each refresh, its
// writers and its reader registry (reader_listing.hpp, without reclaiming:
// these commands only look).
//
// A view keeps the ring instance it opened; reopen_if_renamed moves to the
// one now at the name.
//
// Only live rings: a snapshot or recording is refused with a message saying
// so (nothing moves in them; `evring info` describes them).
//
// Thread safety: one thread.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "source/event_predicate.hpp"
#include "evring/source/event_source.hpp"
#include "registry/reader_listing.hpp"
#include "evring/schema/schema.hpp"
#include "ops/ring_sample.hpp"

namespace evring {
class RingReader;
}

namespace evring::cli {

struct RingRefresh {
    RingSample sample;
    bool writer_alive = false;
    std::size_t writer_pids = 0;
    std::optional<ReaderListing> readers;  // absent: listing failed (registry_problem says why)
    std::string registry_problem;          // also set when the registry is damaged, another ring's, ...
};

class RingView {
public:
    // `where`: count only the events this filter expression keeps
    // (where.hpp), compiled against the ring's schema, its span labels looked
    // up in this ring (again in a ring found at the name later).
    static Result<std::unique_ptr<RingView>> open(const std::string& location,
                                                  const std::optional<std::string>& where = std::nullopt);

    // Following the name (like `watch --follow-name`; source_renamed.hpp):
    // a view of the ring now at location() when that is another ring file
    // than ours (its writer restarted); null while the name still leads to
    // ours or to nothing; an error when what is there is not a live ring.
    Result<std::unique_ptr<RingView>> reopen_if_renamed() const;
    // True when the name leads to nothing any more: the ring was removed
    // (its writer closed without keeping it, or `evring rm`) and no new one
    // was made. The view still reads the removed ring; metrics then say the
    // ring is down rather than show a ring nobody can open.
    bool removed() const;

    Result<RingRefresh> refresh();

    const std::string& location() const noexcept { return location_; }
    const std::string& path() const noexcept;
    // The ring's path and instance as a source has them: what a named reader's position is of.
    const SourceIdentity& identity() const noexcept { return source_->identity(); }
    const MappedRing& ring() const noexcept;
    const RingReader& reader() const noexcept { return *reader_; }
    const RingSampler& sampler() const noexcept { return *sampler_; }
    // The schema's name for `type`, or its number.
    std::string type_name(std::uint16_t type) const;
    const std::string& schema_from() const noexcept { return schema_from_; }
    // The filter expression counted by (null: none).
    const std::string* where() const noexcept { return where_text_ ? &*where_text_ : nullptr; }

private:
    RingView() = default;
    static Result<std::unique_ptr<RingView>> adopt(const std::string& location, std::unique_ptr<EventSource> source,
                                                   const std::optional<std::string>& where);

    std::string location_;
    std::unique_ptr<EventSource> source_;
    const RingReader* reader_ = nullptr;
    std::unique_ptr<RingSampler> sampler_;
    std::optional<Schema> schema_;
    std::string schema_from_;
    std::optional<std::string> where_text_;
    std::unique_ptr<EventPredicate> where_;
    // Each listed reader's LOST at the previous refresh, by (slot,
    // generation): a lapped reader's loss is counted from its last published
    // position and may come out a little lower once it publishes again
    // (reader_listing.hpp); refresh() never shows it lower than before, so
    // evring_reader_lost_events_total stays a counter.
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint64_t> lost_shown_;
};

}  // namespace evring::cli
