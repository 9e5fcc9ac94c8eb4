#include "recording/recording_records.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace evring::detail {
namespace {

struct SeqnoSpan {
    bool any = false;
    std::uint64_t first = 0, last = 0;
    void add(std::uint64_t a, std::uint64_t b) {
        first = any ? std::min(first, a) : a;
        last = any ? std::max(last, b) : b;
        any = true;
    }
};

// Why one record's body is not valid for its kind, or "".
std::string body_problem(std::uint32_t kind, const std::byte* body, std::uint32_t size, SeqnoSpan& seqnos) {
    switch (static_cast<RecordKind>(kind)) {
    case RecordKind::Event:
    case RecordKind::ExpiredPayload: {
        if (size < sizeof(EventDescriptor)) return fmt::format("event record of {} bytes", size);
        EventDescriptor event;
        std::memcpy(&event, body, sizeof event);
        const std::uint64_t payload = size - sizeof event;
        if (static_cast<RecordKind>(kind) == RecordKind::ExpiredPayload && payload != 0)
            return fmt::format("expired-payload record of {} bytes", size);
        if (static_cast<RecordKind>(kind) == RecordKind::Event && payload != event.payload_size)
            return fmt::format("event seqno {} holds {} payload bytes but its descriptor says {}", event.seqno,
                               payload, event.payload_size);
        seqnos.add(event.seqno, event.seqno);
        return {};
    }
    case RecordKind::Gap: {
        if (size != sizeof(GapRecord)) return fmt::format("gap record of {} bytes", size);
        GapRecord gap;
        std::memcpy(&gap, body, sizeof gap);
        if (gap.lost_count == 0 || gap.first_lost_seqno > UINT64_MAX - (gap.lost_count - 1))
            return fmt::format("gap of {} from seqno {}", gap.lost_count, gap.first_lost_seqno);
        seqnos.add(gap.first_lost_seqno, gap.first_lost_seqno + (gap.lost_count - 1));
        return {};
    }
    case RecordKind::End:
        return size == sizeof(EndRecord) ? std::string() : fmt::format("end record of {} bytes", size);
    case RecordKind::Damage: return "a stored record of the reader-only kind Damage";
    }
    return {};  // an unknown kind: skipped by size
}

}  // namespace

std::string check_block_records(std::span<const std::byte> content, const RecordingBlockHeader& header) {
    SeqnoSpan seqnos;
    std::uint64_t count = 0;
    bool has_end = false;
    std::size_t pos = 0;
    while (pos < content.size()) {
        if (content.size() - pos < sizeof(RecordHeader))
            return fmt::format("record {} at content offset {} is cut short", count + 1, pos);
        RecordHeader head;
        std::memcpy(&head, content.data() + pos, sizeof head);
        if (head.body_size > content.size() - pos - sizeof head)
            return fmt::format("record {} at content offset {} claims {} bytes, {} remain", count + 1, pos,
                               head.body_size, content.size() - pos - sizeof head);
        if (has_end && head.kind == static_cast<std::uint32_t>(RecordKind::End))
            return fmt::format("record {} at content offset {} is a second end record", count + 1, pos);
        const std::string problem = body_problem(head.kind, content.data() + pos + sizeof head, head.body_size, seqnos);
        if (!problem.empty())
            return fmt::format("record {} at content offset {}: {}", count + 1, pos, problem);
        has_end = has_end || head.kind == static_cast<std::uint32_t>(RecordKind::End);
        pos += sizeof head + head.body_size;
        ++count;
    }
    if (count != header.record_count)
        return fmt::format("holds {} records, its header says {}", count, header.record_count);
    if (seqnos.first != header.first_seqno || seqnos.last != header.last_seqno)
        return fmt::format("records span seqno {}..{}, its header says {}..{}", seqnos.first, seqnos.last,
                           header.first_seqno, header.last_seqno);
    if (has_end != ((header.flags & kBlockHoldsEnd) != 0))
        return has_end ? "holds an end record its header does not announce"
                       : "its header announces an end record it does not hold";
    return {};
}

std::size_t parse_record(std::span<const std::byte> content, std::size_t pos, Record& record) {
    RecordHeader head;
    std::memcpy(&head, content.data() + pos, sizeof head);
    const std::byte* body = content.data() + pos + sizeof head;
    record.kind = static_cast<RecordKind>(head.kind);
    record.payload = {};
    switch (record.kind) {
    case RecordKind::Event:
        std::memcpy(&record.event, body, sizeof record.event);
        record.payload = {body + sizeof record.event, record.event.payload_size};
        break;
    case RecordKind::ExpiredPayload: std::memcpy(&record.event, body, sizeof record.event); break;
    case RecordKind::Gap: std::memcpy(&record.gap, body, sizeof record.gap); break;
    case RecordKind::End: std::memcpy(&record.end, body, sizeof record.end); break;
    case RecordKind::Damage: break;
    }
    return pos + sizeof head + head.body_size;
}

}  // namespace evring::detail
