// Copying reader registry slots under their seqlock, and their text fields.
// See registry_slot.hpp for the protocol.
#include "registry/registry_slot.hpp"

#include <cstring>
#include <thread>
#include <type_traits>

namespace evring::detail {
namespace {

char printable(char c) noexcept { return c >= 0x20 && c <= 0x7e ? c : '?'; }

// The words of a slot, in order, so a copy can walk them: a RegistrySlot is
// nothing but 64-bit words, four whole lines of them with no padding.
constexpr std::size_t kSlotWords = sizeof(RegistrySlot) / sizeof(std::uint64_t);
static_assert(std::is_standard_layout_v<RegistrySlot> && kSlotWords == 32);

const std::uint64_t* words_of(const RegistrySlot& slot) noexcept {
    return reinterpret_cast<const std::uint64_t*>(&slot);
}

}  // namespace

bool finish_slot_copy(const RegistrySlot& slot, std::uint64_t version, RegistrySlot& out) noexcept {
    const std::uint64_t* from = words_of(slot);
    std::uint64_t copy[kSlotWords];
    for (std::size_t i = 0; i < kSlotWords; ++i) copy[i] = shared::load_relaxed(from[i]);  // e2
    shared::fence_acquire();                                          // e3, pairs with E2 [B]
    if (shared::load_relaxed(slot.version) != version) return false;  // e4
    std::memcpy(static_cast<void*>(&out), copy, sizeof copy);
    return true;
}

bool copy_slot(const RegistrySlot& slot, RegistrySlot& out, int attempts) noexcept {
    for (int attempt = 0; attempt < attempts; ++attempt) {
        if (attempt > 0) std::this_thread::yield();
        std::uint64_t version = 0;
        if (begin_slot_copy(slot, version) && finish_slot_copy(slot, version, out)) return true;
    }
    return false;
}

void pack_text(std::span<std::uint64_t> words, std::string_view text) noexcept {
    const std::size_t capacity = words.size() * 8 - 1;  // room for the NUL
    for (std::size_t w = 0; w < words.size(); ++w) {
        std::uint64_t word = 0;
        for (std::size_t b = 0; b < 8; ++b) {
            const std::size_t at = w * 8 + b;
            const char c = at < text.size() && at < capacity ? printable(text[at]) : '\0';
            word |= std::uint64_t{static_cast<unsigned char>(c)} << (8 * b);  // little-endian bytes
        }
        shared::store_relaxed(words[w], word);  // E3
    }
}

std::string unpack_text(std::span<const std::uint64_t> words, bool& terminated) {
    std::string text;
    terminated = false;
    for (std::size_t w = 0; w < words.size() && !terminated; ++w) {
        for (std::size_t b = 0; b < 8; ++b) {
            const char c = static_cast<char>((words[w] >> (8 * b)) & 0xff);
            if (c == '\0') {
                terminated = true;
                break;
            }
            text.push_back(printable(c));
        }
    }
    return text;
}

std::string sanitise_reader_text(std::string_view text, std::size_t bytes) {
    std::string kept(text.substr(0, bytes - 1));
    for (char& c : kept) c = printable(c);
    return kept;
}

}  // namespace evring::detail
