// lib/bindings/writer_batch.hpp — recording many events in one call, for the
// C ABI (evring_writer_record_batch) and Python (Writer.record_many) alike:
// the checks evring_writer_record makes of one event, made of each, then the
// events published in batches (typed_publish.hpp's publish_many:
// Publisher::publish_batch, one timestamp and one doorbell check per batch
// of up to 64 events).
//
// Contract (record_batch):
// - With a schema, every event is checked first (schema_write_check.hpp):
//   when any is refused nothing is published, and the result is
//   EVRING_E_DECODE naming the first refused event by its index and why.
//   Then each event no registered reader wants (interest) is skipped: its
//   seqno is 0. Without a schema any bytes are published.
// - An event larger than the ring allows is recorded as a RECORD_ERROR in its
//   place (its seqno 0), the others are published, and the result is
//   EVRING_E_TOO_LARGE naming the first such event.
// - `seqnos`, when not null, receives one seqno per event (0: not
//   published). Events keep their order.
// - Allocation-free apart from the message of an error; no system call.
//
// Thread safety: as the writer handle (evring.h): any threads at once.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "evring/evring.h"
#include "evring/schema/typed_publish.hpp"
#include "handles.hpp"
#include "writer_handle.hpp"

namespace evring::bindings {

// One event as a binding hands it over.
struct EventToRecord {
    std::uint16_t event_type = 0;
    const void* payload = nullptr;  // payload_size bytes; may be null when 0
    std::uint64_t payload_size = 0;
    std::array<std::uint64_t, 4> content_ext{};
};

struct BatchRecorded {
    int status = EVRING_OK;  // EVRING_OK, EVRING_E_TOO_LARGE or EVRING_E_DECODE
    std::string message;     // for a status other than EVRING_OK
};

// The events event_at(0) .. event_at(count - 1), each an EventToRecord (see
// the contract). event_at is called twice per event when the writer has a
// schema (checks, then publication), once otherwise.
template <class EventAt>
BatchRecorded record_batch(evring_writer& writer, std::size_t count, const EventAt& event_at, std::uint64_t* seqnos) {
    BatchRecorded result;
    if (writer.schema) {
        for (std::size_t i = 0; i < count; ++i) {
            const EventToRecord e = event_at(i);
            if (std::string why = refusal(writer, e.event_type, e.payload, e.payload_size); !why.empty()) {
                result.status = EVRING_E_DECODE;
                result.message = fmt::format("event {} of the batch: {}; nothing was published", i, why);
                return result;
            }
        }
    }
    Publisher& publisher = writer.publisher;
    BatchEvent chunk[Publisher::kMaxBatchEvents];
    std::uint64_t chunk_seqnos[Publisher::kMaxBatchEvents];
    std::size_t chunk_index[Publisher::kMaxBatchEvents];
    std::size_t n = 0;
    auto flush = [&] {
        publish_many(publisher, std::span<const BatchEvent>(chunk, n), std::span<std::uint64_t>(chunk_seqnos, n));
        for (std::size_t j = 0; j < n && seqnos != nullptr; ++j) seqnos[chunk_index[j]] = chunk_seqnos[j];
        n = 0;
    };
    auto too_large = [&](std::size_t i, std::uint64_t size) {
        if (result.status != EVRING_OK) return;
        result.status = EVRING_E_TOO_LARGE;
        result.message = fmt::format("event {} of the batch: a payload of {} bytes is larger than this ring allows "
                                     "({}); a RECORD_ERROR was recorded in its place",
                                     i, size, publisher.max_payload_size());
    };
    for (std::size_t i = 0; i < count; ++i) {
        const EventToRecord e = event_at(i);
        if (seqnos != nullptr) seqnos[i] = 0;
        if (writer.schema && !wanted(writer, e.event_type)) continue;  // checked above, then skipped
        if (e.payload_size > publisher.max_payload_size()) {
            // publish_many would record it in place too, but a BatchEvent's
            // 32-bit size cannot carry every size: recorded here, in order.
            flush();
            detail::publish_oversized(publisher, e.event_type, e.payload_size, e.payload, e.payload_size,
                                      e.content_ext);
            too_large(i, e.payload_size);
            continue;
        }
        chunk[n] = {e.payload, e.content_ext, static_cast<std::uint32_t>(e.payload_size), e.event_type};
        chunk_index[n++] = i;
        if (n == Publisher::kMaxBatchEvents) flush();
    }
    flush();
    return result;
}

}  // namespace evring::bindings
