// The typed reads of a generated header: unpack (bytes already copied), read
// (a copy out of a ring into the struct plus a caller's buffer) and view (in
// place, with a checked expiry). All three check the event type and the
// layout (check_layout) before they hand out a struct, so a consumer never
// calls copy_payload with a size by hand, and an event with trailing arrays
// cannot be mistaken for one without.
#include "codegen/schema_codegen_names.hpp"

namespace evring::detail {

namespace {

constexpr std::string_view kReads = R"(// Typed reads (docs/schema.md, "Reading with the generated header"). Each checks the event type
// and the payload's layout (check_layout) before it hands out the struct:
//   unpack<EventType::X>(type, bytes)          bytes already copied (a follow loop's SourceEvent)
//   read<EventType::X>(ring, event, buffer)    a copy: the struct, and the trailing arrays into
//                                               `buffer`; Expired when the writer overwrote it
//   view<EventType::X>(ring, event)            in place, no copy: use it, then check valid()
enum class ReadStatus : std::uint8_t {
    Ok,
    WrongType,   // the event is not of this type
    WrongSize,   // the payload breaks the type's layout (check_layout says how)
    TooSmall,    // read: the trailing arrays need `needed` bytes of buffer
    Expired,     // read/view: the writer overwrote the payload
    OutOfBounds, // read/view: a descriptor claiming more than the ring's payload buffer
};

template <EventType Type>
struct Unpacked {
    using Payload = typename EventInfo<Type>::Payload;
    static_assert(!std::is_void_v<Payload>, "an event with an empty payload has nothing to read");
    ReadStatus status = ReadStatus::Ok;
    Payload payload{};                     // the fixed part, copied
    std::span<const std::byte> trailing;   // the trailing arrays, in order (unpack: in the given bytes; read: in the buffer)
    PayloadCheck check;                    // WrongSize: what was wrong
    std::uint64_t needed = 0;              // TooSmall: the trailing bytes
    explicit operator bool() const noexcept { return status == ReadStatus::Ok; }
};

template <EventType Type>
Unpacked<Type> unpack(std::uint16_t event_type, std::span<const std::byte> payload) noexcept {
    Unpacked<Type> r;
    if (event_type != static_cast<std::uint16_t>(Type)) {
        r.status = ReadStatus::WrongType;
        return r;
    }
    r.check = check_layout(event_type, payload.data(), payload.size());
    if (!r.check) {
        r.status = ReadStatus::WrongSize;
        return r;
    }
    std::memcpy(&r.payload, payload.data(), sizeof r.payload);
    r.trailing = payload.subspan(EventInfo<Type>::kFixedSize);
    return r;
}

#if __has_include(<evring/ring/payload.hpp>)
template <EventType Type>
Unpacked<Type> read(const evring::MappedRing& ring, const evring::EventDescriptor& event,
                    std::span<std::byte> buffer = {}) noexcept {
    Unpacked<Type> r;
    constexpr std::uint32_t kFixed = EventInfo<Type>::kFixedSize;
    if (event.event_type != static_cast<std::uint16_t>(Type)) {
        r.status = ReadStatus::WrongType;
        return r;
    }
    const std::byte* src = evring::peek_payload(ring, event);
    if (src == nullptr) {
        r.status = ReadStatus::OutOfBounds;
        return r;
    }
    if (event.payload_size < kFixed) {
        r.check = check_layout(event.event_type, nullptr, event.payload_size);
        r.status = ReadStatus::WrongSize;
        return r;
    }
    const std::size_t extra = event.payload_size - kFixed;
    if (extra > buffer.size()) {
        r.status = ReadStatus::TooSmall;
        r.needed = extra;
        return r;
    }
    // The copy protocol of evring/ring/payload.hpp: window check, racy copy, window check.
    if (!evring::payload_valid(ring, event)) {
        r.status = ReadStatus::Expired;
        return r;
    }
    evring::detail::racy_copy(&r.payload, src, kFixed);
    if (extra > 0) evring::detail::racy_copy(buffer.data(), src + kFixed, extra);
    if (!evring::payload_valid(ring, event)) {
        r.status = ReadStatus::Expired;
        return r;
    }
    // Checked on the copy, which no writer can change any more.
    r.check = check_layout(event.event_type, reinterpret_cast<const std::byte*>(&r.payload), event.payload_size);
    if (!r.check) {
        r.status = ReadStatus::WrongSize;
        return r;
    }
    r.trailing = buffer.first(extra);
    return r;
}

// A payload in place. Its bytes may be overwritten while it is used: whatever is
// taken from fixed() or trailing() counts only if valid() is true afterwards.
template <EventType Type>
class PayloadView {
public:
    using Payload = typename EventInfo<Type>::Payload;
    ReadStatus status() const noexcept { return status_; }
    explicit operator bool() const noexcept { return status_ == ReadStatus::Ok; }
    // The fixed part in the ring (payloads are 16-byte aligned, so it is aligned for Payload).
    const Payload& fixed() const noexcept { return *reinterpret_cast<const Payload*>(bytes_); }
    std::span<const std::byte> trailing() const noexcept {
        return {bytes_ + EventInfo<Type>::kFixedSize, size_ - EventInfo<Type>::kFixedSize};
    }
    // True while the writer has not overwritten the payload: call after using it.
    bool valid() const noexcept { return ring_ != nullptr && evring::payload_valid(*ring_, event_); }

private:
    template <EventType T>
    friend PayloadView<T> view(const evring::MappedRing&, const evring::EventDescriptor&) noexcept;
    ReadStatus status_ = ReadStatus::Ok;
    const evring::MappedRing* ring_ = nullptr;
    evring::EventDescriptor event_{};
    const std::byte* bytes_ = nullptr;
    std::size_t size_ = 0;
};

template <EventType Type>
PayloadView<Type> view(const evring::MappedRing& ring, const evring::EventDescriptor& event) noexcept {
    PayloadView<Type> v;
    if (event.event_type != static_cast<std::uint16_t>(Type)) {
        v.status_ = ReadStatus::WrongType;
        return v;
    }
    v.bytes_ = evring::peek_payload(ring, event);
    if (v.bytes_ == nullptr) {
        v.status_ = ReadStatus::OutOfBounds;
        return v;
    }
    v.ring_ = &ring;
    v.event_ = event;
    v.size_ = event.payload_size;
    // The layout is checked on bytes a writer may be rewriting: a torn count can only
    // make the check fail, and then the expiry check below says why.
    const bool fits = v.size_ >= EventInfo<Type>::kFixedSize && check_layout(event.event_type, v.bytes_, v.size_);
    if (!v.valid()) v.status_ = ReadStatus::Expired;
    else if (!fits) v.status_ = ReadStatus::WrongSize;
    return v;
}
#endif

)";

}  // namespace

void append_typed_reads(std::string& out) { out += kReads; }

}  // namespace evring::detail
