// lib/nats/nats_encoding.hpp — how ring events travel as NATS JetStream messages.
//
// docs/distributed.md has the byte tables, the subject grammar and the
// reasons; this header is the same contract in code. Pure functions and
// values: nothing here talks to a server, so the encoding is tested (and
// fuzzed) without one.
//
// One message per event, plus messages of their own kinds. Every message
// carries the header
//
//   Evring-Ring: 1 INSTANCE CONTENT_TYPE SCHEMA_HASH
//
// (encoding version 1, the ring instance id, the content type in decimal,
// the schema hash in 64 lowercase hex digits), a Nats-Msg-Id derived from the
// instance and the sequence numbers it carries (so re-publishing never stores
// a duplicate within the stream's duplicate window), and exactly one header
// naming its kind:
//
//   kind          header                                body
//   event         Evring-Event: SEQNO TYPE E0 E1 E2 E3    64-byte descriptor, payload
//   gap           Evring-Gap: FIRST COUNT REASON          GapRecord (32 bytes)
//   announcement  Evring-Announce: FIRST_SEQNO            AnnouncementBody (96) + ring name
//   schema        Evring-Schema: TOTAL_BYTES              the ring's schema blob
//   batch         Evring-Batch: FIRST LAST COUNT          COUNT × (descriptor, payload)
//
// A ring set's stream (announcement flag kAnnounceMembers): every event and
// gap message also carries `Evring-Member: M` and a Msg-Id naming the
// member; a message without it has no member (read as member 0).
//
// An event or schema larger than what the server accepts in one message is
// split into chunks that follow each other in the stream, each with
// `Evring-Chunk: INDEX COUNT`; chunk 0 of an event starts with the descriptor.
//
// Subjects: `PREFIX.TYPE` or, with a flow tag in the layout, `PREFIX.TYPE.FLOW`
// for events (TYPE is the decimal event type or its name, FLOW the decimal
// content_ext value); `PREFIX._evring.gap|ring|schema|batch` for the others.
//
// Decoding validates every value before use (numbers, sizes, the agreement
// between headers and body) and never allocates from what a message claims:
// a hostile message is refused with a reason, never trusted.
//
// Thread safety: plain values and pure functions; an Encoder is used by one
// thread at a time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"
#include "evring/format.hpp"
#include "recording/recording_format.hpp"

