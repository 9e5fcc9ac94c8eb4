// The C ABI's sources: open, read, position, wait (evring.h).
#include <algorithm>
#include <chrono>
#include <cstring>

#include "evring/source/follow.hpp"
#include "evring/source/position.hpp"
#include "evring/query/where.hpp"
#include "source_handle.hpp"

using evring::bindings::guard;
using evring::bindings::set_error;

namespace {

constexpr std::size_t kBatchStaging = 1024;

// The C enums are the C++ ones' values.
static_assert(EVRING_KIND_STREAM == static_cast<int>(evring::SourceKind::Stream));
static_assert(EVRING_STEP_FAILED == static_cast<int>(evring::SourceStep::Failed));
static_assert(EVRING_STEP_NOT_READY == static_cast<int>(evring::SourceStep::NotReady));
static_assert(EVRING_PAYLOAD_INVALID == static_cast<int>(evring::PayloadState::Invalid));
static_assert(EVRING_GAP_RING_REPLACED == static_cast<int>(evring::GapReason::RingReplaced));

int fail_source(evring_source* source, int status, const char* message) noexcept {
    return set_error(source, status, message);
}

void copy_descriptor(const evring::EventDescriptor& from, evring_descriptor& to) noexcept {
    static_assert(sizeof(evring_descriptor) == sizeof(evring::EventDescriptor));
    std::memcpy(&to, &from, sizeof to);
}

int seek_to(evring_source* source, const evring::Position& position) noexcept {
    if (source == nullptr) return EVRING_E_INVALID;
    return guard(
        [&]() -> int {
            auto notice = source->source->seek(position);
            if (!notice) return set_error(source, notice.error());
            source->notice = std::move(*notice);
            return EVRING_OK;
        },
        [&](int status, const char* message) { return fail_source(source, status, message); });
}

}  // namespace

