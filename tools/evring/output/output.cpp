#include "output/output.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>

#include "util/utc_time.hpp"

namespace evring::cli {

OutputBuffer::OutputBuffer(int fd, std::size_t flush_at)
    : fd_(fd), flush_at_(flush_at), buf_(flush_at + (std::size_t{64} << 10)) {}

void OutputBuffer::grow(std::size_t more) {
    // Only a single huge item (a large hex payload) gets here.
    buf_.resize((used_ + more) * 2);
}

void OutputBuffer::flush() {
    if (used_ == 0) return;
    if (on_write_) on_write_(false);
    std::size_t done = 0;
    while (done < used_ && errno_ == 0) {
        ssize_t n = ::write(fd_, buf_.data() + done, used_ - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            errno_ = errno;
            break;
        }
        done += static_cast<std::size_t>(n);
    }
    used_ = 0;
    if (on_write_ && errno_ == 0) on_write_(true);
}

void OutputBuffer::put_uint_padded(std::uint64_t value, int width) {
    char digits[20];
    auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
    for (auto n = end - digits; n < width; ++n) put('0');
    put(std::string_view(digits, static_cast<std::size_t>(end - digits)));
}

void OutputBuffer::put_hex(std::span<const std::byte> bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    reserve(bytes.size() * 2);
    char* out = buf_.data() + used_;
    for (std::byte b : bytes) {
        const auto v = std::to_integer<unsigned>(b);
        *out++ = kDigits[v >> 4];
        *out++ = kDigits[v & 15];
    }
    used_ += bytes.size() * 2;
}

void put_utc_time(OutputBuffer& out, std::uint64_t epoch_nanos) {
    char text[kUtcTimeSize];  // the library's one spelling (util/utc_time.hpp)
    out.put(std::string_view(text, write_utc_time(epoch_nanos, text)));
}

std::string utc_time(std::uint64_t epoch_nanos) {
    // A throwaway buffer on an invalid descriptor: only the text is wanted.
    OutputBuffer out(-1, 64);
    put_utc_time(out, epoch_nanos);
    return out.take();
}

std::string human_bytes(std::uint64_t bytes) {
    static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int unit = 0;
    std::uint64_t value = bytes;
    while (unit < 4 && value >= 1024 && value % 1024 == 0) {
        value /= 1024;
        ++unit;
    }
    if (value < 1024 || unit == 4) return std::to_string(value) + " " + kUnits[unit];
    // Not a whole number of any larger unit: one decimal of the largest that fits.
    double scaled = static_cast<double>(bytes);
    unit = 0;
    while (unit < 4 && scaled >= 1024) {
        scaled /= 1024;
        ++unit;
    }
    return fmt::format("{:.1f} {}", scaled, kUnits[unit]);
}

}  // namespace evring::cli