namespace evring::nats {

inline constexpr unsigned kEncodingVersion = 1;

inline constexpr char kRingHeader[] = "Evring-Ring";
inline constexpr char kEventHeader[] = "Evring-Event";
inline constexpr char kGapHeader[] = "Evring-Gap";
inline constexpr char kAnnounceHeader[] = "Evring-Announce";
inline constexpr char kSchemaHeader[] = "Evring-Schema";
inline constexpr char kBatchHeader[] = "Evring-Batch";
inline constexpr char kChunkHeader[] = "Evring-Chunk";
// The ring set member of an event or gap relayed from a ring set
// (docs/distributed.md, "Ring sets"); absent: member 0 of no set.
inline constexpr char kMemberHeader[] = "Evring-Member";
inline constexpr char kMsgIdHeader[] = "Nats-Msg-Id";
inline constexpr char kExpectedLastMsgIdHeader[] = "Nats-Expected-Last-Msg-Id";

// The subject token under PREFIX for messages that are not single events.
inline constexpr std::string_view kControlToken = "_evring";

enum class MessageKind : std::uint8_t { Event, Gap, Announcement, Schema, Batch };
std::string_view describe(MessageKind kind) noexcept;  // "event", "gap", ...

// Limits of the encoding. A message exceeding one is refused by the decoder.
inline constexpr std::size_t kMaxInstanceIdSize = 64;
inline constexpr std::size_t kMaxRingNameSize = 4096;
inline constexpr std::uint64_t kMaxSchemaSize = std::uint64_t{4} << 20;
inline constexpr std::uint32_t kMaxChunks = std::uint32_t{1} << 20;
inline constexpr std::uint32_t kMaxBatchCount = 65536;
inline constexpr std::uint32_t kMaxMember = 1023;  // ring sets hold at most 1024 members
inline constexpr std::size_t kMaxPrefixSize = 200;
// Room left for headers and the subject when a body is sized to fit the
// server's max_payload: the longest header block this encoding writes is
// under 400 bytes.
inline constexpr std::size_t kHeaderAllowance = 1024;
// A server or stream accepting less than this per message is refused.
inline constexpr std::size_t kMinMessageLimit = 4096;

// Which ring the messages come from. `instance` identifies one life of the
// ring: the event source derives it (for example from a hash of the path,
// the device and inode and the creation time) and a new writer re-creating
// the ring under the same name gets a new one. 1..64 characters of
// [A-Za-z0-9_-].
struct RingIdentity {
    std::string name;      // the ring's name or path as its users know it (1..4096 bytes)
    std::string instance;
    std::uint16_t content_type = 0;
    std::array<std::uint8_t, 32> schema_hash{};
    RingSize size{};  // informational: the source ring's sizes (zeros when unknown)
};
Status validate_ring_identity(const RingIdentity& ring);
Status validate_instance_id(std::string_view instance);

// How event subjects are formed (see above). Fixed per stream: the
// announcement records it and a relay refuses a stream that uses another.
struct SubjectLayout {
    std::string prefix;                   // one or more tokens, no wildcards
    int flow_tag = -1;                    // -1: no flow token; 0..3: content_ext[flow_tag]
    std::vector<std::string> type_names;  // index: event type; "" or past the end: the number
};
Status validate_subject_layout(const SubjectLayout& layout);
// A subject token as NATS accepts it (printable ASCII without '.', '*', '>').
bool is_subject_token(std::string_view token) noexcept;

std::string stream_subject(std::string_view prefix);  // "PREFIX.>"
void append_event_subject(std::string& out, const SubjectLayout& layout, const EventDescriptor& event);
std::string control_subject(std::string_view prefix, MessageKind kind);  // gap, announcement, schema, batch
std::string control_filter(std::string_view prefix);                     // "PREFIX._evring.>"
// The subject a consumer filters on for events of `type_token` (a decimal
// type or a name) and, when the layout has a flow token, `flow_value`.
// nullopt when the layout cannot express it (a flow value without a flow token).
std::optional<std::string> event_filter(const SubjectLayout& layout, std::optional<std::string_view> type_token,
                                        std::optional<std::uint64_t> flow_value);
// True when the subject pattern `pattern` (with '*' and '>' wildcards) matches
// every subject under PREFIX (that is, PREFIX.>).
bool pattern_covers_prefix(std::string_view pattern, std::string_view prefix) noexcept;

// The announcement's body (little-endian), followed by name_size bytes of
// the ring's name. docs/distributed.md has the table.
inline constexpr std::array<char, 8> kAnnouncementMagic = {'E', 'V', 'R', 'N', 'A', 'T', 'S', '1'};
inline constexpr std::uint16_t kNoFlowToken = 0xffff;
inline constexpr std::uint32_t kAnnounceTypeNames = 1;  // subjects name event types
inline constexpr std::uint32_t kAnnounceFiltered = 2;   // only some events are relayed
inline constexpr std::uint32_t kAnnounceBatched = 4;    // events travel in batch messages
inline constexpr std::uint32_t kAnnounceMembers = 8;    // a ring set: events and gaps carry Evring-Member
inline constexpr std::uint32_t kAnnounceKnownFlags = 15;

struct AnnouncementBody {
    std::array<char, 8> magic;
    std::uint16_t content_type;
    std::uint16_t flow_token;  // 0..3, or kNoFlowToken
    std::uint32_t flags;       // kAnnounce*
    std::array<std::uint8_t, 32> schema_hash;
    RingSize ring_size;
    std::uint64_t first_seqno;  // the first sequence number relayed after it
    std::uint64_t announced_epoch_nanos;
    std::uint32_t name_size;
    std::uint32_t reserved;  // zero
};
static_assert(sizeof(AnnouncementBody) == 96);
static_assert(offsetof(AnnouncementBody, schema_hash) == 16);
static_assert(offsetof(AnnouncementBody, ring_size) == 48);
static_assert(offsetof(AnnouncementBody, first_seqno) == 72);
static_assert(offsetof(AnnouncementBody, name_size) == 88);

// A decoded announcement: a ring instance starts (or a relay starts on it).
struct Announcement {
    RingIdentity ring;
    std::uint64_t first_seqno = 0;
    std::uint64_t announced_epoch_nanos = 0;
    int flow_token = -1;
    std::uint32_t flags = 0;
};

// One message ready to publish: everything but Nats-Expected-Last-Msg-Id,
// which the publisher adds when it sends it.
struct OutgoingMessage {
    struct Header {
        const char* name;  // one of the k*Header constants
        std::string value;
    };
    MessageKind kind = MessageKind::Event;
    std::uint64_t first_seqno = 0;  // the ring sequence numbers it carries (0: none)
    std::uint64_t last_seqno = 0;
    std::uint32_t batch_count = 0;  // Batch: events in it
    std::string subject;
    std::string msg_id;
    std::vector<Header> headers;
    std::vector<std::byte> body;

