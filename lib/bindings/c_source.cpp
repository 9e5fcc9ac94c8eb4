// The C ABI's sources: open, read, position, wait (evring.h).
#include <errno.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>

#include <fmt/format.h>

#include "registry/reader_kinds.hpp"
#include "evring/source/follow.hpp"
#include "evring/source/position.hpp"
#include "query/where.hpp"
#include "reader_session.hpp"
#include "source_handle.hpp"

using evring::bindings::big_enough;
using evring::bindings::deliver;
using evring::bindings::guard;
using evring::bindings::set_error;
using evring::bindings::size_message;

namespace {

constexpr std::size_t kBatchStaging = 1024;

// The structs' sizes when they were first versioned (ABI 2): a caller's
// struct_size may not be smaller. When a struct grows these stay as they are
// (the asserts below then name the new size and must be updated beside them).
constexpr std::size_t kOpenOptionsFirst = offsetof(evring_open_options, register_reader);  // 0.1.0's layout
constexpr std::size_t kInfoFirst = 88;
constexpr std::size_t kItemFirst = 128;
constexpr std::size_t kBatchFirst = 40;
constexpr std::size_t kCountersFirst = 96;
static_assert(sizeof(evring_source_info) == kInfoFirst);
static_assert(sizeof(evring_item) == kItemFirst);
static_assert(sizeof(evring_batch) == kBatchFirst);
// 0.2.0 added `healed` at the end: a 96-byte struct of 0.1.0 still gets everything else.
static_assert(sizeof(evring_counters) == kCountersFirst + 8);
static_assert(EVRING_KIND_RING_SET == static_cast<int>(evring::SourceKind::RingSet));

// The C enums are the C++ ones' values.
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
            evring::bindings::publish_position(*source);
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
    options->register_reader = 1;
    options->level = -1;
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
            // Older callers pass a smaller struct: the fields they lack take their defaults.
            evring_open_options o;
            evring_open_options_init(&o);
            if (options != nullptr) {
                if (options->struct_size < kOpenOptionsFirst) {
                    set_last_error(evring::Error(EINVAL, "evring_source_open: options not initialised "
                                                         "(call evring_open_options_init)"));
                    return nullptr;
                }
                std::memcpy(&o, options, std::min<std::size_t>(options->struct_size, sizeof o));
                if (options->schema_path != nullptr) settings.schema_path = options->schema_path;
                if (options->max_snapshot_size != 0) settings.source.max_snapshot_size = options->max_snapshot_size;
                settings.source.recording_series = options->recording_series != 0;
            }
            auto handle = evring::bindings::open_source_handle(location, settings);
            if (!handle) {
                set_last_error(handle.error());
                return nullptr;
            }
            evring::bindings::InterestRequest asked;
            if (o.keywords != nullptr) asked.keywords = o.keywords;
            if (o.level != -1) {
                if (o.level < 0 || o.level > static_cast<int>(evring::kMaxInterestLevel)) {
                    set_last_error(evring::Error(EINVAL, fmt::format("evring_source_open: level {} is not in 0..{} "
                                                                     "(-1: every level)",
                                                                     o.level, evring::kMaxInterestLevel)));
                    return nullptr;
                }
                asked.level = static_cast<unsigned>(o.level);
            }
            auto interest = evring::bindings::interest_for(**handle, asked, o.register_reader != 0);
            if (!interest) {
                evring::Error why = interest.error();
                set_last_error(why.context("evring_source_open"));
                return nullptr;
            }
            if (o.register_reader != 0) {
                evring::ReaderInfo info{o.reader_name != nullptr ? o.reader_name : "c",
                                        evring::reader_kinds::kApplication,
                                        o.reader_detail != nullptr ? o.reader_detail : program_invocation_short_name};
                std::string told = evring::bindings::register_reader(**handle, info, *interest);
                if (!told.empty()) evring::bindings::hold_notice(**handle, std::move(told));
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
    if (!big_enough(info, kInfoFirst))
        return set_error(source, EVRING_E_INVALID,
                         size_message("evring_source_get_info", "evring_source_info", info->struct_size));
    const evring::SourceIdentity& id = source->source->identity();
    evring_source_info got{};
    got.kind = static_cast<int>(id.kind);
    got.live = source->source->live() ? 1 : 0;
    got.content_type = id.content_type;
    std::memcpy(got.schema_hash, id.schema_hash.data(), sizeof got.schema_hash);
    got.descriptor_capacity = id.ring_size.descriptor_capacity;
    got.payload_buf_size = id.ring_size.payload_buf_size;
    got.path = id.path.c_str();
    got.member_ids = id.members ? 1 : 0;
    got.members = evring::bindings::member_count(*source);
    got.registered = evring::bindings::registered(*source) ? 1 : 0;
    deliver(info, got);
    return EVRING_OK;
}

int evring_source_next(evring_source* source, evring_item* item, int flags) {
    if (source == nullptr || item == nullptr) return EVRING_STEP_FAILED;
    if (!big_enough(item, kItemFirst)) {
        set_error(source, EVRING_E_INVALID, size_message("evring_source_next", "evring_item", item->struct_size));
        return EVRING_STEP_FAILED;
    }
    return guard(
        [&]() -> int {
            evring::SourceItem got;
            const bool wants_payload = (flags & EVRING_READ_PAYLOAD) != 0;
            const evring::SourceStep step = evring::bindings::next_item(
                *source, got, wants_payload ? evring::PayloadRead::Copy : evring::PayloadRead::None);
            evring_item out{};
            switch (step) {
            case evring::SourceStep::Event:
                copy_descriptor(got.event.descriptor, out.event);
                out.member = got.event.member;
                if (wants_payload) {  // a filter may have read it without being asked
                    out.payload_state = static_cast<int>(got.event.payload_state);
                    out.payload = got.event.payload.data();
                    out.payload_size = got.event.payload.size();
                }
                break;
            case evring::SourceStep::Gap:
                out.member = got.gap.member;
                out.gap_first_seqno = got.gap.first_seqno;
                out.gap_count = got.gap.count;
                out.gap_reason = static_cast<std::uint32_t>(got.gap.reason);
                source->item_text.assign(got.gap.detail);
                out.text = source->item_text.c_str();
                break;
            case evring::SourceStep::Notice:
                if (got.notice.data() != source->item_text.data()) source->item_text.assign(got.notice);
                out.text = source->item_text.c_str();
                break;
            case evring::SourceStep::Failed: set_error(source, source->source->error()); break;
            default: break;
            }
            deliver(item, out);
            return static_cast<int>(step);
        },
        [&](int status, const char* message) {
            fail_source(source, status, message);
            return static_cast<int>(EVRING_STEP_FAILED);
        });
}

int evring_source_next_batch(evring_source* source, evring_descriptor* out, size_t capacity, evring_batch* batch) {
    return evring_source_next_batch_members(source, out, nullptr, capacity, batch);
}

int evring_source_next_batch_members(evring_source* source, evring_descriptor* out, uint32_t* members,
                                     size_t capacity, evring_batch* batch) {
    if (source == nullptr || batch == nullptr || (out == nullptr && capacity > 0)) return EVRING_E_INVALID;
    if (!big_enough(batch, kBatchFirst))
        return set_error(source, EVRING_E_INVALID,
                         size_message("evring_source_next_batch", "evring_batch", batch->struct_size));
    if (source->where)
        return set_error(source, EVRING_E_INVALID,
                         "evring_source_next_batch: a where filter is set; read with evring_source_next");
    return guard(
        [&]() -> int {
            if (source->batch.size() < kBatchStaging) source->batch.resize(kBatchStaging);
            std::vector<std::uint32_t>& staged_members = source->batch_members;
            if (members != nullptr) staged_members.resize(source->batch.size());
            evring_batch result{};
            result.stopped = EVRING_STEP_EVENT;
            while (result.events < capacity) {
                const std::size_t n = std::min(capacity - result.events, source->batch.size());
                const evring::Batch got = evring::bindings::next_descriptors(
                    *source, {source->batch.data(), n},
                    members != nullptr ? std::span<std::uint32_t>(staged_members.data(), n) : std::span<std::uint32_t>());
                std::memcpy(out + result.events, source->batch.data(), got.events * sizeof(evring_descriptor));
                if (members != nullptr)
                    std::memcpy(members + result.events, staged_members.data(), got.events * sizeof(std::uint32_t));
                result.events += got.events;
                result.gaps += got.gaps;
                result.skipped += got.skipped;
                result.stopped = static_cast<int>(got.stopped);
                if (got.stopped != evring::SourceStep::Event) break;
            }
            deliver(batch, result);
            if (result.stopped == EVRING_STEP_FAILED) {
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
            auto set = evring::bindings::set_where(*source, expression == nullptr ? "" : expression,
                                                   "evring_source_set_where");
            if (!set) return set_error(source, EVRING_E_INVALID, set.error().message());
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
int evring_source_heal(evring_source* source, const char* heal_from, int find, uint64_t wait_ns) {
    if (source == nullptr) return EVRING_E_INVALID;
    return guard(
        [&]() -> int {
            evring::HealOptions heal;
            if (heal_from != nullptr) heal.recording = heal_from;
            heal.find = find != 0;
            if (wait_ns != 0)
                heal.patience = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::nanoseconds(std::min<std::uint64_t>(wait_ns, std::uint64_t{3600} * 1000000000)));
            if (!heal.wanted())
                return set_error(source, EVRING_E_INVALID, "evring_source_heal: give a recording, or find = 1");
            if (auto healed = evring::heal_source(*source->source, heal); !healed)
                return set_error(source, healed.error());
            // Registered at open: the same slot now says it heals (its
            // listing counts no overwritten event as lost).
            if (source->registration) {
                source->registration->started(*source->source);
                evring::bindings::publish_position(*source);
            }
            return EVRING_OK;
        },
        [&](int status, const char* message) { return fail_source(source, status, message); });
}

int evring_source_seek_latest(evring_source* source) { return seek_to(source, evring::Position::latest()); }
int evring_source_seek_oldest(evring_source* source) { return seek_to(source, evring::Position::oldest()); }
// The deprecated names (evring.h): the same functions, for one release.
int evring_source_reset(evring_source* source) { return evring_source_seek_latest(source); }
int evring_source_oldest(evring_source* source) { return evring_source_seek_oldest(source); }

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
    if (!big_enough(counters, kCountersFirst)) {
        return set_error(source, EVRING_E_INVALID,
                         size_message("evring_source_get_counters", "evring_counters", counters->struct_size));
    }
    const evring::bindings::SessionCounters session = evring::bindings::counters_of(*source);
    const evring::SourceCounters& c = session.source;
    evring_counters got{};
    got.events = c.events;
    got.lost = c.lost;
    got.gaps = c.gaps;
    got.abandoned = c.abandoned;
    got.never_committed = c.never_committed;
    got.damaged = c.damaged;
    got.replaced = c.replaced;
    got.damage_reports = c.damage_reports;
    got.records_lost_to_damage = c.records_lost_to_damage;
    got.foreign = c.foreign;
    got.late_events = session.late_events;
    got.healed = c.healed;
    deliver(counters, got);
    return EVRING_OK;
}

}  // extern "C"
