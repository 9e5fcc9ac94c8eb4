// Building NATS messages from ring events. See nats_encoding.hpp.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "nats/nats_encoding.hpp"
#include "wire_text.hpp"

namespace evring::nats {
namespace {

// Copies bytes [offset, offset + size) of the concatenation `first` `second`.
void append_slice(std::vector<std::byte>& out, std::span<const std::byte> first, std::span<const std::byte> second,
                  std::size_t offset, std::size_t size) {
    if (offset < first.size()) {
        std::size_t n = std::min(size, first.size() - offset);
        out.insert(out.end(), first.begin() + static_cast<std::ptrdiff_t>(offset),
                   first.begin() + static_cast<std::ptrdiff_t>(offset + n));
        offset += n;
        size -= n;
    }
    if (size == 0) return;
    offset -= first.size();
    out.insert(out.end(), second.begin() + static_cast<std::ptrdiff_t>(offset),
               second.begin() + static_cast<std::ptrdiff_t>(offset + size));
}

template <class T>
void append_bytes(std::vector<std::byte>& out, const T& value) {
    const auto* bytes = reinterpret_cast<const std::byte*>(&value);
    out.insert(out.end(), bytes, bytes + sizeof value);
}

std::uint32_t chunks_for(std::size_t total, std::size_t max_body) {
    if (total <= max_body) return 1;
    return static_cast<std::uint32_t>((total + max_body - 1) / max_body);
}

void set_chunk_header(OutgoingMessage& out, std::uint32_t chunk, std::uint32_t count) {
    if (count <= 1) return;
    std::string value;
    detail::append_decimal(value, chunk);
    value += ' ';
    detail::append_decimal(value, count);
    out.headers.push_back({kChunkHeader, std::move(value)});
}

// A ring set member: the header, and "mMEMBER:" in the message id before
// the sequence number (members count their own sequence numbers, and ids
// must differ for the stream's duplicate detection).
void add_member(OutgoingMessage& out, std::optional<std::uint32_t> member) {
    if (!member) return;
    std::string value;
    detail::append_decimal(value, *member);
    out.msg_id += 'm';
    out.msg_id += value;
    out.msg_id += ':';
    out.headers.push_back({kMemberHeader, std::move(value)});
}

}  // namespace

void OutgoingMessage::clear() {
    first_seqno = last_seqno = 0;
    batch_count = 0;
    subject.clear();
    msg_id.clear();
    headers.clear();
    body.clear();
}

std::size_t OutgoingMessage::wire_size() const {
    // NATS/1.0\r\n, "Name: value\r\n" per header, the final \r\n.
    std::size_t size = subject.size() + body.size() + 12 + msg_id.size() + sizeof kMsgIdHeader + 4;
    for (const Header& h : headers) size += std::strlen(h.name) + 4 + h.value.size();
    return size;
}

Encoder::Encoder(RingIdentity ring, SubjectLayout layout, std::size_t max_body)
    : layout_(std::move(layout)), max_body_(std::max<std::size_t>(max_body, sizeof(EventDescriptor))) {
    set_ring(std::move(ring));
}

void Encoder::set_ring(RingIdentity ring) {
    ring_ = std::move(ring);
    ring_header_ = fmt::format("{} {} ", kEncodingVersion, ring_.instance);
    detail::append_decimal(ring_header_, ring_.content_type);
    ring_header_ += ' ';
    detail::append_hex(ring_header_, ring_.schema_hash);
}

void Encoder::add_common(OutgoingMessage& out, MessageKind kind) const {
    out.clear();
    out.kind = kind;
    out.msg_id = ring_.instance;
    out.msg_id += ':';
    out.headers.push_back({kRingHeader, ring_header_});
}

std::uint32_t Encoder::event_chunks(std::size_t payload_size) const {
    return chunks_for(sizeof(EventDescriptor) + payload_size, max_body_);
}

void Encoder::encode_event(const EventDescriptor& event, std::span<const std::byte> payload, std::uint32_t chunk,
                           OutgoingMessage& out, std::optional<std::uint32_t> member) const {
    add_common(out, MessageKind::Event);
    out.first_seqno = out.last_seqno = event.seqno;
    append_event_subject(out.subject, layout_, event);
    add_member(out, member);
    detail::append_decimal(out.msg_id, event.seqno);
    if (chunk > 0) {
        out.msg_id += ':';
        detail::append_decimal(out.msg_id, chunk);
    }
    std::string value;
    detail::append_decimal(value, event.seqno);
    value += ' ';
    detail::append_decimal(value, event.event_type);
    for (std::uint64_t ext : event.content_ext) {
        value += ' ';
        detail::append_decimal(value, ext);
    }
    out.headers.push_back({kEventHeader, std::move(value)});
    const std::size_t total = sizeof(EventDescriptor) + payload.size();
    const std::uint32_t count = chunks_for(total, max_body_);
    set_chunk_header(out, chunk, count);
    const std::size_t offset = std::size_t{chunk} * max_body_;
    const std::size_t size = std::min(max_body_, total - std::min(total, offset));
    const auto* descriptor = reinterpret_cast<const std::byte*>(&event);
    append_slice(out.body, {descriptor, sizeof event}, payload, offset, size);
}

void Encoder::encode_gap(std::uint64_t first, std::uint64_t count, GapReason reason, std::uint64_t now_nanos,
                         OutgoingMessage& out, std::optional<std::uint32_t> member) const {
    add_common(out, MessageKind::Gap);
    out.first_seqno = first;
    out.last_seqno = first + count - 1;
    out.subject = control_subject(layout_.prefix, MessageKind::Gap);
    out.msg_id += "gap:";
    add_member(out, member);
    detail::append_decimal(out.msg_id, first);
    out.headers.push_back(
        {kGapHeader, fmt::format("{} {} {}", first, count, static_cast<std::uint32_t>(reason))});
    GapRecord record{};
    record.first_lost_seqno = first;
    record.lost_count = count;
    record.detected_epoch_nanos = now_nanos;
    record.reason = reason;
    append_bytes(out.body, record);
}

void Encoder::encode_announcement(std::uint64_t first_seqno, std::uint32_t flags, std::uint64_t now_nanos,
                                  OutgoingMessage& out) const {
    add_common(out, MessageKind::Announcement);
    out.subject = control_subject(layout_.prefix, MessageKind::Announcement);
    out.msg_id += "ring:";
    detail::append_decimal(out.msg_id, first_seqno);
    out.headers.push_back({kAnnounceHeader, fmt::format("{}", first_seqno)});
    AnnouncementBody body{};
    body.magic = kAnnouncementMagic;
    body.content_type = ring_.content_type;
    body.flow_token = layout_.flow_tag < 0 ? kNoFlowToken : static_cast<std::uint16_t>(layout_.flow_tag);
    body.flags = flags & ~kAnnounceTypeNames;
    for (const std::string& name : layout_.type_names)
        if (!name.empty()) body.flags |= kAnnounceTypeNames;
    body.schema_hash = ring_.schema_hash;
    body.ring_size = ring_.size;
    body.first_seqno = first_seqno;
    body.announced_epoch_nanos = now_nanos;
    body.name_size = static_cast<std::uint32_t>(ring_.name.size());
    append_bytes(out.body, body);
    const auto* name = reinterpret_cast<const std::byte*>(ring_.name.data());
    out.body.insert(out.body.end(), name, name + ring_.name.size());
}

std::uint32_t Encoder::schema_chunks(std::size_t blob_size) const { return chunks_for(blob_size, max_body_); }

void Encoder::encode_schema(std::span<const std::byte> blob, std::uint32_t chunk, OutgoingMessage& out) const {
    add_common(out, MessageKind::Schema);
    out.subject = control_subject(layout_.prefix, MessageKind::Schema);
    out.msg_id += "schema";
    const std::uint32_t count = chunks_for(blob.size(), max_body_);
    if (count > 1) {
        out.msg_id += ':';
        detail::append_decimal(out.msg_id, chunk);
    }
    out.headers.push_back({kSchemaHeader, fmt::format("{}", blob.size())});
    set_chunk_header(out, chunk, count);
    const std::size_t offset = std::size_t{chunk} * max_body_;
    const std::size_t size = std::min(max_body_, blob.size() - std::min(blob.size(), offset));
    auto part = blob.subspan(std::min(blob.size(), offset), size);
    out.body.insert(out.body.end(), part.begin(), part.end());
}

void Encoder::begin_batch(OutgoingMessage& out) const {
    add_common(out, MessageKind::Batch);
    out.subject = control_subject(layout_.prefix, MessageKind::Batch);
}

bool Encoder::add_to_batch(const EventDescriptor& event, std::span<const std::byte> payload,
                           OutgoingMessage& out) const {
    if (out.body.size() + sizeof event + payload.size() > max_body_) return false;
    if (out.batch_count == kMaxBatchCount) return false;
    if (out.batch_count == 0) out.first_seqno = event.seqno;
    out.last_seqno = event.seqno;
    ++out.batch_count;
    append_bytes(out.body, event);
    out.body.insert(out.body.end(), payload.begin(), payload.end());
    return true;
}

void Encoder::finish_batch(OutgoingMessage& out) const {
    out.msg_id += fmt::format("batch:{}:{}", out.first_seqno, out.last_seqno);
    out.headers.push_back(
        {kBatchHeader, fmt::format("{} {} {}", out.first_seqno, out.last_seqno, out.batch_count)});
}

}  // namespace evring::nats
