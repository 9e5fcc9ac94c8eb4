// Test support for the recording suites: writing recordings with known
// contents, replaying them into a transcript, and editing their bytes (bit
// flips, cuts, rewritten blocks with fresh checksums, version 1 files).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "util/crc32c.hpp"
#include "recording/recording_block.hpp"
#include "recording/recording_v1.hpp"
#include "recording/recording.hpp"
#include "support/temp_ring.hpp"

namespace evring::test {

using Bytes = std::vector<std::byte>;

inline RingHeader recording_source_header() {
    RingHeader header{};
    header.magic = kRingMagic;
    header.content_type = 1;
    for (unsigned i = 0; i < 32; ++i) header.schema_hash[i] = static_cast<std::uint8_t>(i * 3);
    header.size = RingSize{1024, 1 << 20, 0};
    return header;
}

inline EventDescriptor event_with(std::uint64_t seqno, std::uint32_t payload_size) {
    EventDescriptor event{};
    event.seqno = seqno;
    event.event_type = static_cast<std::uint16_t>(seqno % 5 + 1);
    event.payload_size = payload_size;
    event.record_epoch_nanos = 1'700'000'000'000'000'000 + seqno;
    event.payload_buf_offset = seqno * 64;
    event.content_ext = {seqno, 2, 3, 4};
    return event;
}

// The payload of event `seqno`: its low byte, repeated.
inline void append_event(RecordingWriter& writer, std::uint64_t seqno, std::uint32_t size, bool intact = true) {
    std::byte* dst = writer.begin_event(event_with(seqno, size));
    std::memset(dst, static_cast<int>(seqno & 0xff), size);
    ASSERT_TRUE(writer.end_event(intact).ok());
}

// `events` events of `size` bytes from seqno 1, a block every `per_block`.
// Version 2 (no index blocks): these tests count and edit blocks by number.
inline void write_blocks(const std::string& path, std::uint64_t events, std::uint64_t per_block, bool compress,
                         std::uint32_t size = 40) {
    RecordingOptions options;
    options.compress = compress;
    options.index = false;
    auto writer = RecordingWriter::create(path, recording_source_header(), options);
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    for (std::uint64_t s = 1; s <= events; ++s) {
        append_event(*writer, s, size);
        if (s % per_block == 0) {
            ASSERT_TRUE(writer->flush().ok());
        }
    }
    ASSERT_TRUE(writer->finish().ok());
}

// Everything a replay returned, in order.
struct Replay {
    std::vector<Record> records;
    std::vector<Bytes> payloads;  // one per record (empty for non-events)
    ReadStatus status{};
    std::string notice;
    std::string error;  // next() failed (an I/O error), or open failed
    ReplayTotals totals;

    std::vector<std::uint64_t> event_seqnos() const {
        std::vector<std::uint64_t> out;
        for (const Record& r : records)
            if (r.kind == RecordKind::Event) out.push_back(r.event.seqno);
        return out;
    }
    std::vector<DamageReport> damage() const {
        std::vector<DamageReport> out;
        for (const Record& r : records)
            if (r.kind == RecordKind::Damage) out.push_back(r.damage);
        return out;
    }
    std::size_t count(RecordKind kind) const {
        std::size_t n = 0;
        for (const Record& r : records) n += r.kind == kind;
        return n;
    }
};

inline Replay replay(const std::string& path, std::size_t max_records = 10'000'000) {
    Replay out;
    auto reader = RecordingReader::open(path);
    if (!reader) {
        out.error = reader.error().message();
        return out;
    }
    for (std::size_t i = 0; i < max_records; ++i) {
        Record record;
        auto status = reader->next(record);
        if (!status) {
            out.error = status.error().message();
            break;
        }
        if (*status != ReadStatus::Record) {
            out.status = *status;
            out.notice = reader->notice();
            break;
        }
        out.payloads.emplace_back(record.payload.begin(), record.payload.end());
        out.records.push_back(std::move(record));
    }
    out.totals = reader->totals();
    return out;
}

// Events 1..n in order, each with its own payload.
inline void expect_events(const Replay& r, std::vector<std::uint64_t> seqnos) {
    EXPECT_EQ(r.event_seqnos(), seqnos);
    for (std::size_t i = 0; i < r.records.size(); ++i) {
        if (r.records[i].kind != RecordKind::Event) continue;
        const std::uint64_t s = r.records[i].event.seqno;
        ASSERT_EQ(r.payloads[i].size(), r.records[i].event.payload_size);
        for (std::byte b : r.payloads[i]) ASSERT_EQ(b, std::byte(s & 0xff)) << "seqno " << s;
    }
}

inline std::vector<std::uint64_t> range(std::uint64_t first, std::uint64_t last) {
    std::vector<std::uint64_t> out;
    for (std::uint64_t s = first; s <= last; ++s) out.push_back(s);
    return out;
}

inline Bytes read_file(const std::string& path) {
    Bytes bytes;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0) << path;
    struct stat st {};
    ::fstat(fd, &st);
    bytes.resize(static_cast<std::size_t>(st.st_size));
    EXPECT_EQ(::read(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    ::close(fd);
    return bytes;
}

inline void write_file(const std::string& path, const Bytes& bytes) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << path;
    ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    ::close(fd);
}

inline void flip_bit(Bytes& bytes, std::size_t offset, unsigned bit = 3) {
    bytes.at(offset) ^= std::byte(1u << bit);
}

// A v2 block as found in a file.
struct BlockAt {
    std::uint64_t offset;
    RecordingBlockHeader header;
};

// Walks the intact chain of blocks of a v2 file.
inline std::vector<BlockAt> list_blocks(const Bytes& file) {
    std::vector<BlockAt> out;
    std::uint64_t at = sizeof(RecordingFileHeader);
    while (at + sizeof(RecordingBlockHeader) <= file.size()) {
        BlockAt b{at, {}};
        std::memcpy(&b.header, file.data() + at, sizeof b.header);
        if (b.header.magic != kBlockMagic) break;
        out.push_back(b);
        at += sizeof(RecordingBlockHeader) + b.header.stored_size;
    }
    return out;
}

// Edits the block header at `offset` (blocks are not aligned: copied out and
// back) and recomputes its header checksum.
template <class Edit>
void edit_block_header(Bytes& file, std::uint64_t offset, Edit edit) {
    RecordingBlockHeader h;
    std::memcpy(&h, file.data() + offset, sizeof h);
    edit(h);
    h.header_crc = detail::block_header_crc(h);
    std::memcpy(file.data() + offset, &h, sizeof h);
}

// Recomputes a block's checksums after its stored bytes or header changed.
inline void reseal_block(Bytes& file, std::uint64_t offset) {
    edit_block_header(file, offset, [&](RecordingBlockHeader& h) {
        h.stored_crc = detail::crc32c(file.data() + offset + sizeof h, h.stored_size);
    });
}

// A struct's bytes followed by `tail`.
inline Bytes concat(const void* head, std::size_t size, const Bytes& tail) {
    // resize + memcpy: GCC 12 at -O2 misreads two inserts as an overflow.
    Bytes out(size + tail.size());
    std::memcpy(out.data(), head, size);
    if (!tail.empty()) std::memcpy(out.data() + size, tail.data(), tail.size());
    return out;
}

// Bytes of a block (header and stored bytes) built from `stored`.
inline Bytes make_block(const Bytes& stored, RecordingBlockHeader h) {
    h.magic = kBlockMagic;
    h.stored_size = static_cast<std::uint32_t>(stored.size());
    h.stored_crc = detail::crc32c(stored.data(), stored.size());
    h.header_crc = detail::block_header_crc(h);
    return concat(&h, sizeof h, stored);
}

inline std::uint64_t series_of(const Bytes& file) {
    RecordingFileHeader h;
    std::memcpy(&h, file.data(), sizeof h);
    return h.series_id;
}

// A version 1 recording, written the way the version 1 writer did.
class V1File {
public:
    explicit V1File(bool compress) : compress_(compress) {
        header_.magic = kRecordingMagic;
        header_.version = kRecordingVersion1;
        header_.content_type = 1;
        header_.flags = compress ? kRecordingZstd : 0;
        header_.ring_size = RingSize{1024, 1 << 20, 0};
        header_.start_epoch_nanos = 1'700'000'000'000'000'000;
    }
    RecordingFileHeader& header() { return header_; }

