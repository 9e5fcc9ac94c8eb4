// Decoding and validating NATS messages. See nats_encoding.hpp: every value
// is checked before use, and nothing is allocated from a claimed size (the
// one allocation, an announcement's ring name, is bounded by the body).
#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "nats/nats_encoding.hpp"
#include "wire_text.hpp"

namespace evring::nats {
namespace {

Error refused(std::string_view what) { return Error(EBADMSG, std::string(what)); }

template <class T>
T load(std::span<const std::byte> bytes) {
    T value;
    std::memcpy(&value, bytes.data(), sizeof value);
    return value;
}

// "INDEX COUNT" into out.chunk / out.chunk_count; absent means one chunk.
Status parse_chunk(std::string_view text, DecodedMessage& out) {
    out.chunk = 0;
    out.chunk_count = 1;
    if (text.empty()) return {};
    detail::Fields fields(text);
    std::uint64_t index = 0, count = 0;
    if (!fields.next_number(index) || !fields.next_number(count, kMaxChunks) || !fields.at_end() || count < 2 ||
        index >= count)
        return refused(fmt::format("bad {} header '{}'", kChunkHeader, text));
    out.chunk = static_cast<std::uint32_t>(index);
    out.chunk_count = static_cast<std::uint32_t>(count);
    return {};
}

// Chunk 0 of `total` bytes must say how many chunks of its own size make them.
Status check_first_chunk(const DecodedMessage& out, std::uint64_t total, std::size_t body_size) {
    if (body_size == 0 || body_size >= total)
        return refused(fmt::format("chunk 0 of {} holds {} of {} bytes", out.chunk_count, body_size, total));
    if ((total + body_size - 1) / body_size != out.chunk_count)
        return refused(fmt::format("{} bytes in chunks of {} make {} chunks, not {}", total, body_size,
                                   (total + body_size - 1) / body_size, out.chunk_count));
    return {};
}

Status decode_ring(std::string_view text, DecodedMessage& out) {
    detail::Fields fields(text);
    std::uint64_t version = 0, content_type = 0;
    if (!fields.next_number(version))
        return refused(fmt::format("bad {} header '{}'", kRingHeader, text));
    if (version != kEncodingVersion)
        return refused(fmt::format("encoding version {}; this evring reads version {}", version, kEncodingVersion));
    std::string_view instance;
    if (!fields.next_field(instance) || !validate_instance_id(instance) || !fields.next_number(content_type, 0xffff) ||
        !fields.next_hash(out.schema_hash) || !fields.at_end())
        return refused(fmt::format("bad {} header '{}'", kRingHeader, text));
    out.instance = instance;
    out.content_type = static_cast<std::uint16_t>(content_type);
    return {};
}

Status decode_event(const WireMessage& in, DecodedMessage& out) {
    detail::Fields fields(in.event);
    std::uint64_t seqno = 0, type = 0;
    std::array<std::uint64_t, 4> ext{};
    bool ok = fields.next_number(seqno, kMaxSeqno) && seqno > 0 && fields.next_number(type, 0xffff);
    for (std::uint64_t& e : ext) ok = ok && fields.next_number(e);
    if (!ok || !fields.at_end()) return refused(fmt::format("bad {} header '{}'", kEventHeader, in.event));
    if (auto s = parse_chunk(in.chunk, out); !s) return s;
    out.event = EventDescriptor{};
    if (out.chunk > 0) {
        // A continuation: the descriptor came with chunk 0.
        if (in.body.empty()) return refused("an empty event chunk");
        out.event.seqno = seqno;
        out.event.event_type = static_cast<std::uint16_t>(type);
        out.event.content_ext = ext;
        out.part = in.body;
        return {};
    }
    if (in.body.size() < sizeof(EventDescriptor))
        return refused(fmt::format("event body of {} bytes is shorter than a descriptor", in.body.size()));
    out.event = load<EventDescriptor>(in.body);
    if (out.event.seqno != seqno || out.event.event_type != type || out.event.content_ext != ext)
        return refused(fmt::format("the descriptor (seqno {}, type {}) disagrees with the {} header '{}'",
                                   out.event.seqno, out.event.event_type, kEventHeader, in.event));
    const std::uint64_t total = sizeof(EventDescriptor) + std::uint64_t{out.event.payload_size};
    out.part = in.body.subspan(sizeof(EventDescriptor));
    if (out.chunk_count == 1) {
        if (total != in.body.size())
            return refused(fmt::format("event {} claims a {}-byte payload but carries {} bytes", seqno,
                                       out.event.payload_size, out.part.size()));
        return {};
    }
    return check_first_chunk(out, total, in.body.size());
}

Status decode_gap(const WireMessage& in, DecodedMessage& out) {
    detail::Fields fields(in.gap);
    std::uint64_t first = 0, count = 0, reason = 0;
    if (!fields.next_number(first, kMaxSeqno) || first == 0 || !fields.next_number(count, kMaxSeqno) || count == 0 ||
        !fields.next_number(reason, kMaxGapReason) || !fields.at_end() || first - 1 + count > kMaxSeqno)
        return refused(fmt::format("bad {} header '{}'", kGapHeader, in.gap));
    if (!in.chunk.empty()) return refused("a gap message cannot be chunked");
    if (in.body.size() != sizeof(GapRecord))
        return refused(fmt::format("gap body of {} bytes, expected {}", in.body.size(), sizeof(GapRecord)));
    out.gap = load<GapRecord>(in.body);
    if (out.gap.first_lost_seqno != first || out.gap.lost_count != count ||
        static_cast<std::uint32_t>(out.gap.reason) != reason || out.gap.reserved != 0)
        return refused(fmt::format("the gap record disagrees with the {} header '{}'", kGapHeader, in.gap));
    return {};
}

Status decode_announcement(const WireMessage& in, DecodedMessage& out) {
    detail::Fields fields(in.announce);
    std::uint64_t first = 0;
    if (!fields.next_number(first, kMaxSeqno) || first == 0 || !fields.at_end())
        return refused(fmt::format("bad {} header '{}'", kAnnounceHeader, in.announce));
    if (!in.chunk.empty()) return refused("an announcement cannot be chunked");
    if (in.body.size() < sizeof(AnnouncementBody))
        return refused(fmt::format("announcement body of {} bytes is shorter than {}", in.body.size(),
                                   sizeof(AnnouncementBody)));
    const auto body = load<AnnouncementBody>(in.body);
    if (body.magic != kAnnouncementMagic) return refused("announcement body without its magic");
    if (body.name_size == 0 || body.name_size > kMaxRingNameSize ||
        in.body.size() != sizeof(AnnouncementBody) + body.name_size)
        return refused(fmt::format("announcement of {} bytes with a ring name of {} bytes", in.body.size(),
                                   body.name_size));
    if ((body.flags & ~kAnnounceKnownFlags) != 0 || body.reserved != 0 ||
        (body.flow_token > 3 && body.flow_token != kNoFlowToken))
        return refused("announcement with unknown flags or flow token");
    if (body.first_seqno != first || body.content_type != out.content_type || body.schema_hash != out.schema_hash)
        return refused("the announcement body disagrees with its headers");
    Announcement& a = out.announcement;
    const auto* name = reinterpret_cast<const char*>(in.body.data() + sizeof(AnnouncementBody));
    a.ring.name.assign(name, body.name_size);
    a.ring.instance.assign(out.instance);
    a.ring.content_type = body.content_type;
    a.ring.schema_hash = body.schema_hash;
    a.ring.size = body.ring_size;
    a.first_seqno = body.first_seqno;
    a.announced_epoch_nanos = body.announced_epoch_nanos;
    a.flow_token = body.flow_token == kNoFlowToken ? -1 : body.flow_token;
    a.flags = body.flags;
    return {};
}

Status decode_schema(const WireMessage& in, DecodedMessage& out) {
    detail::Fields fields(in.schema);
    std::uint64_t total = 0;
    if (!fields.next_number(total, kMaxSchemaSize) || total == 0 || !fields.at_end())
        return refused(fmt::format("bad {} header '{}'", kSchemaHeader, in.schema));
    if (auto s = parse_chunk(in.chunk, out); !s) return s;
    out.schema_size = total;
    out.part = in.body;
    if (out.chunk_count == 1) {
        if (in.body.size() != total)
            return refused(fmt::format("schema of {} bytes carries {} bytes", total, in.body.size()));
        return {};
    }
    if (in.body.empty() || in.body.size() > total) return refused("a schema chunk of impossible size");
    return out.chunk == 0 ? check_first_chunk(out, total, in.body.size()) : Status{};
}

Status decode_batch(const WireMessage& in, DecodedMessage& out) {
    detail::Fields fields(in.batch);
    std::uint64_t first = 0, last = 0, count = 0;
    if (!fields.next_number(first, kMaxSeqno) || first == 0 || !fields.next_number(last, kMaxSeqno) || last < first ||
        !fields.next_number(count, kMaxBatchCount) || count == 0 || count - 1 > last - first || !fields.at_end())
        return refused(fmt::format("bad {} header '{}'", kBatchHeader, in.batch));
    if (!in.chunk.empty()) return refused("a batch cannot be chunked");
    std::span<const std::byte> rest = in.body;
    std::uint64_t previous = 0;
    for (std::uint64_t i = 0; i < count; ++i) {
        if (rest.size() < sizeof(EventDescriptor))
            return refused(fmt::format("batch ends inside descriptor {} of {}", i + 1, count));
        const auto event = load<EventDescriptor>(rest);
        rest = rest.subspan(sizeof event);
        if (event.payload_size > rest.size())
            return refused(fmt::format("batch event {} claims a {}-byte payload, {} bytes remain", event.seqno,
                                       event.payload_size, rest.size()));
        rest = rest.subspan(event.payload_size);
        bool in_order = i == 0 ? event.seqno == first : event.seqno > previous;
        if (!in_order || event.seqno > last || (i + 1 == count && event.seqno != last))
            return refused(fmt::format("batch {}..{} holds event {} out of order", first, last, event.seqno));
        previous = event.seqno;
    }
    if (!rest.empty()) return refused(fmt::format("{} bytes after the last event of a batch", rest.size()));
    out.batch_first = first;
    out.batch_last = last;
    out.batch_count = static_cast<std::uint32_t>(count);
    out.batch_records = in.body;
    return {};
}

}  // namespace

Status validate_instance_id(std::string_view instance) {
    if (instance.empty() || instance.size() > kMaxInstanceIdSize)
        return Error(EINVAL, fmt::format("ring instance id '{}' must be 1 to {} characters", instance,
                                         kMaxInstanceIdSize));
    for (char c : instance)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return Error(EINVAL, fmt::format("ring instance id '{}' holds '{}' (letters, digits, '_' and '-' only)",
                                             instance, c));
    return {};
}

Status validate_ring_identity(const RingIdentity& ring) {
    if (ring.name.empty() || ring.name.size() > kMaxRingNameSize)
        return Error(EINVAL, fmt::format("ring name of {} bytes: expected 1 to {}", ring.name.size(),
                                         kMaxRingNameSize));
    return validate_instance_id(ring.instance);
}

bool is_evring_message(const WireMessage& message) noexcept { return !message.ring.empty(); }

// Evring-Member: a decimal 0..kMaxMember, on events and gaps only.
Status decode_member(const WireMessage& in, DecodedMessage& out) {
    out.member.reset();
    if (in.member.empty()) return {};
    detail::Fields fields(in.member);
    std::uint64_t member = 0;
    if (!fields.next_number(member, kMaxMember) || !fields.at_end())
        return refused(fmt::format("bad {} header '{}'", kMemberHeader, in.member));
    if (in.event.empty() && in.gap.empty())
        return refused(fmt::format("a {} header on a message that is neither an event nor a gap", kMemberHeader));
    out.member = static_cast<std::uint32_t>(member);
    return {};
}

Status decode_message(const WireMessage& in, DecodedMessage& out) {
    if (in.ring.empty()) return refused(fmt::format("not an evring message (no {} header)", kRingHeader));
    if (auto s = decode_ring(in.ring, out); !s) return s;
    if (auto s = decode_member(in, out); !s) return s;
    const int kinds = !in.event.empty() + !in.gap.empty() + !in.announce.empty() + !in.schema.empty() +
                      !in.batch.empty();
    if (kinds != 1)
        return refused(kinds == 0 ? "an evring message without a kind header"
                                  : "an evring message with more than one kind header");
    if (!in.event.empty()) {
        out.kind = MessageKind::Event;
        return decode_event(in, out);
    }
    if (!in.gap.empty()) {
        out.kind = MessageKind::Gap;
        return decode_gap(in, out);
    }
    if (!in.announce.empty()) {
        out.kind = MessageKind::Announcement;
        return decode_announcement(in, out);
    }
    if (!in.schema.empty()) {
        out.kind = MessageKind::Schema;
        return decode_schema(in, out);
    }
    out.kind = MessageKind::Batch;
    return decode_batch(in, out);
}

std::uint64_t DecodedMessage::first_seqno() const {
    switch (kind) {
    case MessageKind::Event: return event.seqno;
    case MessageKind::Gap: return gap.first_lost_seqno;
    case MessageKind::Batch: return batch_first;
    default: return 0;
    }
}

std::uint64_t DecodedMessage::last_seqno() const {
    switch (kind) {
    case MessageKind::Event: return event.seqno;
    case MessageKind::Gap: return gap.first_lost_seqno + gap.lost_count - 1;
    case MessageKind::Batch: return batch_last;
    default: return 0;
    }
}

bool BatchCursor::next(EventDescriptor& event, std::span<const std::byte>& payload) {
    if (rest_.size() < sizeof(EventDescriptor)) return false;
    event = load<EventDescriptor>(rest_);
    rest_ = rest_.subspan(sizeof event);
    payload = rest_.subspan(0, event.payload_size);
    rest_ = rest_.subspan(event.payload_size);
    return true;
}

}  // namespace evring::nats
