// Reader sessions in event loops (wait_handle.hpp): a handle's descriptor
// and the wait sets handles are in.
#include "wait_handle.hpp"

#include <algorithm>

namespace evring::bindings {
namespace {

// Held notices come before anything the source has: readable while any is.
void signal_held(evring_source& handle) {
    if (!handle.held_notices.empty()) handle.wait_set->notify();
}

}  // namespace

Result<int> source_descriptor(evring_source& handle) {
    if (!handle.wait_set) {
        auto set = std::make_unique<WaitSet>();
        if (auto added = set->add(*handle.source); !added) return std::move(added).error();
        auto fd = set->fd();
        if (!fd) return std::move(fd).error();
        handle.wait_set = std::move(set);
        signal_held(handle);
    }
    return handle.wait_set->fd();
}

void rearm_descriptor(evring_source& handle) {
    if (!handle.wait_set) return;
    (void)handle.wait_set->ready();  // looks, and sleeps on what it found (wait_set.hpp)
    signal_held(handle);
}

Status waitset_add(evring_waitset& set, evring_source& handle) {
    if (auto added = set.set.add(*handle.source); !added) return added;
    set.members.push_back(&handle);
    handle.in_wait_sets.push_back(&set);
    return {};
}

bool waitset_remove(evring_waitset& set, evring_source& handle) {
    const auto it = std::find(set.members.begin(), set.members.end(), &handle);
    if (it == set.members.end()) return false;
    set.set.remove(*handle.source);  // returns once the set's thread is done with it
    set.members.erase(it);
    std::erase(handle.in_wait_sets, &set);
    std::erase(set.ready, &handle);
    return true;
}

const std::vector<evring_source*>& waitset_wait(evring_waitset& set, std::chrono::nanoseconds timeout) {
    set.ready.clear();
    for (EventSource* ready : set.set.wait(timeout))
        for (evring_source* handle : set.members)
            if (handle->source.get() == ready) set.ready.push_back(handle);
    // A handle holding notices is ready whatever its source says.
    for (evring_source* handle : set.members)
        if (!handle->held_notices.empty() && std::find(set.ready.begin(), set.ready.end(), handle) == set.ready.end())
            set.ready.push_back(handle);
    return set.ready;
}

void waitset_detach(evring_waitset& set) noexcept {
    for (evring_source* handle : set.members) std::erase(handle->in_wait_sets, &set);
    set.members.clear();
    set.ready.clear();
}

}  // namespace evring::bindings

// The handle leaves its wait sets before its source closes (wait_handle.hpp);
// its own set (the descriptor) then goes with its members, before `source`.
evring_source::~evring_source() {
    while (!in_wait_sets.empty()) (void)evring::bindings::waitset_remove(*in_wait_sets.back(), *this);
}
