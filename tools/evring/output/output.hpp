// tools/evring/output/output.hpp — fast buffered output for the CLI.
//
// Contract: OutputBuffer gathers text in a large buffer and hands it to
// write(2) in big pieces (never one system call per event); std::to_chars does
// the number formatting. A failed write (EPIPE when the reader of a pipe went
// away, ENOSPC) is remembered and reported by failed()/error(); later appends
// are dropped, so the caller stops at its next check.
//
// Thread safety: one thread per OutputBuffer.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace evring::cli {

class OutputBuffer {
public:
    explicit OutputBuffer(int fd, std::size_t flush_at = std::size_t{1} << 20);
    OutputBuffer(const OutputBuffer&) = delete;
    OutputBuffer& operator=(const OutputBuffer&) = delete;
    ~OutputBuffer() { flush(); }

    void put(std::string_view text) {
        reserve(text.size());
        std::memcpy(buf_.data() + used_, text.data(), text.size());
        used_ += text.size();
    }
    void put(char c) {
        reserve(1);
        buf_[used_++] = c;
    }
    void put_uint(std::uint64_t value) {
        reserve(20);
        used_ = static_cast<std::size_t>(
            std::to_chars(buf_.data() + used_, buf_.data() + used_ + 20, value).ptr - buf_.data());
    }
    // `value` in decimal, left-padded with zeros to `width` digits.
    void put_uint_padded(std::uint64_t value, int width);
    // Lower-case hex digits of the bytes, no separators.
    void put_hex(std::span<const std::byte> bytes);

    // Writes the buffer out when it is over the flush threshold.
    void maybe_flush() {
        if (used_ >= flush_at_) flush();
    }
    void flush();
    // Called with false before each write of buffered text and with true
    // once it is written: a named reader marks what its output holds
    // (lib/cursor/named_reader.hpp).
    void on_write(std::function<void(bool written)> hook) { on_write_ = std::move(hook); }
    // Hands back the buffered text instead of writing it.
    std::string take() {
        std::string text(buf_.data(), used_);
        used_ = 0;
        return text;
    }
    bool failed() const noexcept { return errno_ != 0; }
    int error() const noexcept { return errno_; }

private:
    void reserve(std::size_t more) {
        if (used_ + more > buf_.size()) grow(more);
    }
    void grow(std::size_t more);

    int fd_;
    std::size_t flush_at_;
    std::vector<char> buf_;
    std::size_t used_ = 0;
    int errno_ = 0;
    std::function<void(bool)> on_write_;
};

// "2026-11-22T01:45:00.123456789Z" for nanoseconds since the Unix epoch.
void put_utc_time(OutputBuffer& out, std::uint64_t epoch_nanos);
std::string utc_time(std::uint64_t epoch_nanos);

// "256 MiB", "4 KiB", "1000 B": exact binary units when they divide, else bytes.
std::string human_bytes(std::uint64_t bytes);

}  // namespace evring::cli
