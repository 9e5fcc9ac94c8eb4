// RingSetView: a live ring set's members as ring views, kept in step with
// its manifest.
#include "ops/ring_set_view.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "set/ring_set_manifest.hpp"
#include "evring/source/source_open.hpp"

namespace evring::cli {

Result<std::unique_ptr<RingSetView>> RingSetView::open_if_set(const std::string& location) {
    auto path = resolve_location(location, {});
    if (!path) return std::move(path).error();
    if (!is_ring_set_directory(*path)) return std::unique_ptr<RingSetView>();
    std::unique_ptr<RingSetView> view(new RingSetView());
    view->location_ = location;
    view->directory_ = *path;
    if (auto s = view->follow_manifest(); !s) return std::move(s).error();
    return view;
}

Status RingSetView::follow_manifest() {
    auto path = resolve_location(location_, {});
    if (!path) return std::move(path).error();
    directory_ = *path;
    auto manifest = read_set_manifest(directory_);
    if (!manifest) return std::move(manifest).context(fmt::format("ring set '{}'", location_)).error();
    max_members_ = manifest->max_members;
    std::vector<Member> next;
    for (const RingSetMemberInfo& info : manifest->members) {
        auto was = std::find_if(members_.begin(), members_.end(), [&](const Member& m) { return m.index == info.index; });
        Member m;
        if (was != members_.end()) m = std::move(*was);
        m.index = info.index;
        m.moved = false;
        if (m.view) {
            // The member's file (or the whole set) was re-created: the new one.
            auto moved = m.view->reopen_if_renamed();
            if (!moved) {
                m.view.reset();
                m.error = moved.error().message();
            } else if (*moved) {
                m.view = std::move(*moved);
                m.moved = true;
            }
        }
        if (!m.view) {
            auto opened = RingView::open(info.path);
            if (opened) {
                m.view = std::move(*opened);
                m.error.clear();
                m.moved = true;
            } else {
                m.error = opened.error().message();
            }
        }
        next.push_back(std::move(m));
    }
    members_ = std::move(next);
    return {};
}

Status RingSetView::refresh() {
    if (auto s = follow_manifest(); !s) return s;
    for (Member& m : members_) {
        m.latest.reset();
        if (!m.view) continue;
        auto r = m.view->refresh();
        if (!r) {
            m.error = r.error().message();
            m.view.reset();  // reopened at the next refresh
            continue;
        }
        m.latest = std::move(*r);
    }
    return {};
}

}  // namespace evring::cli
