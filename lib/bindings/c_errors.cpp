// The C ABI's errors, names and version (evring.h).
#include <cerrno>
#include <string>

#include <fmt/format.h>

#include "evring/source/event_source.hpp"
#include "handles.hpp"

namespace evring::bindings {
namespace {
thread_local std::string t_last_error;
}

const char* last_error_text() noexcept { return t_last_error.c_str(); }

int status_of(const Error& error) noexcept {
    switch (error.errno_value()) {
    case ENOMEM: return EVRING_E_NOMEM;
    case 0:
    case EINVAL:
    case ERANGE:
    case ENAMETOOLONG: return EVRING_E_INVALID;
    case EPROTO:
    case EBADMSG:
    case EILSEQ:
    case ENOEXEC: return EVRING_E_FORMAT;
    case EFBIG: return EVRING_E_TOO_LARGE;
    default: return EVRING_E_SYSTEM;
    }
}

// Every message handed out goes through error_text (error_text.hpp): escaped, bounded.
int set_last_error(const Error& error) noexcept {
    try {
        t_last_error = error_text(error.message());
    } catch (...) {
        t_last_error.clear();  // out of memory: the status still says so
    }
    return status_of(error);
}

std::string size_message(const char* function, const char* type, std::uint32_t given) {
    return fmt::format("{}: {}.struct_size is {}: set it to sizeof({}) (`{} x = {{.struct_size = sizeof x}};`)", function, type,
                       given, type, type);
}

int set_error(const evring_source* source, int status, std::string message) noexcept {
    try {
        source->error = error_text(message);
    } catch (...) {
        source->error.clear();
    }
    source->error_errno = 0;
    return status;
}

int set_error(const evring_source* source, const Error& error) noexcept {
    try {
        source->error = error_text(error.message());
    } catch (...) {
        source->error.clear();
    }
    source->error_errno = error.errno_value();
    return status_of(error);
}

}  // namespace evring::bindings

extern "C" {

const char* evring_version(void) { return EVRING_VERSION_STRING; }

unsigned evring_version_number(void) {
    return EVRING_VERSION_MAJOR * 10000 + EVRING_VERSION_MINOR * 100 + EVRING_VERSION_PATCH;
}

const char* evring_last_error(void) { return evring::bindings::last_error_text(); }

const char* evring_status_name(int status) {
    switch (status) {
    case EVRING_OK: return "ok";
    case EVRING_E_INVALID: return "invalid argument";
    case EVRING_E_SYSTEM: return "system error";
    case EVRING_E_FORMAT: return "bad file format";
    case EVRING_E_NOMEM: return "out of memory";
    case EVRING_E_TOO_SMALL: return "buffer too small";
    case EVRING_E_NO_SCHEMA: return "no schema";
    case EVRING_E_DECODE: return "payload does not decode";
    case EVRING_E_EXPIRED: return "payload expired";
    case EVRING_E_UNSUPPORTED: return "not supported by this source";
    case EVRING_E_FAILED: return "source failed";
    case EVRING_E_TOO_LARGE: return "too large";
    case EVRING_NOT_WANTED: return "not wanted by any reader (skipped)";
    default: return "unknown status";
    }
}

const char* evring_gap_reason_text(uint32_t reason) {
    // describe() returns views of string literals: NUL-terminated.
    return evring::describe(static_cast<evring::GapReason>(reason)).data();
}

}  // extern "C"
