#include "recording/recording_decoder.hpp"

#include <fmt/format.h>

#include "recording/recording_file.hpp"

namespace evring {

std::string lost_text(std::uint64_t first_lost, std::uint64_t last_lost) {
    if (first_lost == 0) return {};
    if (last_lost == 0) return fmt::format("seqno {} and after lost", first_lost);
    if (last_lost == first_lost) return fmt::format("seqno {} lost", first_lost);
    return fmt::format("seqno {}..{} lost", first_lost, last_lost);
}

std::string RecordingReader::Decoder::named() const { return "recording '" + path + "'"; }

void RecordingReader::Decoder::report(DamageKind kind, std::uint64_t offset, std::uint64_t bytes,
                                      std::uint64_t first_lost, std::uint64_t last_lost,
                                      std::uint64_t lost_records, std::string_view message) {
    Record record;
    record.kind = RecordKind::Damage;
    record.damage = DamageReport{kind, offset, bytes, first_lost, last_lost, lost_records,
                                 fmt::format("{}: {}", named(), message)};
    ++totals.damage_reports;
    totals.damaged_bytes += bytes;
    totals.lost_to_damage += lost_records;
    if (kind != DamageKind::BadFileHeader && kind != DamageKind::BadSchema && kind != DamageKind::MisplacedBlock &&
        kind != DamageKind::TrailingData && kind != DamageKind::TotalsMismatch)
        lost_records_to_damage_ = true;
    pending_.push_back(std::move(record));
}

void RecordingReader::Decoder::finish(ReadStatus status, std::string why) {
    final_ = status;
    notice = std::move(why);
}

Status RecordingReader::Decoder::refresh_size() {
    auto size = detail::file_size(fd, named());
    if (!size) return std::move(size).error();
    file_bytes = *size;
    return {};
}

void RecordingReader::Decoder::count(const Record& record) {
    switch (record.kind) {
    case RecordKind::Event: ++totals.events; break;
    case RecordKind::ExpiredPayload: ++totals.expired; break;
    case RecordKind::Gap:
        ++totals.gaps;
        totals.lost += record.gap.lost_count;
        break;
    case RecordKind::End:
    case RecordKind::Damage: break;
    }
}

Result<ReadStatus> RecordingReader::Decoder::next(Record& record) {
    for (;;) {
        if (!pending_.empty()) {
            record = std::move(pending_.front());
            pending_.pop_front();
            return ReadStatus::Record;
        }
        if (final_) return *final_;
        auto produced = produce(record);
        if (!produced) return std::move(produced).error();
        if (*produced) {
            count(record);
            return ReadStatus::Record;
        }
    }
}

}  // namespace evring