    // Empties it, keeping the capacity for the next message.
    void clear();
    std::size_t wire_size() const;  // subject + headers + body: what counts against max_payload
};

// Builds messages for one ring instance, reusing the caller's message objects.
class Encoder {
public:
    // `max_body`: the most body bytes one message may carry (the server's
    // limit less kHeaderAllowance); bigger events and schemas are chunked.
    Encoder(RingIdentity ring, SubjectLayout layout, std::size_t max_body);

    const RingIdentity& ring() const { return ring_; }
    const SubjectLayout& layout() const { return layout_; }
    std::size_t max_body() const { return max_body_; }
    // Switches to another instance (a new writer re-created the ring).
    void set_ring(RingIdentity ring);

    // How many messages an event with this payload needs (1 unless chunked).
    std::uint32_t event_chunks(std::size_t payload_size) const;
    // `member`: the ring set member the event or gap belongs to (an
    // Evring-Member header, and a Nats-Msg-Id naming it, since sequence
    // numbers are per member); none for a ring.
    void encode_event(const EventDescriptor& event, std::span<const std::byte> payload, std::uint32_t chunk,
                      OutgoingMessage& out, std::optional<std::uint32_t> member = std::nullopt) const;
    void encode_gap(std::uint64_t first, std::uint64_t count, GapReason reason, std::uint64_t now_nanos,
                    OutgoingMessage& out, std::optional<std::uint32_t> member = std::nullopt) const;
    void encode_announcement(std::uint64_t first_seqno, std::uint32_t flags, std::uint64_t now_nanos,
                             OutgoingMessage& out) const;
    std::uint32_t schema_chunks(std::size_t blob_size) const;
    void encode_schema(std::span<const std::byte> blob, std::uint32_t chunk, OutgoingMessage& out) const;

    // Batches: begin with the first event, add while add_to_batch says it
    // fits, then finish. An event that does not fit starts the next batch.
    void begin_batch(OutgoingMessage& out) const;
    bool add_to_batch(const EventDescriptor& event, std::span<const std::byte> payload, OutgoingMessage& out) const;
    void finish_batch(OutgoingMessage& out) const;

private:
    void add_common(OutgoingMessage& out, MessageKind kind) const;

    RingIdentity ring_;
    SubjectLayout layout_;
    std::size_t max_body_;
    std::string ring_header_;  // the Evring-Ring value
};

// A received message as the decoder sees it: the header values that matter
// ("" when absent; the first value when a header repeats) and the body.
struct WireMessage {
    std::string_view subject;
    std::string_view msg_id;
    std::string_view ring;
    std::string_view event;
    std::string_view gap;
    std::string_view announce;
    std::string_view schema;
    std::string_view batch;
    std::string_view chunk;
    std::string_view member;
    std::span<const std::byte> body;
};

struct DecodedMessage {
    MessageKind kind = MessageKind::Event;
    std::string_view instance;  // points into the WireMessage
    std::uint16_t content_type = 0;
    std::array<std::uint8_t, 32> schema_hash{};
    std::uint32_t chunk = 0;         // Event and Schema: this message's chunk
    std::uint32_t chunk_count = 1;   // 1 when not chunked
    EventDescriptor event{};         // Event (every chunk: the header's values)
    std::span<const std::byte> part; // Event: payload bytes in this message; Schema: blob bytes
    GapRecord gap{};                 // Gap
    Announcement announcement;       // Announcement
    std::uint64_t schema_size = 0;   // Schema: the whole blob
    std::uint64_t batch_first = 0, batch_last = 0;  // Batch
    std::uint32_t batch_count = 0;
    std::span<const std::byte> batch_records;
    // Event and Gap: the Evring-Member header's value (0..kMaxMember), if any.
    std::optional<std::uint32_t> member;

    // The ring sequence numbers the message carries (0, 0 for announcements and schemas).
    std::uint64_t first_seqno() const;
    std::uint64_t last_seqno() const;
};

// False when the message carries no Evring-Ring header (not an evring message).
bool is_evring_message(const WireMessage& message) noexcept;
// Decodes and validates; the error says what is wrong (never crashes, never
// allocates from a claimed size).
Status decode_message(const WireMessage& message, DecodedMessage& out);

// Walks the records of a decoded batch (already validated by decode_message).
class BatchCursor {
public:
    explicit BatchCursor(const DecodedMessage& batch) : rest_(batch.batch_records) {}
    bool next(EventDescriptor& event, std::span<const std::byte>& payload);

private:
    std::span<const std::byte> rest_;
};

}  // namespace evring::nats
