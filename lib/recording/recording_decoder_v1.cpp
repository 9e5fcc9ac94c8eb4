// Version 1 recordings (recording_v1.hpp): one stream of records, raw or one
// zstd frame. Damage ends the replay there (a Damage record, then Truncated):
// the format has no point to resynchronise on.
#include <zstd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "util/byte_buffer.hpp"
#include "recording/recording_decoder.hpp"
#include "recording/recording_file.hpp"
#include "recording/recording_v1.hpp"

namespace evring {
namespace {

using detail::RecordHeaderV1;

constexpr std::size_t kInputChunk = std::size_t{1} << 20;
// zstd reports an error without the output of the call that met it, so
// each call gets at most this much room: a corrupt block then costs at most
// this much of the intact output before it.
constexpr std::size_t kOutputStep = std::size_t{4} << 10;

class DecoderV1 final : public RecordingReader::Decoder {
public:
    Status start() override;

protected:
    Result<bool> produce(Record& record) override;

private:
    Result<std::size_t> available(std::size_t need);
    Result<std::size_t> fill_raw();
    Result<std::size_t> fill_zstd();
    std::uint64_t file_offset() const;
    std::size_t input_chunk() const { return static_cast<std::size_t>(std::min<std::uint64_t>(kInputChunk, file_bytes + 1)); }
    std::string where() const;
    void stop_damaged(DamageKind kind, std::string_view what);
    std::string body_problem(const RecordHeaderV1& head) const;
    Status after_end();
    void check_totals(std::vector<std::string>& problems);

