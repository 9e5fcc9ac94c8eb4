#include "recording/recording_block.hpp"

#include <zstd_errors.h>

#include <fmt/format.h>

#include <cstring>

#include "util/crc32c.hpp"

namespace evring::detail {

std::uint32_t file_header_crc(const RecordingFileHeader& header) noexcept {
    return crc32c(&header, offsetof(RecordingFileHeader, header_crc));
}

std::uint32_t block_header_crc(const RecordingBlockHeader& header) noexcept {
    return crc32c(&header, offsetof(RecordingBlockHeader, header_crc));
}

std::uint64_t max_zstd_content(std::uint64_t stored) noexcept {
    return (stored / 3 + 1) * (std::uint64_t{128} << 10);
}

BlockEncoder::BlockEncoder(bool compress, int level) : level_(level) {
    if (compress) cctx_.reset(ZSTD_createCCtx());
    // Our CRC32C covers the stored bytes; zstd's own checksum would add 4
    // bytes and a hash pass per block for nothing.
    if (cctx_) {
        ZSTD_CCtx_setParameter(cctx_.get(), ZSTD_c_compressionLevel, level_);
        ZSTD_CCtx_setParameter(cctx_.get(), ZSTD_c_checksumFlag, 0);
        ZSTD_CCtx_setParameter(cctx_.get(), ZSTD_c_contentSizeFlag, 1);
    }
}

std::size_t BlockEncoder::compress(std::span<const std::byte> content, ByteBuffer& into) {
    if (!cctx_ || content.empty() || content.size() > kMaxCompressedBlockContent) return 0;
    const std::size_t bound = ZSTD_compressBound(content.size());
    if (!into.reserve(bound)) return 0;
    const std::size_t n = ZSTD_compress2(cctx_.get(), into.data(), bound, content.data(), content.size());
    // An error, or no gain: the block is stored raw (always correct).
    if (ZSTD_isError(n) || n >= content.size()) return 0;
    return n;
}

void BlockEncoder::encode(std::span<const std::byte> content, const BlockMeta& meta,
                          std::uint64_t series_id) {
    const std::size_t n = meta.raw ? 0 : compress(content, scratch_);
    stored_ = n > 0 ? std::span<const std::byte>(scratch_.data(), n) : content;
    fill_header(content, n > 0, crc32c(stored_.data(), stored_.size()), meta, series_id);
}

void BlockEncoder::pack(std::span<const std::byte> content, PackedBlock& packed) {
    packed.size = compress(content, packed.bytes);
    packed.zstd = packed.size > 0;
    packed.stored_crc = packed.zstd ? crc32c(packed.bytes.data(), packed.size) : crc32c(content.data(), content.size());
}

void BlockEncoder::seal(std::span<const std::byte> content, const PackedBlock& packed, const BlockMeta& meta,
                        std::uint64_t series_id) {
    stored_ = packed.zstd ? std::span<const std::byte>(packed.bytes.data(), packed.size) : content;
    fill_header(content, packed.zstd, packed.stored_crc, meta, series_id);
}

void BlockEncoder::fill_header(std::span<const std::byte> content, bool zstd, std::uint32_t stored_crc,
                               const BlockMeta& meta, std::uint64_t series_id) {
    header_ = RecordingBlockHeader{};
    header_.magic = kBlockMagic;
    header_.series_id = series_id;
    header_.first_seqno = meta.first_seqno;
    header_.last_seqno = meta.last_seqno;
    header_.stored_size = static_cast<std::uint32_t>(stored_.size());
    header_.content_size = static_cast<std::uint32_t>(content.size());
    header_.record_count = meta.record_count;
    header_.block_number = meta.block_number;
    header_.flags = static_cast<std::uint16_t>((zstd ? kBlockZstd : 0) | (meta.holds_end ? kBlockHoldsEnd : 0));
    header_.content = static_cast<std::uint16_t>(meta.content);
    header_.stored_crc = stored_crc;
    header_.header_crc = block_header_crc(header_);
}

std::string block_header_problem(const RecordingBlockHeader& h, std::uint64_t series_id) {
    if (h.magic != kBlockMagic) return "no block magic";
    if (h.header_crc != block_header_crc(h)) return "block header checksum mismatch";
    if (series_id != 0 && h.series_id != series_id)
        return fmt::format("block of another recording (series {:016x}, this file's is {:016x})",
                           h.series_id, series_id);
    if ((h.flags & ~(kBlockZstd | kBlockHoldsEnd)) != 0) return fmt::format("unknown block flags {:#x}", h.flags);
    if (h.first_seqno > h.last_seqno)
        return fmt::format("first seqno {} is after last seqno {}", h.first_seqno, h.last_seqno);
    const bool zstd = (h.flags & kBlockZstd) != 0;
    if (!zstd && h.stored_size != h.content_size)
        return fmt::format("raw block stores {} bytes but declares {} bytes of content", h.stored_size,
                           h.content_size);
    if (zstd && h.content_size == 0) return "compressed block with no content";
    if (zstd && h.content_size > kMaxCompressedBlockContent)
        return fmt::format("compressed block declares {} bytes of content, over the format's limit of {}",
                           h.content_size, kMaxCompressedBlockContent);
    if (zstd && h.content_size > max_zstd_content(h.stored_size))
        return fmt::format("compressed block declares {} bytes of content, more than {} stored bytes can hold",
                           h.content_size, h.stored_size);
    if (h.content == static_cast<std::uint16_t>(BlockContent::Schema)) {
        if (h.block_number != 0 || h.record_count != 0 || h.first_seqno != 0 || (h.flags & kBlockHoldsEnd))
            return "schema block with records or a block number other than 0";
        if (h.content_size > kMaxRecordingSchemaSize)
            return fmt::format("schema of {} bytes, over the limit of {}", h.content_size, kMaxRecordingSchemaSize);
        return {};
    }
    if (h.content == static_cast<std::uint16_t>(BlockContent::Index)) {
        if (h.record_count != 0 || h.first_seqno != 0 || h.last_seqno != 0 || (h.flags & kBlockHoldsEnd))
            return "index block with records";
        if (h.content_size > kMaxIndexContent)
            return fmt::format("index of {} bytes, over the limit of {}", h.content_size, kMaxIndexContent);
        return {};
    }
    if (h.content != static_cast<std::uint16_t>(BlockContent::Records))
        return fmt::format("unknown block content {}", h.content);
    if (h.record_count == 0) return "records block with no records";
    if (std::uint64_t{h.record_count} * sizeof(RecordHeader) > h.content_size)
        return fmt::format("{} records cannot fit {} bytes", h.record_count, h.content_size);
    return {};
}

std::string BlockDecoder::decode(const RecordingBlockHeader& h, std::span<const std::byte> stored,
                                 std::span<const std::byte>& content) {
    if ((h.flags & kBlockZstd) == 0) {
        content = stored;
        return {};
    }
    // Exactly one frame, declaring exactly the content size of the header:
    // then decoding into a buffer of that size cannot write past it, and a
    // frame that would expand further (a bomb) fails with "dst too small".
    const std::size_t frame = ZSTD_findFrameCompressedSize(stored.data(), stored.size());
    if (ZSTD_isError(frame)) return fmt::format("zstd: {}", ZSTD_getErrorName(frame));
    if (frame != stored.size())
        return fmt::format("zstd frame of {} bytes followed by {} other bytes", frame, stored.size() - frame);
    const unsigned long long declared = ZSTD_getFrameContentSize(stored.data(), stored.size());
    if (declared != h.content_size)
        return declared == ZSTD_CONTENTSIZE_UNKNOWN
                   ? std::string("zstd frame without a content size")
                   : fmt::format("zstd frame declares {} bytes, the block header {}", declared, h.content_size);
    if (!dctx_) dctx_.reset(ZSTD_createDCtx());
    if (!dctx_) return "cannot allocate a zstd decompression context";
    if (!buffer_.reserve_exact(h.content_size)) return fmt::format("cannot allocate {} bytes", h.content_size);
    const std::size_t n = ZSTD_decompressDCtx(dctx_.get(), buffer_.data(), h.content_size, stored.data(), stored.size());
    if (ZSTD_isError(n)) {
        if (ZSTD_getErrorCode(n) == ZSTD_error_dstSize_tooSmall)
            return fmt::format("decompresses to more than its declared {} bytes (a decompression bomb?)",
                               h.content_size);
        return fmt::format("zstd: {}", ZSTD_getErrorName(n));
    }
    if (n != h.content_size)
        return fmt::format("decompresses to {} bytes, not its declared {}", n, h.content_size);
    content = {buffer_.data(), n};
    return {};
}

}  // namespace evring::detail
