// The C ABI's named readers (evring.h, "named readers"): named_session.hpp
// does the work.
#include <errno.h>

#include <cstddef>

#include <fmt/format.h>

#include "named_session.hpp"

using evring::bindings::big_enough;
using evring::bindings::deliver;
using evring::bindings::guard;
using evring::bindings::set_error;
using evring::bindings::size_message;

namespace {

constexpr std::size_t kNamedInfoFirst = 72;  // 0.2.0's layout
static_assert(sizeof(evring_named_info) == kNamedInfoFirst);

}  // namespace

extern "C" {

int evring_source_resume_named(evring_source* source, const char* name, const char* start, int flags) {
    if (source == nullptr) return EVRING_E_INVALID;
    if (name == nullptr) return set_error(source, EVRING_E_INVALID, "evring_source_resume_named: no name given");
    if ((flags & ~EVRING_NAMED_RESET) != 0)
        return set_error(source, EVRING_E_INVALID,
                         fmt::format("evring_source_resume_named: unknown flags 0x{:x} (EVRING_NAMED_RESET is 0x1)",
                                     static_cast<unsigned>(flags & ~EVRING_NAMED_RESET)));
    return guard(
        [&]() -> int {
            if (auto s = evring::bindings::resume_named(*source, name, start == nullptr ? "oldest" : start,
                                                        (flags & EVRING_NAMED_RESET) != 0,
                                                        "evring_source_resume_named");
                !s)
                return set_error(source, s.error());
            return EVRING_OK;
        },
        [&](int status, const char* message) { return set_error(source, status, message); });
}

int evring_source_commit(evring_source* source) {
    if (source == nullptr) return EVRING_E_INVALID;
    return guard(
        [&]() -> int {
            if (auto s = evring::bindings::commit_named(*source, "evring_source_commit"); !s)
                return set_error(source, s.error());
            return EVRING_OK;
        },
        [&](int status, const char* message) { return set_error(source, status, message); });
}

int evring_source_get_named_info(const evring_source* source, evring_named_info* info) {
    if (source == nullptr || info == nullptr) return EVRING_E_INVALID;
    if (!big_enough(info, kNamedInfoFirst))
        return set_error(source, EVRING_E_INVALID,
                         size_message("evring_source_get_named_info", "evring_named_info", info->struct_size));
    if (!source->named)
        return set_error(source, EVRING_E_INVALID, "evring_source_get_named_info: not a named reader");
    const evring::NamedReader& r = *source->named;
    evring_named_info got{};
    got.name = r.name().c_str();
    got.file = r.file().c_str();
    got.committed_seqno = r.last_committed();
    got.handed_seqno = r.last_handed();
    got.redelivered = r.redelivered();
    got.redelivery_first = r.redelivery_first();
    got.redelivery_last = r.redelivery_last();
    got.notices = source->named_notices.c_str();
    deliver(info, got);
    return EVRING_OK;
}

}  // extern "C"
