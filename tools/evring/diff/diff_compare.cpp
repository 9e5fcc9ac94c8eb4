#include "diff/diff_compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace evring::cli {
namespace {

bool payload_read(PayloadState state) { return state == PayloadState::Ok; }

// The first offset where two payloads differ; the shorter one's size when
// one is a prefix of the other.
std::uint64_t first_differing_byte(const std::vector<std::byte>& a, const std::vector<std::byte>& b) {
    return static_cast<std::uint64_t>(std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first - a.begin());
}

// The field of `st` holding `offset`: the one with the greatest offset not
// past it; null when it lies in padding or past the fixed part.
const SchemaField* field_holding(const Schema& schema, const SchemaStruct& st, std::uint64_t offset) {
    const SchemaField* found = nullptr;
    for (const SchemaField& f : st.fields)
        if (f.offset <= offset) found = &f;
    if (found == nullptr || offset - found->offset >= schema.type(found->type).size) return nullptr;
    return found;
}

}  // namespace

std::optional<Difference> compare_events(const ComparedEvent& a, const ComparedEvent& b) {
    Difference d;
    d.member = a.member;
    d.key = a.key;
    d.a = a.descriptor;
    d.b = b.descriptor;
    d.state_a = a.payload_state;
    d.state_b = b.payload_state;
    const EventDescriptor& x = a.descriptor;
    const EventDescriptor& y = b.descriptor;
    if (x.event_type != y.event_type) d.aspects |= kType;
    if (payload_read(a.payload_state) != payload_read(b.payload_state)) {
        d.aspects |= kPayloadState;
        if (x.payload_size != y.payload_size) d.aspects |= kPayload;
    } else if (x.payload_size != y.payload_size || a.payload != b.payload) {
        d.aspects |= kPayload;
        d.first_byte = payload_read(a.payload_state) ? first_differing_byte(a.payload, b.payload)
                                                     : std::min(x.payload_size, y.payload_size);
    }
    for (unsigned i = 0; i < 4; ++i)
        if (x.content_ext[i] != y.content_ext[i]) d.flows |= 1u << i;
    if (d.flows != 0) d.aspects |= kFlow;
    if (x.record_epoch_nanos != y.record_epoch_nanos) d.aspects |= kTime;
    if (x.payload_buf_offset != y.payload_buf_offset) d.aspects |= kOffset;
    if (d.aspects == 0) return std::nullopt;
    return d;
}

const char* aspect_name(DiffAspect aspect) noexcept {
    switch (aspect) {
    case kOnlyInA: return "only_in_a";
    case kOnlyInB: return "only_in_b";
    case kType: return "type";
    case kPayload: return "payload";
    case kPayloadState: return "payload_state";
    case kFlow: return "flow";
    case kTime: return "time";
    case kOffset: return "offset";
    }
    return "unknown";
}

std::string field_at(const Schema& schema, std::uint16_t event_type, std::uint64_t offset) {
    const SchemaEvent* event = schema.event(event_type);
    const SchemaStruct* st = event ? schema.payload_of(*event) : nullptr;
    if (st == nullptr) return {};
    if (offset >= st->size) {
        // Past the fixed part: a trailing array; which one needs the counts
        // of the payload at hand, so only a lone one is named.
        return st->trailing.size() == 1 ? st->trailing[0].name : std::string();
    }
    std::string path;
    // Down through nested structs and fixed arrays; the depth is the
    // schema's, which resolve checked to be finite (no struct holds itself).
    while (st != nullptr) {
        const SchemaField* f = field_holding(schema, *st, offset);
        if (f == nullptr) break;
        path += (path.empty() ? "" : ".") + f->name;
        offset -= f->offset;
        const SchemaType* type = &schema.type(f->type);
        st = nullptr;
        if (type->kind == TypeKind::Array) {
            const SchemaType& element = schema.type(type->element);
            if (element.size == 0) break;
            path += fmt::format("[{}]", offset / element.size);
            offset %= element.size;
            type = &element;
        }
        if (type->kind == TypeKind::Struct) st = &schema.structs()[type->index];
    }
    return path;
}

bool DiffJoin::add(int side, ComparedEvent event) {
    const std::uint32_t member = event.member;
    Queues& q = queues_[member];
    if (ordinal_keys_) event.key = ++q.ordinal[side];
    ++events_[side];
    MemberCounts& counts = members_[member];
    (side == 0 ? counts.events_a : counts.events_b) += 1;
    MemberCounts& span = spans_[event.label];
    (side == 0 ? span.events_a : span.events_b) += 1;
    q.side[side].push_back(std::move(event));
    ++pending_count_[side];
    settle(member);
    if (ended_[1 - side]) flush(side, q);  // nothing more will match it
    return pending_count_[0] + pending_count_[1] <= max_pending_;
}

void DiffJoin::settle(std::uint32_t member) {
    Queues& q = queues_[member];
    auto& a = q.side[0];
    auto& b = q.side[1];
    while (!a.empty() && !b.empty()) {
        if (a.front().key == b.front().key) {
            if (auto d = compare_events(a.front(), b.front())) {
                d->label = a.front().label;
                found(*d);
            }
            a.pop_front();
            b.pop_front();
            --pending_count_[0];
            --pending_count_[1];
        } else {
            // The side with the smaller key holds an event the other passed.
            const int side = a.front().key < b.front().key ? 0 : 1;
            only_in(side, q.side[side].front());
            q.side[side].pop_front();
            --pending_count_[side];
        }
    }
}

void DiffJoin::end(int side) {
    if (ended_[side]) return;
    ended_[side] = true;
    // settle() left at most one side of each member with events; the other
    // side's are now unmatched for good, this side's may still meet theirs.
    for (auto& [member, q] : queues_) flush(1 - side, q);
}

void DiffJoin::flush(int side, Queues& q) {
    for (const ComparedEvent& e : q.side[side]) only_in(side, e);
    pending_count_[side] -= q.side[side].size();
    q.side[side].clear();
}

void DiffJoin::only_in(int side, const ComparedEvent& event) {
    Difference d;
    d.member = event.member;
    d.key = event.key;
    d.aspects = side == 0 ? kOnlyInA : kOnlyInB;
    (side == 0 ? d.a : d.b) = event.descriptor;
    (side == 0 ? d.state_a : d.state_b) = event.payload_state;
    d.label = event.label;
    found(d);
}

void DiffJoin::found(const Difference& d) {
    ++members_[d.member].differ;
    ++spans_[d.label].differ;
    sink_(d);
}

}  // namespace evring::cli
