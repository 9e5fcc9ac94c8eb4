// Private to lib/: the version 2 block codec shared by the recording writer
// and reader (layout in recording_format.hpp and docs/recording-format.md).
//
// Thread safety: a BlockEncoder or BlockDecoder is used by one thread at a
// time (each owns a zstd context); the free functions are pure.
#pragma once

#include <zstd.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "util/byte_buffer.hpp"
#include "recording/recording_format.hpp"

namespace evring::detail {

// Writers cut blocks once this much is staged: small enough that one damaged
// byte costs little, big enough for zstd to find repetition across events.
inline constexpr std::size_t kBlockTarget = std::size_t{256} << 10;

struct BlockMeta {
    std::uint64_t first_seqno = 0;
    std::uint64_t last_seqno = 0;
    std::uint32_t record_count = 0;
    std::uint32_t block_number = 0;
    BlockContent content = BlockContent::Records;
    bool holds_end = false;
    bool raw = false;  // never compressed (the end block of a v3 file, found at a fixed distance from its end)
};

std::uint32_t file_header_crc(const RecordingFileHeader& header) noexcept;
std::uint32_t block_header_crc(const RecordingBlockHeader& header) noexcept;

// The most bytes one zstd frame of `stored` bytes can decode to: every zstd
// block yields at most 128 KiB and takes at least 3 bytes.
std::uint64_t max_zstd_content(std::uint64_t stored) noexcept;

// A block's content compressed (or chosen raw) and checksummed ahead of its
// place in the file: all of a block but its header (BlockEncoder::pack, seal).
struct PackedBlock {
    ByteBuffer bytes;      // the zstd frame, when zstd
    std::size_t size = 0;  // of the frame
    bool zstd = false;     // false: the content is stored raw
    std::uint32_t stored_crc = 0;
};

// Builds blocks: zstd (one frame) when asked and when it shrinks the content
// and the content is at most kMaxCompressedBlockContent, raw otherwise.
class BlockEncoder {
public:
    explicit BlockEncoder(bool compress, int level);
    BlockEncoder(const BlockEncoder&) = delete;
    BlockEncoder& operator=(const BlockEncoder&) = delete;

    // Encodes `content` (at most kMaxBlockContent bytes); header() and
    // stored() then describe the block until the next call.
    void encode(std::span<const std::byte> content, const BlockMeta& meta, std::uint64_t series_id);
    // encode in two steps, so that the costly one (compression and the
    // stored bytes' checksum) can run on any thread with its own encoder and
    // only the header waits for the block's place: pack, then seal with the
    // same content (which `packed` and stored() then refer to).
    void pack(std::span<const std::byte> content, PackedBlock& packed);
    void seal(std::span<const std::byte> content, const PackedBlock& packed, const BlockMeta& meta,
              std::uint64_t series_id);
    const RecordingBlockHeader& header() const noexcept { return header_; }
    std::span<const std::byte> stored() const noexcept { return stored_; }

private:
    // The zstd frame's size in `into`, or 0: store raw.
    std::size_t compress(std::span<const std::byte> content, ByteBuffer& into);
    void fill_header(std::span<const std::byte> content, bool zstd, std::uint32_t stored_crc, const BlockMeta& meta,
                     std::uint64_t series_id);

    int level_;
    std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx_{nullptr, ZSTD_freeCCtx};
    ByteBuffer scratch_;
    RecordingBlockHeader header_{};
    std::span<const std::byte> stored_;
};

// Why `header` is not a block header a reader can use, or "" when it is.
// `series_id` 0 accepts any series.
std::string block_header_problem(const RecordingBlockHeader& header, std::uint64_t series_id);

// Decodes checksummed stored bytes into their content.
class BlockDecoder {
public:
    BlockDecoder() = default;
    BlockDecoder(const BlockDecoder&) = delete;
    BlockDecoder& operator=(const BlockDecoder&) = delete;

    // `stored` has header.stored_size bytes whose CRC matched. On success
    // `content` holds header.content_size bytes (raw blocks: `stored` itself);
    // otherwise the reason it cannot be decoded. Allocation errors are returned
    // as reasons too ("cannot allocate ...").
    std::string decode(const RecordingBlockHeader& header, std::span<const std::byte> stored,
                       std::span<const std::byte>& content);

private:
    std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> dctx_{nullptr, ZSTD_freeDCtx};
    ByteBuffer buffer_;
};

}  // namespace evring::detail