extern "C" {

void evring_open_options_init(evring_open_options* options) {
    if (options == nullptr) return;
    *options = evring_open_options{};
    options->struct_size = sizeof(evring_open_options);
    options->recording_series = 1;
}

evring_source* evring_source_open(const char* location, const evring_open_options* options) {
    using evring::bindings::set_last_error;
    if (location == nullptr) {
        set_last_error(evring::Error(EINVAL, "evring_source_open: no location given"));
        return nullptr;
    }
    return guard(
        [&]() -> evring_source* {
            evring::bindings::OpenSettings settings;
            if (options != nullptr) {
                if (options->struct_size < sizeof(evring_open_options)) {
                    set_last_error(evring::Error(EINVAL, "evring_source_open: options not initialised "
                                                         "(call evring_open_options_init)"));
                    return nullptr;
                }
                if (options->schema_path != nullptr) settings.schema_path = options->schema_path;
                if (options->max_snapshot_size != 0) settings.source.max_snapshot_size = options->max_snapshot_size;
                settings.source.recording_series = options->recording_series != 0;
            }
            auto handle = evring::bindings::open_source_handle(location, settings);
            if (!handle) {
                set_last_error(handle.error());
                return nullptr;
            }
            return handle->release();
        },
        [&](int, const char* message) -> evring_source* {
            set_last_error(evring::Error(ENOMEM, message));
            return nullptr;
        });
}

void evring_source_close(evring_source* source) { delete source; }

int evring_wait_for_name(const char* location, uint64_t timeout_ns) {
    if (location == nullptr) return EVRING_E_INVALID;
    const auto timeout =
        timeout_ns >= static_cast<uint64_t>(std::chrono::nanoseconds::max().count())
            ? std::chrono::nanoseconds::max()
            : std::chrono::nanoseconds(static_cast<std::int64_t>(timeout_ns));
    return evring::wait_for_name(location, evring::FollowOptions{}, nullptr, timeout) ? 1 : 0;
}

const char* evring_source_error(const evring_source* source) {
    return source == nullptr ? "no source (NULL handle)" : source->error.c_str();
}

int evring_source_errno(const evring_source* source) { return source == nullptr ? 0 : source->error_errno; }

int evring_source_get_info(const evring_source* source, evring_source_info* info) {
    if (source == nullptr || info == nullptr) return EVRING_E_INVALID;
    const evring::SourceIdentity& id = source->source->identity();
    *info = evring_source_info{};
    info->kind = static_cast<int>(id.kind);
    info->live = source->source->live() ? 1 : 0;
    info->content_type = id.content_type;
    std::memcpy(info->schema_hash, id.schema_hash.data(), sizeof info->schema_hash);
    info->descriptor_capacity = id.ring_size.descriptor_capacity;
    info->payload_buf_size = id.ring_size.payload_buf_size;
    info->path = id.path.c_str();
    return EVRING_OK;
}

int evring_source_next(evring_source* source, evring_item* item, int flags) {
    if (source == nullptr || item == nullptr) return EVRING_STEP_FAILED;
    return guard(
        [&]() -> int {
            evring::SourceItem got;
            const bool wants_payload = (flags & EVRING_READ_PAYLOAD) != 0;
            const evring::EventPredicate* where = source->where.get();
            const auto read = wants_payload || (where && where->needs_payload()) ? evring::PayloadRead::Copy
                                                                                 : evring::PayloadRead::None;
            evring::SourceStep step = source->source->next(got, read);
            // evring_source_set_where: events the filter drops are passed over.
            while (where && step == evring::SourceStep::Event && !where->matches(got.event))
                step = source->source->next(got, read);
            if (step == evring::SourceStep::Event && !wants_payload) {
                got.event.payload_state = evring::PayloadState::NotRead;
                got.event.payload = {};
            }
            switch (step) {
            case evring::SourceStep::Event:
                copy_descriptor(got.event.descriptor, item->event);
                item->payload_state = static_cast<int>(got.event.payload_state);
                item->payload = got.event.payload.data();
                item->payload_size = got.event.payload.size();
                break;
            case evring::SourceStep::Gap:
                item->gap_first_seqno = got.gap.first_seqno;
                item->gap_count = got.gap.count;
                item->gap_reason = static_cast<std::uint32_t>(got.gap.reason);
                source->item_text.assign(got.gap.detail);
                item->text = source->item_text.c_str();
                break;
            case evring::SourceStep::Notice:
                source->item_text.assign(got.notice);
                item->text = source->item_text.c_str();
                break;
            case evring::SourceStep::Failed: set_error(source, source->source->error()); break;
            default: break;
            }
            return static_cast<int>(step);
        },
        [&](int status, const char* message) {
            fail_source(source, status, message);
            return static_cast<int>(EVRING_STEP_FAILED);
        });
}

int evring_source_next_batch(evring_source* source, evring_descriptor* out, size_t capacity, evring_batch* batch) {
    if (source == nullptr || batch == nullptr || (out == nullptr && capacity > 0)) return EVRING_E_INVALID;
    if (source->where)
        return set_error(source, EVRING_E_INVALID,
                         "evring_source_next_batch: a where filter is set; read with evring_source_next");
    return guard(
        [&]() -> int {
            if (source->batch.size() < kBatchStaging) source->batch.resize(kBatchStaging);
            *batch = evring_batch{0, 0, 0, EVRING_STEP_EVENT};
            while (batch->events < capacity) {
                const std::size_t n = std::min(capacity - batch->events, source->batch.size());
                const evring::Batch got = source->source->next_batch({source->batch.data(), n});
                std::memcpy(out + batch->events, source->batch.data(), got.events * sizeof(evring_descriptor));
                batch->events += got.events;
                batch->gaps += got.gaps;
                batch->skipped += got.skipped;
                batch->stopped = static_cast<int>(got.stopped);
                if (got.stopped != evring::SourceStep::Event) break;
            }
            if (batch->stopped == EVRING_STEP_FAILED) {
                set_error(source, source->source->error());
                return EVRING_E_FAILED;
            }
            return EVRING_OK;
        },
        [&](int status, const char* message) { return fail_source(source, status, message); });
}

int evring_source_set_where(evring_source* source, const char* expression) {
    if (source == nullptr) return EVRING_E_INVALID;
    return guard(
        [&]() -> int {
            if (expression == nullptr || *expression == '\0') {
                source->where.reset();
                return EVRING_OK;
            }
            if (!source->schema.schema)
                return set_error(source, EVRING_E_INVALID,
                                 "evring_source_set_where: the source has no schema to name fields by");
            auto compiled = evring::compile_where(expression, *source->schema.schema, "where");
            if (!compiled) return set_error(source, EVRING_E_INVALID, compiled.error().message());
            source->where = std::move(*compiled);
            return EVRING_OK;
        },
        [&](int status, const char* message) { return fail_source(source, status, message); });
}

int evring_source_seek(evring_source* source, const char* position) {
    if (source == nullptr) return EVRING_E_INVALID;
    if (position == nullptr) return set_error(source, EVRING_E_INVALID, "evring_source_seek: no position given");
    return guard(
        [&]() -> int {
            if (auto s = evring::bindings::seek_source(*source, position); !s) return set_error(source, s.error());
            return EVRING_OK;
        },
        [&](int status, const char* message) { return fail_source(source, status, message); });
}

int evring_source_seek_seqno(evring_source* source, uint64_t seqno) {
    return seek_to(source, evring::Position::seqno(seqno));
}
int evring_source_reset(evring_source* source) { return seek_to(source, evring::Position::latest()); }
int evring_source_oldest(evring_source* source) { return seek_to(source, evring::Position::oldest()); }

const char* evring_source_notice(const evring_source* source) {
    return source == nullptr ? "" : source->notice.c_str();
}

uint64_t evring_source_next_seqno(const evring_source* source) {
    return source == nullptr ? 0 : source->source->next_seqno();
}

void evring_source_wait(evring_source* source, uint64_t timeout_nanos) {
    if (source == nullptr) return;
    // Bounded so the conversion to signed nanoseconds cannot overflow.
    const auto timeout = std::chrono::nanoseconds(std::min<uint64_t>(timeout_nanos, INT64_MAX));
    source->source->wait(timeout);
}

int evring_source_get_counters(const evring_source* source, evring_counters* counters) {
    if (source == nullptr || counters == nullptr) return EVRING_E_INVALID;
    const evring::SourceCounters& c = source->source->counters();
    *counters = evring_counters{c.events,          c.lost,     c.gaps,     c.abandoned,
                                c.never_committed, c.damaged, c.replaced, c.damage_reports};
    return EVRING_OK;
}

}  // extern "C"
