// RecordingSource: a recording, or a rotated series of them, as an event
// source (recording_source.hpp).
#include "source/recording_source.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "recording/recording_writer.hpp"
#include "source/source_identity.hpp"

namespace evring {

std::string series_base(const std::string& path, std::uint32_t file_index) {
    const std::string suffix = "." + std::to_string(file_index);
    const bool rotated = file_index > 0 && path.size() > suffix.size() &&
                         path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
    return rotated ? path.substr(0, path.size() - suffix.size()) : path;
}

std::string next_recording_path(const std::string& path, std::uint32_t file_index) {
    return rotated_path(series_base(path, file_index), file_index + 1);
}

RecordingSource::RecordingSource(RecordingReader reader, bool series, bool follow)
    : reader_(std::move(reader)), series_(series), follow_(follow) {}
RecordingSource::~RecordingSource() = default;

Result<std::unique_ptr<RecordingSource>> RecordingSource::open(const std::string& path, std::string location,
                                                               bool series, bool follow) {
    auto reader = RecordingReader::open(path, follow);
    if (!reader) return std::move(reader).error();
    std::unique_ptr<RecordingSource> source(new RecordingSource(std::move(reader).value(), series, follow));
    const RecordingFileHeader& h = source->reader_->header();
    SourceIdentity& id = source->identity_;
    id.kind = SourceKind::Recording;
    id.location = std::move(location);
    id.path = path;
    id.content_type = h.content_type;
    id.schema_hash = h.schema_hash;
    id.ring_size = h.ring_size;
    id.members = (h.flags & kRecordingRingSet) != 0;
    detail::file_identity(path, id);
    source->series_id_ = h.series_id;
    source->file_index_ = h.file_index;
    source->base_ = series_base(path, h.file_index);
    // The series id is the same in every file of a rotated recording; version
    // 1 files have none: their file and start time stand in.
    id.instance = h.series_id != 0 ? h.series_id : detail::mix64(id.instance, h.start_epoch_nanos);
    const auto schema = source->reader_->schema();
    source->first_schema_.assign(schema.begin(), schema.end());
    return source;
}

Status RecordingSource::rewind() {
    if (untouched_) return {};
    auto reader = RecordingReader::open(identity_.path, follow_);
    if (!reader) return std::move(reader).error();
    if (series_id_ != 0 && reader->header().series_id != series_id_)
        return Error(ESTALE, fmt::format("recording '{}' was replaced since it was opened (series {:016x}, not "
                                         "{:016x}): open it again to read it",
                                         identity_.path, reader->header().series_id, series_id_));
    const std::uint32_t index = reader->header().file_index;  // before `reader` is moved from
    adopt_next_file(std::move(*reader), index);
    files_ = 1;
    accounted_ = 0;
    bridge_.clear();
    replay_record_ = false;
    ended_.clear();
    skip_events_ = 0;
    min_seqno_ = 0;
    min_nanos_ = 0;
    started_ = true;
    start_member_ = Position::kAnyMember;
    member_seqno_ = 0;
    member_after_.clear();
    index_ = 0;
    return {};
}

void RecordingSource::wait(std::chrono::nanoseconds timeout) {
    if (!follow_) return;
    // A file has no doorbell: look again after a short sleep.
    std::this_thread::sleep_for(std::min<std::chrono::nanoseconds>(timeout, std::chrono::milliseconds(50)));
}

std::string RecordingSource::end_text() const {
    if (!ended_.empty()) return ended_;
    if (status_ == ReadStatus::Truncated) return "end of the truncated recording";
    if (status_ == ReadStatus::DamagedEnd) return "end of the recording (damaged at its end)";
    return "end of the recording";
}

SourceStep RecordingSource::read(SourceItem& item, PayloadRead payload) {
    untouched_ = false;
    for (;;) {
        if (phase_ == Phase::Done) return SourceStep::End;
        if (phase_ == Phase::FileEnded) {
            // Following: the file it continues in is not created yet.
            if (follow_ && series_ && continued_ &&
                ::access(next_recording_path(reader_->path(), file_index_).c_str(), F_OK) != 0)
                return SourceStep::NotReady;
            // A cut file lost its end record: whether the series goes on is
            // told by the files after it.
            if (series_ && (continued_ || status_ == ReadStatus::Truncated)) return next_file(item);
            phase_ = Phase::Done;
            return SourceStep::End;
        }
        Result<ReadStatus> status = ReadStatus::Record;
        if (replay_record_)
            replay_record_ = false;  // the record a bridge gap went before
        else
            status = reader_->next(record_);
        if (!status) return fail(std::move(status).error());
        if (*status == ReadStatus::NotYet) return SourceStep::NotReady;  // follow_: being written
        if (*status == ReadStatus::Record) {
            bool handed_out = false;
            const SourceStep step = from_record(item, payload, handed_out);
            if (handed_out) return step;
            continue;
        }
        status_ = *status;
        phase_ = Phase::FileEnded;
        if (*status == ReadStatus::CleanEnd) continue;
        damaged_ = true;
        notice_ = reader_->notice();
        item.notice = notice_;
        return SourceStep::Notice;
    }
}

// The record last read is still held: its payload, when it is the event's.
SourceStep RecordingSource::load_payload(SourceEvent& event) {
    const bool same = record_.kind == RecordKind::Event && record_.event.seqno == event.descriptor.seqno;
    event.payload_state = same ? PayloadState::Ok : PayloadState::Expired;
    event.payload = same ? record_.payload : std::span<const std::byte>{};
    return SourceStep::Event;
}

SourceStep RecordingSource::from_record(SourceItem& item, PayloadRead payload, bool& handed_out) {
    handed_out = false;
    switch (record_.kind) {
    case RecordKind::Event:
    case RecordKind::ExpiredPayload: {
        if (bridge(record_.event.seqno, item)) return handed_out = true, SourceStep::Gap;
        account(record_.event.seqno);
        if (before_start(record_.event)) return SourceStep::Event;
        SourceEvent& event = item.event;
        event.descriptor = record_.event;
        event.payload = {};
        // A ring set recording keeps the member in the descriptor's reserved field.
        event.member = identity_.members ? record_.event.reserved : 0;
        event.descriptor.reserved = 0;
        if (record_.kind == RecordKind::ExpiredPayload) {
            event.payload_state = PayloadState::Expired;
        } else if (payload == PayloadRead::Copy) {
            event.payload_state = PayloadState::Ok;
            event.payload = record_.payload;
        } else {
            event.payload_state = PayloadState::NotRead;
        }
        handed_out = true;
        return SourceStep::Event;
    }
    case RecordKind::Gap: {
        const GapRecord& g = record_.gap;
        if (bridge(g.first_lost_seqno, item)) return handed_out = true, SourceStep::Gap;
        account(g.first_lost_seqno + (g.lost_count - 1));
        // Before the start: not the reader's concern.
        if (skip_events_ > index_ || !started_ || g.first_lost_seqno + (g.lost_count - 1) < min_seqno_ ||
            consumed(g.reserved, g.first_lost_seqno + (g.lost_count - 1)))
            return SourceStep::Gap;
        item.gap = SourceGap{g.first_lost_seqno, g.lost_count, g.reason, {}};
        item.gap.member = identity_.members ? g.reserved : 0;
        handed_out = true;
        return SourceStep::Gap;
    }
    case RecordKind::Damage:
        if (record_.damage.first_lost_seqno != 0 && bridge(record_.damage.first_lost_seqno, item))
            return handed_out = true, SourceStep::Gap;
        if (record_.damage.last_lost_seqno >= record_.damage.first_lost_seqno)
            account(record_.damage.last_lost_seqno);
        handed_out = true;
        return damage(item);
    case RecordKind::End:
        continued_ = (record_.end.flags & kEndContinued) != 0;
        return SourceStep::Notice;
    case RecordKind::IndexRef: break;  // the reader never hands these out
    }
    return SourceStep::Notice;  // a kind from a newer reader: passed over
}

SourceStep RecordingSource::damage(SourceItem& item) {
    const DamageReport& d = record_.damage;
    ++counters_.damage_reports;
    counters_.records_lost_to_damage += d.lost_records;
    if (d.first_lost_seqno != 0 && d.last_lost_seqno >= d.first_lost_seqno) {
        item.gap = SourceGap{d.first_lost_seqno, d.last_lost_seqno - d.first_lost_seqno + 1, GapReason::LostToDamage,
                             d.message};
        return SourceStep::Gap;
    }
    item.notice = d.message;
    return SourceStep::Notice;
}

bool RecordingSource::before_start(const EventDescriptor& event) {
    if (index_++ < skip_events_ || event.seqno < min_seqno_) return true;
    if (consumed(event.reserved, event.seqno)) return true;  // of every member, not only until started
    if (!started_ && event.record_epoch_nanos < min_nanos_) return true;
    // MEMBER:SEQNO in a ring set recording: from that member's event on (the descriptor's reserved field).
    if (!started_ && start_member_ != Position::kAnyMember &&
        (event.reserved != start_member_ || event.seqno < member_seqno_))
        return true;
    started_ = true;
    return false;
}

}  // namespace evring
