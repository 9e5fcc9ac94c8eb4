// The C ABI's event loops: a source's descriptor and wait sets (evring.h,
// "Event loops"; the shared part is wait_handle.hpp).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <new>

#include "handles.hpp"
#include "wait_handle.hpp"

using evring::bindings::guard;
using evring::bindings::set_error;

namespace {

int fail_set(const evring_waitset* set, int status, const std::string& message) noexcept {
    try {
        const_cast<evring_waitset*>(set)->error = message;
    } catch (...) {
    }
    return status;
}

std::chrono::nanoseconds timeout_of(std::uint64_t nanos) {
    // Bounded so the conversion to signed nanoseconds cannot overflow.
    return std::chrono::nanoseconds(std::min<std::uint64_t>(nanos, INT64_MAX));
}

}  // namespace

int evring_source_fd(evring_source* source) {
    if (source == nullptr) return EVRING_E_INVALID;
    return guard(
        [&]() -> int {
            auto fd = evring::bindings::source_descriptor(*source);
            if (!fd) return set_error(source, fd.error());
            return *fd;
        },
        [&](int status, const char* message) { return set_error(source, status, message); });
}

evring_waitset* evring_waitset_create(void) {
    evring_waitset* set = new (std::nothrow) evring_waitset();
    if (set == nullptr) evring::bindings::set_last_error(evring::Error(ENOMEM, "evring_waitset_create: out of memory"));
    return set;
}

void evring_waitset_close(evring_waitset* set) {
    if (set == nullptr) return;
    evring::bindings::waitset_detach(*set);
    delete set;  // stops the set's thread and closes its descriptor
}

int evring_waitset_add(evring_waitset* set, evring_source* source) {
    if (set == nullptr) return EVRING_E_INVALID;
    if (source == nullptr) return fail_set(set, EVRING_E_INVALID, "evring_waitset_add: no source (NULL handle)");
    return guard(
        [&]() -> int {
            if (auto added = evring::bindings::waitset_add(*set, *source); !added)
                return fail_set(set, EVRING_E_INVALID, "evring_waitset_add: " + added.error().message());
            return EVRING_OK;
        },
        [&](int status, const char* message) { return fail_set(set, status, message); });
}

int evring_waitset_remove(evring_waitset* set, evring_source* source) {
    if (set == nullptr) return EVRING_E_INVALID;
    if (source == nullptr) return fail_set(set, EVRING_E_INVALID, "evring_waitset_remove: no source (NULL handle)");
    return guard(
        [&]() -> int {
            if (!evring::bindings::waitset_remove(*set, *source))
                return fail_set(set, EVRING_E_INVALID,
                                "evring_waitset_remove: source '" + source->source->identity().location +
                                    "' is not in this wait set");
            return EVRING_OK;
        },
        [&](int status, const char* message) { return fail_set(set, status, message); });
}

int evring_waitset_wait(evring_waitset* set, uint64_t timeout_nanos, evring_source** ready, size_t capacity) {
    if (set == nullptr) return EVRING_E_INVALID;
    if (ready == nullptr && capacity > 0)
        return fail_set(set, EVRING_E_INVALID, "evring_waitset_wait: no array for the ready sources (NULL)");
    return guard(
        [&]() -> int {
            const auto& found = evring::bindings::waitset_wait(*set, timeout_of(timeout_nanos));
            const std::size_t n = std::min(found.size(), capacity);
            if (n > 0) std::memcpy(ready, found.data(), n * sizeof *ready);
            return static_cast<int>(std::min<std::size_t>(found.size(), INT32_MAX));
        },
        [&](int status, const char* message) { return fail_set(set, status, message); });
}

int evring_waitset_fd(evring_waitset* set) {
    if (set == nullptr) return EVRING_E_INVALID;
    return guard(
        [&]() -> int {
            auto fd = set->set.fd();
            if (!fd) return fail_set(set, EVRING_E_SYSTEM, "evring_waitset_fd: " + fd.error().message());
            return *fd;
        },
        [&](int status, const char* message) { return fail_set(set, status, message); });
}

const char* evring_waitset_error(const evring_waitset* set) {
    return set == nullptr ? "no wait set (NULL handle)" : set->error.c_str();
}
