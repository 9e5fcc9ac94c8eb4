// Error text the bindings hand out, safe and bounded (error_text.hpp).
#include "error_text.hpp"

#include <fmt/format.h>

#include "util/text_escape.hpp"

namespace evring::bindings {
namespace {

// How much of a long message's start and end stay.
constexpr std::size_t kKeptStart = 640;
constexpr std::size_t kKeptEnd = 256;
static_assert(kKeptStart + kKeptEnd + 64 <= kMaxErrorBytes);

// `at` moved back to the start of a UTF-8 character (printable's output is
// valid UTF-8), so a cut never splits one.
std::size_t character_start(std::string_view text, std::size_t at) noexcept {
    while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xc0) == 0x80) --at;
    return at;
}

}  // namespace

std::string error_text(std::string_view message) {
    std::string safe = printable(message);
    if (safe.size() <= kMaxErrorBytes) return safe;
    const std::size_t head = character_start(safe, kKeptStart);
    const std::size_t tail = character_start(safe, safe.size() - kKeptEnd);
    return fmt::format("{} ...({} bytes left out)... {}", std::string_view(safe).substr(0, head), tail - head,
                       std::string_view(safe).substr(tail));
}

void ThreadMessages::set(std::string_view message) noexcept {
    try {
        std::string text = error_text(message);
        const std::lock_guard lock(mutex_);
        by_thread_[std::this_thread::get_id()] = std::move(text);
    } catch (...) {
        // Out of memory: this thread's older message, if any, is cleared.
        const std::lock_guard lock(mutex_);
        if (auto it = by_thread_.find(std::this_thread::get_id()); it != by_thread_.end()) it->second.clear();
    }
}

const char* ThreadMessages::get() const noexcept {
    const std::lock_guard lock(mutex_);
    const auto it = by_thread_.find(std::this_thread::get_id());
    return it == by_thread_.end() ? "" : it->second.c_str();
}

}  // namespace evring::bindings
