// evring/ring/payload.hpp — reading event payloads, zero-copy or copied.
//
// How to read a payload:
//
//     // zero-copy: look at the bytes in place, then confirm they were intact
//     const std::byte* p = evring::peek_payload(ring, event);
//     use(p, event.payload_size);
//     if (!evring::payload_valid(ring, event)) discard_what_you_did();
//
//     // copied: the copy is only reported Ok if it was not overwritten meanwhile
//     if (evring::copy_payload(ring, event, buf, sizeof buf) == evring::PayloadResult::Ok) ...
//
// Contract:
// - A payload at virtual offset o is intact while o >= buffer_window_start
//   (docs/format.md, "The protocol": steps P1..P3 against the writer's W3,
//   W4, for why the check after reading is sufficient).
// - A descriptor whose size cannot fit in the payload buffer is never
//   dereferenced (peek returns nullptr, copy returns Invalid), so a corrupt or
//   hostile descriptor cannot make a reader touch memory outside its mapping.
// - No system call, allocation or blocking.
//
// Memory model note: payload bytes are read with plain loads while a lapping
// writer may be rewriting them. That is the one deliberate race in evring, as
// in every seqlock over bulk data: the bytes are only trusted after the
// acquire fence and window check say no writer touched them. The copy routine
// is therefore excluded from ThreadSanitizer instrumentation.
//
// Thread safety: free functions over an immutable MappedRing; safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "evring/format.hpp"
#include "evring/ring/ring.hpp"
#include "evring/ring/shared_word.hpp"

#if defined(__SANITIZE_THREAD__)
#define EVRING_NO_SANITIZE_THREAD __attribute__((no_sanitize("thread")))
#else
#define EVRING_NO_SANITIZE_THREAD
#endif

namespace evring {

enum class PayloadResult {
    Ok,       // the bytes were copied intact
    Expired,  // the writer overwrote (part of) the payload before or while it was read
    Invalid,  // the descriptor's size does not fit the buffer, or the destination is too small
};

// True when the descriptor's payload lies within the ring's payload buffer.
inline bool payload_in_bounds(const MappedRing& ring, const EventDescriptor& event) noexcept {
    return event.payload_size <= ring.layout().size.payload_buf_size;
}

// The payload bytes in place, or nullptr when the descriptor is out of bounds.
inline const std::byte* peek_payload(const MappedRing& ring, const EventDescriptor& event) noexcept {
    if (!payload_in_bounds(ring, event)) return nullptr;
    return ring.payload_buffer() + (event.payload_buf_offset & ring.payload_mask());
}

// True while the payload has not been overwritten. Call after reading the bytes.
inline bool payload_valid(const MappedRing& ring, const EventDescriptor& event) noexcept {
    // P2, pairs with W4: if the bytes we read (P1) were rewritten, the window
    // load below sees the window raised past them.
    shared::fence_acquire();
    return event.payload_buf_offset >= shared::load_relaxed(ring.header().control.buffer_window_start);  // P3
}

namespace detail {
// Deliberately racy (see the note at the top); validated by the caller.
// Payloads of 16..64 bytes are copied as two fixed-size pieces that overlap
// in the middle (each inlined as vector moves), within [src, src + n) and
// [dst, dst + n) like the call to memcpy they replace: the call, and the
// registers it made the reader's loop save and reload around it, were 17 of
// the 64 instructions of a 64 B try_next + copy_payload (docs/performance.md,
// "Deterministic counts").
// g++ -O3 cannot always tell that a branch is unreachable for a small
// destination (copy_payload has checked n <= its size) and warns that the
// 32-byte piece would overrun it (-Warray-bounds, -Wstringop-overflow): an
// error under -Werror in every program that copies into a buffer of fewer
// than 64 bytes. The pieces stay within [dst, dst + n); the warnings are off
// for these lines only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
EVRING_NO_SANITIZE_THREAD inline void racy_copy(void* dst, const std::byte* src,
                                                std::size_t n) noexcept {
    auto* to = static_cast<std::byte*>(dst);
    if (n > 64 || n < 16) {  // one test on the way to memcpy
        if (n != 0) std::memcpy(to, src, n);  // an empty payload may come with no buffer at all
    } else if (n > 32) {
        std::memcpy(to, src, 32);
        std::memcpy(to + n - 32, src + n - 32, 32);
    } else {
        std::memcpy(to, src, 16);
        std::memcpy(to + n - 16, src + n - 16, 16);
    }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
}  // namespace detail

inline PayloadResult copy_payload(const MappedRing& ring, const EventDescriptor& event, void* dst,
                                  std::size_t dst_size) noexcept {
    // The bounds test of peek_payload, without its null result to test again.
    if (!payload_in_bounds(ring, event) || event.payload_size > dst_size) return PayloadResult::Invalid;
    // Copy first, check once after (P1..P3), as RING01's reference reader
    // does: the check after the copy is what makes Ok true (docs/format.md),
    // and a check before it only spared a reader that was already lapped one
    // copy of bytes it then discards, for 4 of the 57 instructions every event
    // paid (docs/performance.md, "Issue 25, third pass"). On Expired, `dst`
    // may hold any bytes of the range, as it always could.
    const std::byte* src = ring.payload_buffer() + (event.payload_buf_offset & ring.payload_mask());
    detail::racy_copy(dst, src, event.payload_size);  // P1
    return payload_valid(ring, event) ? PayloadResult::Ok : PayloadResult::Expired;  // P2, P3
}

}  // namespace evring