    std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> dctx_{nullptr, ZSTD_freeDCtx};
    detail::ByteBuffer input_;
    ZSTD_inBuffer in_{nullptr, 0, 0};
    std::uint64_t read_pos_ = sizeof(RecordingFileHeader);  // file bytes read so far
    bool input_eof_ = false;
    bool frame_done_ = false;
    std::string zstd_error_;
    detail::ByteBuffer buf_;
    std::size_t pos_ = 0, filled_ = 0;  // unconsumed body bytes in buf_
    std::uint64_t consumed_ = 0;     // body bytes consumed before buf_[pos_]
    std::uint64_t records_ = 0;
    std::uint64_t covered_ = 0;      // highest seqno replayed
    bool end_seen_ = false;
    EndRecord end_record_{};
};

Status DecoderV1::start() {
    if ((header.flags & ~kRecordingZstd) != 0) {
        // A v1 reader refused unknown flags; so do we, before any record.
        return Error(EINVAL, fmt::format("{} (version 1) has unknown flags {:#x}", named(), header.flags));
    }
    if (header.flags & kRecordingZstd) {
        dctx_.reset(ZSTD_createDCtx());
        if (!dctx_) return Error(ENOMEM, "allocating a zstd decompression context");
        if (!input_.reserve_exact(input_chunk())) return Error(ENOMEM, named() + ": cannot allocate its input buffer");
    }
    // Grows as records need (available()); small files stay small.
    if (!buf_.reserve_exact(kOutputStep * 4)) return Error(ENOMEM, named() + ": cannot allocate its buffer");
    return {};
}

std::uint64_t DecoderV1::file_offset() const {
    if (!dctx_) return sizeof(RecordingFileHeader) + consumed_;
    return read_pos_ - (in_.size - in_.pos);  // compressed bytes consumed so far
}

std::string DecoderV1::where() const {
    return dctx_ ? fmt::format("record {} (body offset {}, file offset about {})", records_ + 1, consumed_, file_offset())
                 : fmt::format("record {} at offset {}", records_ + 1, file_offset());
}

Result<std::size_t> DecoderV1::fill_raw() {
    auto n = detail::read_at(fd, read_pos_, buf_.data() + filled_, buf_.capacity() - filled_, named());
    if (!n) return std::move(n).error();
    read_pos_ += *n;
    filled_ += *n;
    return *n;
}

Result<std::size_t> DecoderV1::fill_zstd() {
    if (in_.pos == in_.size && !input_eof_) {
        auto n = detail::read_at(fd, read_pos_, input_.data(), input_.capacity(), named());
        if (!n) return std::move(n).error();
        read_pos_ += *n;
        input_eof_ = *n == 0;
        in_ = ZSTD_inBuffer{input_.data(), *n, 0};
    }
    ZSTD_outBuffer out{buf_.data(), std::min(buf_.capacity(), filled_ + kOutputStep), filled_};
    const std::size_t in_before = in_.pos;
    const std::size_t r = ZSTD_decompressStream(dctx_.get(), &out, &in_);
    if (ZSTD_isError(r)) {
        zstd_error_ = ZSTD_getErrorName(r);
        return std::size_t{0};
    }
    // 0 once a frame is complete; a call with no input after that asks for
    // the next frame's header, which does not reopen this one.
    if (r == 0) frame_done_ = true;
    else if (in_.pos > in_before) frame_done_ = false;
    const std::size_t made = out.pos - filled_;
    filled_ = out.pos;
    return made + (in_.pos - in_before) + (input_eof_ ? 0 : 1);  // 0: no progress possible
}

// Makes `need` bytes available from pos_ unless the body ends first (or the
// zstd stream is corrupt: zstd_error_). The buffer grows only as bytes arrive
// and never past `need`, which the caller has bounded.
Result<std::size_t> DecoderV1::available(std::size_t need) {
    if (filled_ - pos_ >= need) return filled_ - pos_;
    std::memmove(buf_.data(), buf_.data() + pos_, filled_ - pos_);
    filled_ -= pos_;
    pos_ = 0;
    while (filled_ < need && zstd_error_.empty()) {
        if (filled_ == buf_.capacity() && !buf_.reserve_exact(std::min(need, buf_.capacity() * 2), filled_))
            return Error(ENOMEM, fmt::format("{}: cannot allocate {} bytes for {}", named(), need, where()));
        auto progress = dctx_ ? fill_zstd() : fill_raw();
        if (!progress) return std::move(progress).error();
        if (*progress == 0) break;
    }
    return filled_ - pos_;
}

void DecoderV1::stop_damaged(DamageKind kind, std::string_view what) {
    const std::uint64_t first = covered_ == 0 ? 0 : covered_ + 1;
    const std::string lost = lost_text(first, 0);
    report(kind, file_offset(), file_bytes > file_offset() ? file_bytes - file_offset() : 0, first, 0, 0,
           fmt::format("{}: {}; {}{}version 1 recordings cannot resynchronise, so the rest of the file is not "
                       "replayed", where(), what, lost, lost.empty() ? "" : "; "));
    finish(ReadStatus::Truncated,
           fmt::format("{} cannot be read past {} ({}): no end record", named(), where(), what));
}

std::string DecoderV1::body_problem(const RecordHeaderV1& head) const {
    const std::uint64_t size = head.body_size;
    switch (static_cast<RecordKind>(head.kind)) {
    case RecordKind::Gap:
        if (size != detail::kGapBodyV1) return fmt::format("a gap record of {} bytes", size);
        break;
    case RecordKind::ExpiredPayload:
        if (size != sizeof(EventDescriptor)) return fmt::format("an expired-payload record of {} bytes", size);
        break;
    case RecordKind::End:
        if (size != detail::kEndBodyV1) return fmt::format("an end record of {} bytes", size);
        break;
    case RecordKind::Event:
        if (size < sizeof(EventDescriptor) || size - sizeof(EventDescriptor) > UINT32_MAX)
            return fmt::format("an event record of {} bytes", size);
        break;
    case RecordKind::Damage: break;  // unknown to v1: skipped by size
    }
    // What the file can hold: raw, the bytes left; compressed, a fixed bound.
    if (dctx_ && size > detail::kMaxCompressedBodyV1)
        return fmt::format("a record of {} bytes, over the {} bytes this reader decompresses for one version 1 "
                           "record", size, detail::kMaxCompressedBodyV1);
    const std::uint64_t left = file_bytes - std::min(file_bytes, file_offset() + sizeof head);
    if (!dctx_ && size > left)
        return fmt::format("a record of {} bytes where the file holds {} more", size, left);
    return {};
}

Result<bool> DecoderV1::produce(Record& record) {
    if (end_seen_) {
        if (auto s = after_end(); !s) return std::move(s).error();
        return false;
    }
    for (;;) {
        auto have = available(sizeof(RecordHeaderV1));
        if (!have) return std::move(have).error();
        if (*have < sizeof(RecordHeaderV1) && !zstd_error_.empty()) {
            stop_damaged(DamageKind::Undecodable, "corrupt compressed data: " + zstd_error_);
            return false;
        }
        if (*have == 0) {
            finish(ReadStatus::Truncated,
                   fmt::format("{} ends without an end record after {} complete records (the recorder did not "
                               "finish: replayed up to the last complete record)", named(), records_));
            return false;
        }
        if (*have < sizeof(RecordHeaderV1)) {
            stop_damaged(DamageKind::Truncated, "the file ends inside its record header");
            return false;
        }
        RecordHeaderV1 head;
        std::memcpy(&head, buf_.data() + pos_, sizeof head);
        if (std::string why = body_problem(head); !why.empty()) {
            stop_damaged(DamageKind::Undecodable, "impossible size: " + why);
            return false;
        }
        const std::size_t total = sizeof head + static_cast<std::size_t>(head.body_size);
        have = available(total);
        if (!have) return std::move(have).error();
        if (*have < total) {
            stop_damaged(zstd_error_.empty() ? DamageKind::Truncated : DamageKind::Undecodable,
                         zstd_error_.empty() ? "the file ends inside it" : "corrupt compressed data: " + zstd_error_);
            return false;
        }
        const std::byte* body = buf_.data() + pos_ + sizeof head;
        record = Record{};
        record.kind = static_cast<RecordKind>(head.kind);
        switch (record.kind) {
        case RecordKind::Event:
        case RecordKind::ExpiredPayload:
            std::memcpy(&record.event, body, sizeof record.event);
            if (record.kind == RecordKind::Event) {
                if (head.body_size - sizeof(EventDescriptor) != record.event.payload_size) {
                    stop_damaged(DamageKind::Undecodable,
                                 fmt::format("event seqno {} holds {} payload bytes but its descriptor says {}",
                                             record.event.seqno, head.body_size - sizeof(EventDescriptor),
                                             record.event.payload_size));
                    return false;
                }
                record.payload = {body + sizeof(EventDescriptor), record.event.payload_size};
            }
            covered_ = std::max(covered_, record.event.seqno);
            break;
        case RecordKind::Gap:
            std::memcpy(&record.gap, body, detail::kGapBodyV1);
            record.gap.reason = GapReason::Unrecorded;
            if (record.gap.lost_count == 0 || record.gap.first_lost_seqno > UINT64_MAX - (record.gap.lost_count - 1)) {
                stop_damaged(DamageKind::Undecodable, fmt::format("a gap of {} from seqno {}", record.gap.lost_count,
                                                                  record.gap.first_lost_seqno));
                return false;
            }
            covered_ = std::max(covered_, record.gap.first_lost_seqno + (record.gap.lost_count - 1));
            break;
        case RecordKind::End:
            std::memcpy(&record.end, body, detail::kEndBodyV1);
            end_seen_ = true;
            end_record_ = record.end;
            break;
        case RecordKind::Damage: break;
        }
        pos_ += total;
        consumed_ += total;
        ++records_;
        const bool known = record.kind == RecordKind::Event || record.kind == RecordKind::ExpiredPayload ||
                           record.kind == RecordKind::Gap || record.kind == RecordKind::End;
        if (known) return true;
        // An unknown kind (a Damage value included): skipped by size.
    }
}

Status DecoderV1::after_end() {
    std::vector<std::string> problems;
    const std::uint64_t end_offset = file_offset();
    auto have = available(1);
    if (!have) return std::move(have).error();
    if (*have > 0) {
        report(DamageKind::TrailingData, end_offset, 0, 0, 0, 0,
               fmt::format("body bytes follow the end record (at body offset {}); not replayed", consumed_));
        problems.push_back("records or bytes after the end record");
    } else if (!zstd_error_.empty()) {
        report(DamageKind::TrailingData, end_offset, file_bytes - std::min(file_bytes, end_offset), 0, 0, 0,
               fmt::format("after the end record (file offset about {}): corrupt compressed data: {}", end_offset,
                           zstd_error_));
        problems.push_back("corrupt compressed data after the end record");
    } else if (dctx_ && !frame_done_) {
        report(DamageKind::Truncated, end_offset, 0, 0, 0, 0,
               "the zstd frame is cut short after the end record (its end and checksum are missing)");
        problems.push_back("its zstd frame is cut short");
    } else if (dctx_ && (in_.size - in_.pos) + (file_bytes - std::min(file_bytes, read_pos_)) > 0) {
        report(DamageKind::TrailingData, file_offset(), file_bytes - file_offset(), 0, 0, 0,
               fmt::format("{} bytes follow the zstd frame (from offset {}); not replayed",
                           file_bytes - file_offset(), file_offset()));
        problems.push_back("bytes after the zstd frame");
    }
    check_totals(problems);
    if (problems.empty()) {
        finish(ReadStatus::CleanEnd, {});
        return {};
    }
    std::string why = named() + " ends with an end record, but:";
    for (const std::string& p : problems) why += " " + p + ";";
    why.pop_back();
    finish(ReadStatus::DamagedEnd, std::move(why));
    return {};
}

void DecoderV1::check_totals(std::vector<std::string>& problems) {
    if (totals.events == end_record_.events && totals.expired == end_record_.expired && totals.lost == end_record_.lost) return;
    report(DamageKind::TotalsMismatch, file_offset(), 0, 0, 0, 0,
           fmt::format("the end record counts {} events, {} expired payloads and {} lost seqnos; the replay found "
                       "{} events, {} expired payloads and {} lost seqnos",
                       end_record_.events, end_record_.expired, end_record_.lost, totals.events, totals.expired, totals.lost));
    problems.push_back(fmt::format("its totals ({} events) disagree with the replay ({} events)", end_record_.events,
                                   totals.events));
}

}  // namespace

std::unique_ptr<RecordingReader::Decoder> make_decoder_v1() { return std::make_unique<DecoderV1>(); }

}  // namespace evring