    void record(std::uint32_t kind, const void* body, std::uint64_t size) {
        const detail::RecordHeaderV1 head{kind, 0, size};
        append(&head, sizeof head);
        append(body, size);
    }
    void event(std::uint64_t seqno, std::uint32_t size) {
        Bytes body(sizeof(EventDescriptor) + size, std::byte(seqno & 0xff));
        const EventDescriptor e = event_with(seqno, size);
        std::memcpy(body.data(), &e, sizeof e);
        record(static_cast<std::uint32_t>(RecordKind::Event), body.data(), body.size());
        ++events_;
    }
    void gap(std::uint64_t first, std::uint64_t count) {
        const std::uint64_t body[3] = {first, count, 1};
        record(static_cast<std::uint32_t>(RecordKind::Gap), body, sizeof body);
        lost_ += count;
    }
    void end(std::uint64_t events_claimed = UINT64_MAX) {
        const std::uint64_t body[5] = {events_claimed == UINT64_MAX ? events_ : events_claimed, lost_, 0, 2, 0};
        record(static_cast<std::uint32_t>(RecordKind::End), body, sizeof body);
    }
    // Ends a zstd block here (the v1 writer flushed when idle, at most every
    // 50 ms): everything before it decodes even if later bytes are lost.
    void flush() { flushes_.push_back(body_.size()); }
    void append(const void* data, std::size_t size) {
        const auto* p = static_cast<const std::byte*>(data);
        body_.insert(body_.end(), p, p + size);
    }

    Bytes bytes() const {
        if (!compress_) return concat(&header_, sizeof header_, body_);
        ZSTD_CCtx* cctx = ZSTD_createCCtx();
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
        Bytes z(ZSTD_compressBound(body_.size()) + 64 * (flushes_.size() + 1));
        std::size_t made = 0, from = 0;
        std::vector<std::size_t> cuts = flushes_;
        cuts.push_back(body_.size());
        for (std::size_t i = 0; i < cuts.size(); ++i) {
            ZSTD_inBuffer in{body_.data() + from, cuts[i] - from, 0};
            const auto mode = i + 1 == cuts.size() ? ZSTD_e_end : ZSTD_e_flush;
            std::size_t left;
            do {
                ZSTD_outBuffer out{z.data() + made, z.size() - made, 0};
                left = ZSTD_compressStream2(cctx, &out, &in, mode);
                EXPECT_FALSE(ZSTD_isError(left));
                made += out.pos;
            } while (!ZSTD_isError(left) && left != 0);
            from = cuts[i];
        }
        ZSTD_freeCCtx(cctx);
        z.resize(made);
        return concat(&header_, sizeof header_, z);
    }

private:
    bool compress_;
    RecordingFileHeader header_{};
    Bytes body_;
    std::vector<std::size_t> flushes_;
    std::uint64_t events_ = 0, lost_ = 0;
};

}  // namespace evring::test
