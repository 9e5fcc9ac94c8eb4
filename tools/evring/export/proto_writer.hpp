// tools/evring/export/proto_writer.hpp — just enough of the protobuf wire format to
// write Perfetto traces (export_perfetto.hpp): varints, fixed64, length-
// delimited fields and nested messages, into one reused byte buffer.
//
// Nested messages: begin() reserves nothing; it remembers where the
// message's bytes start, and end() moves them up by the size of their length
// prefix and writes the prefix in front, so every length is the minimal
// varint that protoc and Perfetto expect. A message is a few hundred bytes, so
// the move costs less than a second pass that measures first.
//
//     ProtoWriter w;
//     auto packet = w.begin(1);          // Trace.packet
//     w.uint(8, timestamp);              // TracePacket.timestamp
//     w.end(packet);
//     write(fd, w.bytes());  w.clear();  // the capacity stays
//
// Contract: field numbers 1..2^29-1; begin/end strictly nested (end takes the
// handle begin returned). No allocation once the buffer has grown to the
// largest message written.
//
// Thread safety: one thread per writer.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/text_escape.hpp"

namespace evring::cli {

class ProtoWriter {
public:
    enum WireType : std::uint8_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2 };

    struct Nested {
        std::size_t start;  // where the message's own bytes begin
    };

    void uint(std::uint32_t field, std::uint64_t value) {
        tag(field, kVarint);
        varint(value);
    }
    // int64 fields: two's complement as a 64-bit varint (not zigzag).
    void sint64_as_int(std::uint32_t field, std::int64_t value) { uint(field, static_cast<std::uint64_t>(value)); }
    void boolean(std::uint32_t field, bool value) { uint(field, value ? 1 : 0); }
    void fixed64(std::uint32_t field, std::uint64_t value) {
        tag(field, kFixed64);
        raw_le64(value);
    }
    void float64(std::uint32_t field, double value) { fixed64(field, std::bit_cast<std::uint64_t>(value)); }
    // A protobuf string must be UTF-8 (protoc and Perfetto refuse it
    // otherwise): names from paths and schemas may not be, so bytes that are
    // not become U+FFFD (text_escape.hpp). Valid text is copied as it is.
    void string(std::uint32_t field, std::string_view text) {
        if (!is_valid_utf8(text)) {
            const std::string fixed = valid_utf8(text);
            return string(field, fixed);
        }
        tag(field, kLengthDelimited);
        varint(text.size());
        append(text.data(), text.size());
    }

    Nested begin(std::uint32_t field) {
        tag(field, kLengthDelimited);
        return Nested{buf_.size()};
    }
    void end(Nested nested) {
        const std::size_t length = buf_.size() - nested.start;
        std::uint8_t prefix[10];
        const std::size_t n = encode_varint(length, prefix);
        buf_.resize(buf_.size() + n);
        std::memmove(buf_.data() + nested.start + n, buf_.data() + nested.start, length);
        std::memcpy(buf_.data() + nested.start, prefix, n);
    }

    std::span<const std::uint8_t> bytes() const noexcept { return buf_; }
    std::size_t size() const noexcept { return buf_.size(); }
    void clear() noexcept { buf_.clear(); }

    static std::size_t encode_varint(std::uint64_t value, std::uint8_t* out) noexcept {
        std::size_t n = 0;
        while (value >= 0x80) {
            out[n++] = static_cast<std::uint8_t>(value | 0x80);
            value >>= 7;
        }
        out[n++] = static_cast<std::uint8_t>(value);
        return n;
    }

private:
    void tag(std::uint32_t field, WireType type) { varint((std::uint64_t{field} << 3) | type); }
    void varint(std::uint64_t value) {
        std::uint8_t bytes[10];
        append(bytes, encode_varint(value, bytes));
    }
    void raw_le64(std::uint64_t value) {
        std::uint8_t bytes[8];
        for (int i = 0; i < 8; ++i) bytes[i] = static_cast<std::uint8_t>(value >> (8 * i));
        append(bytes, 8);
    }
    void append(const void* data, std::size_t n) {
        const std::size_t at = buf_.size();
        buf_.resize(at + n);
        if (n != 0) std::memcpy(buf_.data() + at, data, n);
    }

    std::vector<std::uint8_t> buf_;
};

}  // namespace evring::cli
