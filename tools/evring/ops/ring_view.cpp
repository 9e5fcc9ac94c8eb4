// RingView: open a live ring once, then refresh its numbers.
#include "ops/ring_view.hpp"

#include <sys/stat.h>

#include <cerrno>

#include <fmt/format.h>

#include <algorithm>

#include "evring/ring/ring_reader.hpp"
#include "source/ring_source.hpp"
#include "evring/schema/schema_resolve.hpp"
#include "evring/source/source_open.hpp"
#include "source/source_renamed.hpp"
#include "open.hpp"
#include "output/values.hpp"

namespace evring::cli {

Result<std::unique_ptr<RingView>> RingView::open(const std::string& location, const std::optional<std::string>& where) {
    auto source = open_for_command(location, {});
    if (!source) return std::move(source).error();
    return adopt(location, std::move(*source), where);
}

Result<std::unique_ptr<RingView>> RingView::reopen_if_renamed() const {
    auto fresh = evring::reopen_if_renamed(source_->identity(), {});
    if (!fresh) return std::move(fresh).error();
    if (!*fresh) return std::unique_ptr<RingView>();
    return adopt(location_, std::move(*fresh), where_text_);
}

bool RingView::removed() const {
    auto path = resolve_location(location_, {});
    if (!path) return path.error().errno_value() == ENOENT;  // a name that leads nowhere
    struct stat st {};
    return ::stat(path->c_str(), &st) != 0 && errno == ENOENT;
}

Result<std::unique_ptr<RingView>> RingView::adopt(const std::string& location, std::unique_ptr<EventSource> opened,
                                                  const std::optional<std::string>& where) {
    auto* ring_source = dynamic_cast<RingSource*>(opened.get());
    if (ring_source == nullptr || ring_source->reader() == nullptr)
        return Error(EINVAL, fmt::format("'{}' is a {}, not a live ring: nothing moves in it (evring info describes "
                                         "it)", location, describe(opened->kind())));
    std::unique_ptr<RingView> view(new RingView());
    view->location_ = location;
    view->reader_ = ring_source->reader();
    view->sampler_ = std::make_unique<RingSampler>(*ring_source->ring());
    // Names are a convenience: without a usable schema, types show as numbers.
    if (auto found = resolve_schema(*opened)) {
        view->schema_ = std::move(found->schema);
        view->schema_from_ = found->from;
    }
    if (where) {
        FollowOptions unused;
        view->where_text_ = where;
        if (auto s = compile_where_option(unused, where, view->schema_ ? &*view->schema_ : nullptr, view->where_,
                                          opened.get());
            !s)
            return std::move(s).error();
        view->sampler_->set_where(view->where_.get());
    }
    view->source_ = std::move(opened);
    return view;
}

const std::string& RingView::path() const noexcept { return reader_->path(); }

const MappedRing& RingView::ring() const noexcept { return *source_->ring(); }

std::string RingView::type_name(std::uint16_t type) const {
    if (type == kRecordErrorEventType) return "RECORD_ERROR";
    if (schema_)
        if (const SchemaEvent* event = schema_->event(type)) return event->name;
    return std::to_string(type);
}

Result<RingRefresh> RingView::refresh() {
    RingRefresh r;
    auto sample = sampler_->sample();
    if (!sample) return std::move(sample).error();
    r.sample = std::move(*sample);
    r.writer_alive = reader_->writer_alive();
    r.writer_pids = reader_->writer_pids().size();
    ListingOptions look;
    look.reclaim_dead = false;  // top and metrics only look; `evring readers` reclaims
    auto listing = list_readers(*reader_, look);
    if (!listing) {
        r.registry_problem = listing.error().message();
    } else {
        if (listing->state != RegistryState::Valid && listing->state != RegistryState::Missing)
            r.registry_problem = fmt::format("registry '{}' is {}: {}", listing->registry_path,
                                             to_string(listing->state), listing->problem);
        std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint64_t> shown;
        for (ReaderEntry& reader : listing->readers) {
            const auto key = std::make_pair(reader.slot, reader.generation);
            if (auto before = lost_shown_.find(key); before != lost_shown_.end())
                reader.lost = std::max(reader.lost, before->second);
            shown[key] = reader.lost;
        }
        lost_shown_ = std::move(shown);
        r.readers = std::move(*listing);
    }
    return r;
}

}  // namespace evring::cli
