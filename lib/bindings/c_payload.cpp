// The C ABI's zero-copy payload access for ring and snapshot sources (evring.h).
#include <bit>
#include <cstring>

#include "evring/ring/payload.hpp"
#include "handles.hpp"

namespace {

// A private, properly aligned copy of the caller's descriptor.
evring::EventDescriptor descriptor_of(const evring_descriptor* event) noexcept {
    evring::EventDescriptor d;
    std::memcpy(&d, event, sizeof d);
    return d;
}

const evring::MappedRing* ring_of(const evring_source* source) noexcept {
    return source == nullptr ? nullptr : source->source->ring();
}

}  // namespace

extern "C" {

const void* evring_source_payload_peek(const evring_source* source, const evring_descriptor* event) {
    const evring::MappedRing* ring = ring_of(source);
    if (ring == nullptr || event == nullptr) return nullptr;
    return evring::peek_payload(*ring, descriptor_of(event));
}

int evring_source_payload_valid(const evring_source* source, const evring_descriptor* event) {
    const evring::MappedRing* ring = ring_of(source);
    if (ring == nullptr || event == nullptr) return 0;
    const evring::EventDescriptor d = descriptor_of(event);
    return evring::payload_in_bounds(*ring, d) && evring::payload_valid(*ring, d) ? 1 : 0;
}

int evring_source_payload_copy(const evring_source* source, const evring_descriptor* event, void* dst,
                               size_t dst_size) {
    if (source == nullptr || event == nullptr || (dst == nullptr && dst_size > 0)) return EVRING_E_INVALID;
    const evring::MappedRing* ring = ring_of(source);
    if (ring == nullptr) return EVRING_E_UNSUPPORTED;
    const evring::EventDescriptor d = descriptor_of(event);
    if (!evring::payload_in_bounds(*ring, d)) return EVRING_E_INVALID;
    if (d.payload_size > dst_size) return EVRING_E_TOO_SMALL;
    switch (evring::copy_payload(*ring, d, dst, dst_size)) {
    case evring::PayloadResult::Ok: return EVRING_OK;
    case evring::PayloadResult::Expired: return EVRING_E_EXPIRED;
    case evring::PayloadResult::Invalid: break;
    }
    return EVRING_E_INVALID;
}

}  // extern "C"
