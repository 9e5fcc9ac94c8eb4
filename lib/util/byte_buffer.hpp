// Private to lib/: a growable byte buffer that does not zero what it allocates.
//
// Recording staging and block buffers are filled right after they grow, so
// the value-initialisation of std::vector would only cost a memset per byte.
// Growth reports failure instead of throwing, so a reader can turn an
// allocation it cannot make into an error naming the file.
//
// Thread safety: a plain value.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <new>

namespace evring::detail {

class ByteBuffer {
public:
    ByteBuffer() = default;
    explicit ByteBuffer(std::size_t capacity) { (void)reserve(capacity); }

    std::byte* data() noexcept { return data_.get(); }
    const std::byte* data() const noexcept { return data_.get(); }
    std::size_t capacity() const noexcept { return capacity_; }

    // Makes room for `size` bytes, keeping the first `keep`; grows at least
    // twofold so appends stay amortised. False when the memory is not there.
    [[nodiscard]] bool reserve(std::size_t size, std::size_t keep = 0) noexcept {
        return grow(size, capacity_ * 2 > size ? capacity_ * 2 : size, keep);
    }

    // Like reserve, but to exactly `size` bytes (a bound the caller keeps).
    [[nodiscard]] bool reserve_exact(std::size_t size, std::size_t keep = 0) noexcept {
        return grow(size, size, keep);
    }

    // Gives the memory back (a reader that met one huge raw block).
    void release() noexcept {
        data_.reset();
        capacity_ = 0;
    }

private:
    bool grow(std::size_t size, std::size_t grown, std::size_t keep) noexcept {
        if (size <= capacity_) return true;
        std::unique_ptr<std::byte[]> bigger(new (std::nothrow) std::byte[grown]);
        if (!bigger && grown > size) {
            grown = size;  // doubling was too much; try exactly what is needed
            bigger.reset(new (std::nothrow) std::byte[grown]);
        }
        if (!bigger) return false;
        if (keep > 0) std::memcpy(bigger.get(), data_.get(), keep);
        data_ = std::move(bigger);
        capacity_ = grown;
        return true;
    }

    std::unique_ptr<std::byte[]> data_;
    std::size_t capacity_ = 0;
};

}  // namespace evring::detail
