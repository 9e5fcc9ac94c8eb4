// Test support: the NATS encoding without a server. An OutgoingMessage is
// turned into the WireMessage a reader would see, with the header values
// held by the object so tests can tamper with any of them.
#pragma once

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "nats/nats_encoding.hpp"

namespace evring::test {

struct OwnedWire {
    std::string subject;
    std::map<std::string, std::string> headers;
    std::vector<std::byte> body;

    static OwnedWire from(const nats::OutgoingMessage& message) {
        OwnedWire wire;
        wire.subject = message.subject;
        wire.headers[nats::kMsgIdHeader] = message.msg_id;
        for (const auto& h : message.headers) wire.headers[h.name] = h.value;
        wire.body = message.body;
        return wire;
    }

    std::string_view header(const char* name) const {
        auto it = headers.find(name);
        return it == headers.end() ? std::string_view() : std::string_view(it->second);
    }

    nats::WireMessage view() const {
        nats::WireMessage m;
        m.subject = subject;
        m.msg_id = header(nats::kMsgIdHeader);
        m.ring = header(nats::kRingHeader);
        m.event = header(nats::kEventHeader);
        m.gap = header(nats::kGapHeader);
        m.announce = header(nats::kAnnounceHeader);
        m.schema = header(nats::kSchemaHeader);
        m.batch = header(nats::kBatchHeader);
        m.chunk = header(nats::kChunkHeader);
        m.body = body;
        return m;
    }
};

inline nats::RingIdentity test_ring_identity(std::string instance = "inst-1", std::string name = "/dev/shm/test") {
    nats::RingIdentity ring;
    ring.name = std::move(name);
    ring.instance = std::move(instance);
    ring.content_type = 1;
    for (unsigned i = 0; i < 32; ++i) ring.schema_hash[i] = static_cast<std::uint8_t>(i * 7);
    ring.size = RingSize{1024, 1 << 20, 0};
    return ring;
}

inline EventDescriptor test_event(std::uint64_t seqno, std::uint16_t type, std::uint32_t payload_size) {
    EventDescriptor event{};
    event.seqno = seqno;
    event.event_type = type;
    event.payload_size = payload_size;
    event.record_epoch_nanos = 1'700'000'000'000'000'000ull + seqno;
    event.payload_buf_offset = seqno * 64;
    event.content_ext = {seqno % 3, seqno, 42, 0};
    return event;
}

inline std::vector<std::byte> test_payload(std::uint64_t seqno, std::size_t size) {
    std::vector<std::byte> payload(size);
    for (std::size_t i = 0; i < size; ++i) payload[i] = std::byte(static_cast<unsigned char>(seqno * 31 + i));
    return payload;
}

}  // namespace evring::test
