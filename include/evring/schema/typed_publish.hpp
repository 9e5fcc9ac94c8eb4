// evring/schema/typed_publish.hpp — publishing a payload struct plus trailing arrays.
//
// How to publish a typed event:
//
//     struct Trade { std::uint64_t price; std::uint32_t qty; std::uint32_t name_len; };
//     // one call: the struct, then the name bytes right after it
//     evring::publish(publisher, kTradeType, {block, txn + 1, 0, 0}, trade, evring::as_bytes(name));
//
//     // or fill in place through a handle that commits when it goes out of scope
//     {
//         auto event = evring::reserve_typed<Trade>(publisher, kTradeType);
//         event->price = 100;
//         event.flow(1) = txn + 1;
//     }
//
//     // or many at once: batches of up to 64 events, one timestamp per batch
//     evring::publish_many(publisher, kTradeType, std::span<const Trade>(trades));
//
// Contract:
// - The payload is sizeof(T) bytes of T followed by each trailing byte array
//   in order, copied at reservation. T must be trivially copyable.
// - A payload larger than the ring allows (or than the 32-bit size field) is
//   not recorded; a RECORD_ERROR event (type 1) describing it is committed
//   instead and the call returns 0 / the handle is empty.
// - Unchecked, as Publisher's raw path: `event_type` and the bytes are not
//   compared with any schema, and interest is not consulted. A generated
//   header's publish_<event> helpers are the checked way (they call this).
// - publish_many publishes any number of events through
//   Publisher::publish_batch, in as few batches as its limits allow (at most
//   Publisher::kMaxBatchEvents events and max_batch_payload() bytes each);
//   the events of one batch share one timestamp and consecutive seqnos, in
//   the order given. An event larger than the ring allows is recorded as a
//   RECORD_ERROR in its place, between two batches. `seqnos`, when given
//   (one entry per event), receives each event's seqno, 0 for one recorded
//   as a RECORD_ERROR. Returns how many events were published; a `seqnos`
//   shorter than the events (or typed flow tags neither 0, 1 nor one per
//   event) publishes nothing and returns 0.
// - Allocation-free; thread-safe like Publisher.
#pragma once

#include <algorithm>
#include <array>
#include <cstring>
#include <initializer_list>
#include <span>
#include <string_view>
#include <type_traits>

#include "evring/ring/publisher.hpp"

