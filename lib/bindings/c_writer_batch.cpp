// The C ABI's batch write: evring_writer_record_batch (evring.h), over
// writer_batch.hpp's record_batch, which Python's Writer.record_many shares.
#include <cstddef>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "handles.hpp"
#include "writer_batch.hpp"

namespace {

// evring_batch_event's size when it was first versioned (ABI 2): a caller's
// struct_size may not be smaller (evring.h, "How the ABI grows").
constexpr std::size_t kBatchEventFirst = 56;
static_assert(sizeof(evring_batch_event) == kBatchEventFirst);
// Larger than any later version will be: a struct_size past it is garbage
// (a struct never initialised), and stepping by it would read far outside
// the caller's array.
constexpr std::size_t kBatchEventMost = 4096;

int fail(evring_writer* writer, int status, const std::string& message) noexcept {
    writer->errors.set(message);  // this thread's (evring.h: a handle is shared by threads)
    return status;
}

// Element i of an array whose elements are `stride` bytes (the caller's
// struct_size); only the fields this library knows are read.
const evring_batch_event& element(const evring_batch_event* events, std::size_t stride, std::size_t i) noexcept {
    return *reinterpret_cast<const evring_batch_event*>(reinterpret_cast<const unsigned char*>(events) + i * stride);
}

// Empty when every element is well formed, else why not.
std::string malformed(const evring_batch_event* events, std::size_t stride, std::size_t count) {
    if (stride < kBatchEventFirst || stride > kBatchEventMost)
        return evring::bindings::size_message("evring_writer_record_batch", "evring_batch_event", events[0].struct_size);
    for (std::size_t i = 0; i < count; ++i) {
        const evring_batch_event& e = element(events, stride, i);
        if (e.struct_size != stride)
            return fmt::format("evring_writer_record_batch: events[{}].struct_size is {}, events[0]'s {}: every "
                               "element of the array must say the array's element size",
                               i, e.struct_size, stride);
        if (e.payload == nullptr && e.payload_size > 0)
            return fmt::format("evring_writer_record_batch: events[{}] has no payload but a payload_size of {}", i,
                               e.payload_size);
    }
    return {};
}

}  // namespace

extern "C" int evring_writer_record_batch(evring_writer* writer, const evring_batch_event* events, size_t count,
                                          uint64_t* seqnos) {
    if (writer == nullptr || (events == nullptr && count > 0)) return EVRING_E_INVALID;
    if (count == 0) return EVRING_OK;
    return evring::bindings::guard(
        [&]() -> int {
            const std::size_t stride = events[0].struct_size;
            if (const std::string why = malformed(events, stride, count); !why.empty())
                return fail(writer, EVRING_E_INVALID, why);
            const auto event_at = [&](std::size_t i) {
                const evring_batch_event& e = element(events, stride, i);
                evring::bindings::EventToRecord out;
                out.event_type = e.event_type;
                out.payload = e.payload;
                out.payload_size = e.payload_size;
                std::memcpy(out.content_ext.data(), e.content_ext, sizeof e.content_ext);
                return out;
            };
            const evring::bindings::BatchRecorded done = evring::bindings::record_batch(*writer, count, event_at, seqnos);
            return done.status == EVRING_OK ? EVRING_OK : fail(writer, done.status, done.message);
        },
        [&](int status, const char* message) { return fail(writer, status, message); });
}
