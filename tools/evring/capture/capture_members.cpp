// Where each member of a capture's source stands (capture.hpp): a single
// ring is member 0; a ring set's members by their index.
#include "capture/capture.hpp"
#include "evring/ring/iterator.hpp"
#include "evring/ring/ring.hpp"
#include "source/ring_set_source.hpp"
#include "source/ring_source.hpp"

namespace evring::cli {
namespace {

// f(index, member source) for a ring set's members; false for any other source.
template <typename F>
bool each_member(const EventSource& source, F&& f) {
    const auto* set = dynamic_cast<const RingSetSource*>(&source);
    if (set == nullptr) return false;
    for (std::uint32_t index : set->members())
        if (const RingSource* member = set->member_source(index)) f(index, *member);
    return true;
}

void put(std::vector<std::uint64_t>& by_member, std::uint32_t index, std::uint64_t value) {
    if (by_member.size() <= index) by_member.resize(std::size_t{index} + 1, 0);
    by_member[index] = value;
}

std::uint64_t oldest_seqno(const EventSource& source) {
    const MappedRing* ring = source.ring();
    return ring == nullptr ? 0 : Iterator(*ring).oldest_seqno();
}

}  // namespace

std::vector<std::uint64_t> member_next_seqnos(const EventSource& source) {
    std::vector<std::uint64_t> next;
    if (!each_member(source, [&](std::uint32_t index, const RingSource& m) { put(next, index, m.next_seqno()); }))
        next.push_back(source.next_seqno());
    return next;
}

std::vector<std::uint64_t> member_oldest_seqnos(const EventSource& source) {
    std::vector<std::uint64_t> oldest;
    if (!each_member(source, [&](std::uint32_t index, const RingSource& m) { put(oldest, index, oldest_seqno(m)); }))
        oldest.push_back(oldest_seqno(source));
    return oldest;
}

}  // namespace evring::cli
