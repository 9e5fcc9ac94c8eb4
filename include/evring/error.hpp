// evring/error.hpp — the error tier for setup code (create, map, open, parse).
//
// Contract: functions that touch files, parse input or allocate return
// `Result<T>`: either a value or an `Error` carrying the errno (0 when the
// failure is not a system call's) and a readable message that names the file or
// value and the reason. Callers add context with `Error::context`, which
// prefixes the message ("opening ring 'x': <what went wrong>").
//
// Hot paths (reserve, commit, try_next, payload copy) never return an Error;
// they return small enums instead (see iterator.hpp, payload.hpp).
//
// Thread safety: plain values; no shared state.
#pragma once

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace evring {

class Error {
public:
    Error(int errno_value, std::string message)
        : errno_value_(errno_value), message_(std::move(message)) {}

    // An error whose message ends with strerror(errno_value).
    static Error from_errno(int errno_value, std::string_view what) {
        std::string message(what);
        message += ": ";
        message += std::strerror(errno_value);
        return Error(errno_value, std::move(message));
    }

    int errno_value() const noexcept { return errno_value_; }
    const std::string& message() const noexcept { return message_; }

    // Prefixes the message with what the caller was doing.
    Error& context(std::string_view what) {
        message_.insert(0, ": ");
        message_.insert(0, what);
        return *this;
    }

private:
    int errno_value_;
    std::string message_;
};

template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
    Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}

    bool ok() const noexcept { return state_.index() == 0; }
    explicit operator bool() const noexcept { return ok(); }

    T& value() & { return std::get<0>(state_); }
    const T& value() const& { return std::get<0>(state_); }
    T&& value() && { return std::get<0>(std::move(state_)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }

    const Error& error() const& { return std::get<1>(state_); }
    Error&& error() && { return std::get<1>(std::move(state_)); }

    // Adds context to a failure; a success passes through unchanged.
    Result&& context(std::string_view what) && {
        if (!ok()) std::get<1>(state_).context(what);
        return std::move(*this);
    }

private:
    std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error) : error_(std::move(error)), failed_(true) {}

    bool ok() const noexcept { return !failed_; }
    explicit operator bool() const noexcept { return ok(); }
    const Error& error() const& { return error_; }
    Error&& error() && { return std::move(error_); }

    Result&& context(std::string_view what) && {
        if (failed_) error_.context(what);
        return std::move(*this);
    }

private:
    Error error_{0, {}};
    bool failed_ = false;
};

using Status = Result<void>;

}  // namespace evring