namespace evring {

using FlowTags = std::array<std::uint64_t, 4>;

inline std::span<const std::byte> as_bytes(std::string_view text) noexcept {
    return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

template <class T>
class TypedEvent {
public:
    TypedEvent() = default;
    TypedEvent(Publisher* publisher, Reservation reservation) noexcept
        : publisher_(publisher), reservation_(reservation) {}
    TypedEvent(TypedEvent&& other) noexcept
        : publisher_(std::exchange(other.publisher_, nullptr)), reservation_(other.reservation_) {}
    TypedEvent& operator=(TypedEvent&&) = delete;
    TypedEvent(const TypedEvent&) = delete;
    ~TypedEvent() { commit(); }

    // False when the payload did not fit (a RECORD_ERROR was recorded instead).
    explicit operator bool() const noexcept { return publisher_ != nullptr; }

    T* operator->() noexcept { return reinterpret_cast<T*>(reservation_.payload()); }
    T& operator*() noexcept { return *operator->(); }
    // The bytes after the T: the trailing arrays.
    std::byte* trailing() noexcept { return reservation_.payload() + sizeof(T); }
    std::uint64_t& flow(std::size_t index) noexcept {
        return reservation_.descriptor().content_ext[index];
    }
    std::uint64_t seqno() const noexcept { return reservation_.seqno(); }

    // Publishes the event now; the destructor does nothing afterwards.
    void commit() noexcept {
        if (publisher_ != nullptr) publisher_->commit(reservation_);
        publisher_ = nullptr;
    }
    // Gives the event up: publishes a RECORD_ERROR in its place at once
    // (Publisher::abort); the destructor does nothing afterwards.
    void abort() noexcept {
        if (publisher_ != nullptr) publisher_->abort(reservation_);
        publisher_ = nullptr;
    }

private:
    Publisher* publisher_ = nullptr;
    Reservation reservation_;
};

namespace detail {
// Publishes the RECORD_ERROR event for a payload that could not be reserved.
inline void publish_oversized(Publisher& publisher, std::uint16_t event_type, std::uint64_t size,
                              const void* start, std::uint64_t start_bytes,
                              const FlowTags& flow) noexcept {
    const auto kind = size > UINT32_MAX ? RecordErrorKind::PayloadOver4GiB
                                        : RecordErrorKind::PayloadLargerThanRing;
    publisher.publish_record_error(kind, event_type, size, start, start_bytes, flow);
}
}  // namespace detail

// Reserves a T plus `extra_bytes` of trailing space, zeroed T. The handle
// commits on destruction.
template <class T>
[[nodiscard]] TypedEvent<T> reserve_typed(Publisher& publisher, std::uint16_t event_type,
                                          std::uint64_t extra_bytes = 0,
                                          const FlowTags& flow = {}) noexcept {
    static_assert(std::is_trivially_copyable_v<T>, "payload types must be trivially copyable");
    static_assert(alignof(T) <= kPayloadAlignment, "payloads are only 16-byte aligned");
    const std::uint64_t size = sizeof(T) + extra_bytes;
    Reservation r = publisher.reserve(size);
    if (!r) {
        detail::publish_oversized(publisher, event_type, size, nullptr, 0, flow);
        return {};
    }
    r.descriptor().event_type = event_type;
    r.descriptor().content_ext = flow;
    new (r.payload()) T{};
    return TypedEvent<T>(&publisher, r);
}

// Publishes `value` followed by each trailing array in one call. Returns the
// event's seqno, or 0 when it did not fit and a RECORD_ERROR was recorded.
template <class T, class... Trailing>
std::uint64_t publish(Publisher& publisher, std::uint16_t event_type, const FlowTags& flow,
                      const T& value, const Trailing&... trailing) noexcept {
    static_assert(std::is_trivially_copyable_v<T>, "payload types must be trivially copyable");
    const std::span<const std::byte> parts[] = {std::as_bytes(std::span(trailing))..., {}};
    std::uint64_t size = sizeof(T);
    for (const auto& part : parts) size += part.size();
    Reservation r = publisher.reserve(size);
    if (!r) {
        detail::publish_oversized(publisher, event_type, size, &value, sizeof(T), flow);
        return 0;
    }
    r.descriptor().event_type = event_type;
    r.descriptor().content_ext = flow;
    std::byte* out = r.payload();
    std::memcpy(out, &value, sizeof(T));
    out += sizeof(T);
    for (const auto& part : parts) {
        if (!part.empty()) std::memcpy(out, part.data(), part.size());
        out += part.size();
    }
    publisher.commit(r);
    return r.seqno();
}

// Publishes `events` in order (see the contract).
inline std::size_t publish_many(Publisher& publisher, std::span<const BatchEvent> events,
                                std::span<std::uint64_t> seqnos = {}) noexcept {
    if (!seqnos.empty() && seqnos.size() < events.size()) return 0;  // a caller's mistake: nothing published
    const std::uint64_t most_bytes = publisher.max_batch_payload();
    std::size_t done = 0, published = 0;
    while (done < events.size()) {
        // The longest run from `done` that one batch takes.
        std::size_t n = 0;
        std::uint64_t bytes = 0;
        while (done + n < events.size() && n < Publisher::kMaxBatchEvents) {
            const BatchEvent& e = events[done + n];
            const std::uint64_t more = RingLayout::align_up(e.payload_size, kPayloadAlignment);
            if (e.payload_size > publisher.max_payload_size() || bytes + more > most_bytes) break;
            bytes += more;
            ++n;
        }
        if (n == 0) {  // events[done] alone is larger than the ring allows
            const BatchEvent& e = events[done];
            detail::publish_oversized(publisher, e.event_type, e.payload_size, e.payload, e.payload_size,
                                      e.content_ext);
            if (!seqnos.empty()) seqnos[done] = 0;
            ++done;
            continue;
        }
        const std::uint64_t first = publisher.publish_batch(events.subspan(done, n));
        for (std::size_t i = 0; i < n && !seqnos.empty(); ++i) seqnos[done + i] = first + i;
        done += n;
        published += n;
    }
    return published;
}

// Publishes each of `values` as one event of `event_type` (see the
// contract). `flows`: each event's flow tags (values.size() entries), or one
// set for every event, or none (all zero).
template <class T>
std::size_t publish_many(Publisher& publisher, std::uint16_t event_type, std::span<const T> values,
                         std::span<const FlowTags> flows = {}, std::span<std::uint64_t> seqnos = {}) noexcept {
    static_assert(std::is_trivially_copyable_v<T>, "payload types must be trivially copyable");
    const bool per_event = flows.size() > 1;
    if ((per_event && flows.size() != values.size()) || (!seqnos.empty() && seqnos.size() < values.size()))
        return 0;  // a caller's mistake: nothing published
    if (sizeof(T) > publisher.max_payload_size()) {
        for (std::size_t i = 0; i < values.size(); ++i) {
            detail::publish_oversized(publisher, event_type, sizeof(T), &values[i], sizeof(T),
                                      flows.empty() ? FlowTags{} : flows[per_event ? i : 0]);
            if (!seqnos.empty()) seqnos[i] = 0;
        }
        return 0;
    }
    const std::uint64_t stride = RingLayout::align_up(sizeof(T), kPayloadAlignment);
    const std::size_t per_batch = std::min<std::uint64_t>(Publisher::kMaxBatchEvents,
                                                          stride == 0 ? Publisher::kMaxBatchEvents
                                                                      : publisher.max_batch_payload() / stride);
    for (std::size_t done = 0; done < values.size();) {
        const std::size_t n = std::min(per_batch, values.size() - done);
        const std::uint64_t first = publisher.publish_batch(event_type, values.data() + done,
                                                            static_cast<std::uint32_t>(sizeof(T)), n,
                                                            per_event ? flows.subspan(done, n) : flows);
        for (std::size_t i = 0; i < n && !seqnos.empty(); ++i) seqnos[done + i] = first + i;
        done += n;
    }
    return values.size();
}

}  // namespace evring
