// The C ABI's recording (evring.h, "Recording"): record_session.hpp does the work.
#include <errno.h>

#include <cstddef>

#include "record_session.hpp"

using evring::bindings::big_enough;
using evring::bindings::deliver;
using evring::bindings::guard;
using evring::bindings::set_error;
using evring::bindings::size_message;

namespace {

constexpr std::size_t kRecordOptionsFirst = 56;  // 0.2.0's layout
static_assert(sizeof(evring_record_options) == kRecordOptionsFirst);
constexpr std::size_t kRecordResultFirst = 48;
static_assert(sizeof(evring_record_result) == kRecordResultFirst);

int ended_of(const evring::Recorded& r) {
    switch (evring::record_end(r)) {
    case evring::RecordEnd::Count: return EVRING_RECORD_COUNT;
    case evring::RecordEnd::Until: return EVRING_RECORD_UNTIL;
    case evring::RecordEnd::Stopped: return EVRING_RECORD_STOPPED;
    case evring::RecordEnd::Failed: return EVRING_RECORD_FAILED;
    case evring::RecordEnd::End: break;
    }
    return EVRING_RECORD_END;
}

void fill(evring_record_result* caller, const evring::Recorded& r) {
    if (caller == nullptr) return;
    evring_record_result got{};
    got.ended = ended_of(r);
    got.events = r.totals.events;
    got.expired = r.totals.expired;
    got.lost = r.totals.lost;
    got.gaps = r.totals.gaps;
    got.files = r.totals.files;
    deliver(caller, got);
}

evring::bindings::RecordRequest request_of(const char* output, const evring_record_options& o) {
    evring::bindings::RecordRequest request;
    request.caller = "evring_source_record";
    request.output = output;
    request.count = o.count;
    if (o.until != nullptr) request.until = o.until;
    request.compress = o.compress != 0;
    request.level = o.level;
    request.rotate_bytes = o.rotate_bytes;
    request.threads = o.threads;
    if (const volatile int* stop = o.stop; stop != nullptr)
        request.keep_going = [stop] { return __atomic_load_n(stop, __ATOMIC_RELAXED) == 0; };
    return request;
}

}  // namespace

void evring_record_options_init(evring_record_options* options) {
    if (options == nullptr) return;
    *options = evring_record_options{};
    options->struct_size = sizeof(evring_record_options);
    options->compress = 1;
    options->level = 1;
    options->threads = 1;
}

int evring_source_record(evring_source* source, const char* output, const evring_record_options* options,
                         evring_record_result* result) {
    if (source == nullptr) return EVRING_E_INVALID;
    if (output == nullptr || *output == '\0')
        return set_error(source, EVRING_E_INVALID, "evring_source_record: no output file given");
    if (result != nullptr && !big_enough(result, kRecordResultFirst))
        return set_error(source, EVRING_E_INVALID,
                         size_message("evring_source_record", "evring_record_result", result->struct_size));
    evring_record_options o;
    evring_record_options_init(&o);
    if (options != nullptr) {
        if (!big_enough(options, kRecordOptionsFirst))
            return set_error(source, EVRING_E_INVALID,
                             "evring_source_record: options not initialised (call evring_record_options_init)");
        o = *options;
    }
    return guard(
        [&]() -> int {
            auto recorded = evring::bindings::record_handle(*source, request_of(output, o));
            if (!recorded) return set_error(source, recorded.error());
            fill(result, *recorded);
            if (!recorded->written) return set_error(source, recorded->written.error());
            return EVRING_OK;
        },
        [&](int status, const char* message) { return set_error(source, status, message); });
}
