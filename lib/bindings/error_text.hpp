// lib/bindings/error_text.hpp — the text of an error the bindings hand to a
// program: C's evring_last_error / evring_source_error / evring_writer_error
// and the message of Python's evring.Error.
//
// Messages echo what the caller gave (a path, a ring name, a keyword list, a
// host name), and a caller may give anything: a megabyte, a terminal escape
// sequence, bytes that are not UTF-8. error_text() makes any message safe to
// print and bounded:
// - control characters (below 0x20, and 0x7f) and bytes that are not valid
//   UTF-8 become \xNN (text_escape.hpp's printable(), as the CLI prints them);
// - past kMaxErrorBytes, the middle is left out, said with its size: the
//   start (what was being done, the value's start) and the end (the reason,
//   which most messages put last) stay.
// The bindings' own messages also cut each value they echo (shortened(),
// text_escape.hpp) so the reason is never the part left out.
//
// ThreadMessages: a writer handle's messages, one per thread (evring.h: a
// writer handle is used by any number of threads at once, and each reads the
// message of its own last failure).
//
// Thread safety: error_text is a pure function; ThreadMessages may be used
// by any number of threads at once.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

namespace evring::bindings {

inline constexpr std::size_t kMaxErrorBytes = 1024;

std::string error_text(std::string_view message);

class ThreadMessages {
public:
    // Keeps error_text(message) as this thread's message (none when memory
    // runs out: the caller's status still says what failed).
    void set(std::string_view message) noexcept;
    // This thread's last message, "" when it has none. Valid until this
    // thread's next set() (the map's nodes never move).
    const char* get() const noexcept;

private:
    // Taken on failures and by get() only: never on a successful write.
    mutable std::mutex mutex_;
    std::unordered_map<std::thread::id, std::string> by_thread_;
};

}  // namespace evring::bindings
