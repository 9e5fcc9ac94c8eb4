// The publisher's rare paths: advancing the window, abort, RECORD_ERROR.
#include "evring/ring/publisher.hpp"

#include <algorithm>
#include <utility>

#include "evring/ring/ring_extension.hpp"
#include "evring/ring/shared_word.hpp"

namespace evring {

namespace {
// The word of rings whose writers do not honour interest: never written.
std::uint64_t never_narrows = kInterestEverything;
}  // namespace

const std::uint64_t* interest_word_of(const MappedRing& ring) noexcept {
    const RingExtension* extension = extension_in(&ring.header());
    if ((ring_features(*extension) & kRingFeatureDoorbell) == 0) return &never_narrows;
    return &extension->interest;
}

Publisher::Publisher(Publisher&& other) noexcept
    : ring_(other.ring_),
      interest_(other.interest_),
      control_(other.control_),
      descriptors_(other.descriptors_),
      payload_(other.payload_),
      descriptor_mask_(other.descriptor_mask_),
      payload_buf_size_(other.payload_buf_size_),
      payload_mask_(other.payload_mask_),
      window_increment_(other.window_increment_),
      max_payload_size_(other.max_payload_size_),
      unchecked_end_(other.unchecked_end_),
      exclusive_(other.exclusive_),
      claim_(std::exchange(other.claim_, nullptr)),  // the claim moves: `other` gives nothing back
      claim_owner_(std::exchange(other.claim_owner_, kNoOwner)),
      pair_rmw_(other.pair_rmw_),
      doorbell_(other.doorbell_),
      doorbell_light_(other.doorbell_light_),
      doorbell_watch_(other.doorbell_watch_) {}

namespace {
// Never written: loaded by commit (W10) instead of a doorbell word.
const std::uint32_t kNoDoorbell = 0;       // a ring without a doorbell: nobody to wake
const std::uint32_t kFenceFirst = 1;       // not registered: always to ring_doorbell_slow
}  // namespace

const std::uint32_t* Publisher::doorbell_watch_for(std::uint32_t* doorbell, bool light) noexcept {
    if (doorbell == nullptr) return &kNoDoorbell;
    return light ? doorbell : &kFenceFirst;
}

void Publisher::ring_doorbell_slow(std::uint32_t seen) noexcept {
    if (doorbell_watch_ == doorbell_)
        wake_sleepers(doorbell_, seen);  // light: `seen` is the doorbell's
    else
        ring_doorbell(doorbell_, false);  // W9 as a full fence, then W10 and the wake
}

Publisher::~Publisher() {
    if (claim_ != nullptr) release_writer_claim(*ring_);
}

bool Publisher::holds_claim() const noexcept {
    return claim_ != nullptr && shared::load_relaxed(claim_->revoked) == 0;
}

// The first reserve through a claiming publisher makes its thread the owner
// of the plain path; any other thread revokes the claim (writer_claim.hpp).
bool Publisher::adopt_or_revoke() noexcept {
    const std::uint64_t me = writer_thread_token();  // assigned here on a thread's first reserve
    std::uint64_t owner = kNoOwner;
    if (shared::compare_exchange_strong_relaxed(claim_owner_, owner, me)) return true;  // H
    if (owner == me) return true;
    revoke_writer_claim(*ring_);
    return false;
}

// W3 (publisher_inline.hpp): makes the window cover every virtual byte below
// end - payload_buf_size_, then W3': remembers the window it saw or raised.
// Out of line: runs roughly once per window increment of payload bytes.
void Publisher::cover_window(std::uint64_t end) noexcept {
    const std::uint64_t needed = end - payload_buf_size_;
    // W3; relaxed: the caller's W4 orders it (or the raise) before its payload stores.
    std::uint64_t window = shared::load_relaxed(control_->buffer_window_start);
    if (window < needed) window = advance_window(needed);
    // W3', release: pairs with reserve()'s acquire load on another thread.
    shared::store_release(unchecked_end_, window + payload_buf_size_);
}

// W3: raises the window to at least `needed`, rounded up to the window
// increment; returns the window it leaves (another writer may have raised
// it further).
std::uint64_t Publisher::advance_window(std::uint64_t needed) noexcept {
    const std::uint64_t target = RingLayout::align_up(needed, window_increment_);
    std::uint64_t& window = control_->buffer_window_start;
    std::uint64_t current = shared::load_relaxed(window);  // W3
    // W3: raise to at least `target`; another writer may have raised it
    // further. Relaxed: the caller's W4 orders this before its payload stores.
    while (current < target) {
        if (shared::compare_exchange_weak_relaxed(window, current, target)) return target;
    }
    return current;
}

void Publisher::abort(Reservation& r) noexcept {
    if (!r) return;
    EventDescriptor& d = r.staged_;
    // The reserved space is payload_size rounded up to 16 bytes: room for
    // the whole description, or (an empty reservation) for none of it.
    const std::uint64_t reserved = RingLayout::align_up(d.payload_size, kPayloadAlignment);
    const RecordErrorPayload error{static_cast<std::uint16_t>(RecordErrorKind::MissingEvent),
                                   d.event_type, 0, d.payload_size};
    const bool fits = reserved >= sizeof error;
    if (fits) std::memcpy(r.payload(), &error, sizeof error);
    d.event_type = kRecordErrorEventType;
    d.payload_size = fits ? static_cast<std::uint32_t>(sizeof error) : 0;
    commit(r);
    r = Reservation();
}

std::uint64_t Publisher::publish_record_error(RecordErrorKind kind,
                                              std::uint16_t dropped_event_type,
                                              std::uint64_t requested_payload_size,
                                              const void* payload_start,
                                              std::uint64_t available_bytes,
                                              const std::array<std::uint64_t, 4>& content_ext) noexcept {
    // Keep the truncated prefix small: the event reports a failure, it is not
    // a way to smuggle most of an oversized payload through.
    constexpr std::uint64_t kMaxPrefix = 256;
    std::uint64_t prefix = std::min({available_bytes, requested_payload_size, kMaxPrefix,
                                     max_payload_size_ - sizeof(RecordErrorPayload)});
    if (payload_start == nullptr) prefix = 0;
    Reservation r = reserve(sizeof(RecordErrorPayload) + prefix);
    RecordErrorPayload error{static_cast<std::uint16_t>(kind), dropped_event_type,
                             static_cast<std::uint32_t>(prefix), requested_payload_size};
    r.descriptor().event_type = kRecordErrorEventType;
    r.descriptor().content_ext = content_ext;
    std::memcpy(r.payload(), &error, sizeof error);
    if (prefix > 0) std::memcpy(r.payload() + sizeof error, payload_start, prefix);
    commit(r);
    return r.seqno();
}

}  // namespace evring
