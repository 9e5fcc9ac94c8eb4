// Fuzz target: reading a recording file, versions 1 and 2. The input is the
// file. It is read twice: as it is, and with every checksum of a v2 file
// recomputed ("resealed"), so that mutations reach the block decoder and the
// record checks behind the CRCs instead of stopping at them.
//
// What must hold: open fails with a message, or next() returns records and
// then an end status; every Event's payload span has payload_size readable
// bytes; every Damage record and every error names the file; a notice is
// empty exactly after CleanEnd; the reader's totals count what it returned;
// and the replay ends (no more records than the file could describe).
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "util/crc32c.hpp"
#include "recording/recording_block.hpp"
#include "recording/recording.hpp"
#include "exercise.hpp"

namespace {

const std::string& scratch_path() {
    static const std::string path = "/dev/shm/evring-fuzz-recording-" + std::to_string(::getpid());
    return path;
}

void write_input(const std::uint8_t* data, std::size_t size) {
    const int fd = ::open(scratch_path().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) __builtin_trap();
    if (size > 0 && ::write(fd, data, size) != static_cast<ssize_t>(size)) __builtin_trap();
    ::close(fd);
}

// Recomputes the file header's and every chained block's checksums.
void reseal(std::vector<std::uint8_t>& file) {
    using namespace evring;
    if (file.size() < sizeof(RecordingFileHeader)) return;
    RecordingFileHeader fh;
    std::memcpy(&fh, file.data(), sizeof fh);
    if (fh.version != kRecordingVersion && fh.version != kRecordingVersion2) return;
    fh.header_crc = detail::file_header_crc(fh);
    std::memcpy(file.data(), &fh, sizeof fh);
    for (std::size_t at = sizeof fh; at + sizeof(RecordingBlockHeader) <= file.size();) {
        RecordingBlockHeader h;
        std::memcpy(&h, file.data() + at, sizeof h);
        if (h.magic != kBlockMagic) return;
        const std::size_t body = at + sizeof h;
        if (h.stored_size <= file.size() - body) h.stored_crc = detail::crc32c(file.data() + body, h.stored_size);
        h.header_crc = detail::block_header_crc(h);
        std::memcpy(file.data() + at, &h, sizeof h);
        at = body + h.stored_size;
    }
}

// With EVRING_FUZZ_TALLY set, which damage kinds and end statuses each
// input reached (to see what the corpus covers).
void tally_outcome(const char* what) {
    static const bool enabled = std::getenv("EVRING_FUZZ_TALLY") != nullptr;
    if (enabled) std::fprintf(stderr, "evring-fuzz recording: reached: %s\n", what);
}

bool names_the_file(const std::string& message) {
    return message.find(scratch_path()) != std::string::npos;
}

// The index (recording_index.hpp) of a hostile file: every query (positions,
// spans, ids, the last N events, a ring set member's seqnos) answers
// without crashing or allocating what the file claims, a lie names the file,
// and a jump to what the index names (when its block is really there) replays
// to an end.
void query_index(std::size_t size) {
    using evring::IndexQuery;
    const std::uint32_t key = evring::span_index_key("block");
    static constexpr std::uint8_t kId[8] = {1, 0, 0xe4, 0xe1, 0xc1, 0, 0, 0};
    for (const IndexQuery& query :
         {IndexQuery::seqno(1), IndexQuery::seqno(40), IndexQuery::seqno(1ull << 62), IndexQuery::time(0),
          IndexQuery::time(~0ull), IndexQuery::span(key, 1030), IndexQuery::span_latest(key), IndexQuery::back(1),
          IndexQuery::back(1000), IndexQuery::back(~0ull), IndexQuery::span_id(key, kId, true),
          IndexQuery::span_id(key, {kId, 1}, false, 40), IndexQuery::member_seqno(0, 1),
          IndexQuery::member_seqno(1, 40), IndexQuery::member_seqno(7, 1ull << 62)}) {
        auto reader = evring::RecordingReader::open(scratch_path());
        if (!reader) return;
        auto answer = reader->find(query);
        if (!answer) {
            EVRING_FUZZ_CHECK(names_the_file(answer.error().message()));
            continue;
        }
        if (answer->outcome == evring::IndexOutcome::Lies) {
            EVRING_FUZZ_CHECK(names_the_file(answer->why));
            tally_outcome("index lies");
        }
        if (answer->outcome != evring::IndexOutcome::Found && answer->outcome != evring::IndexOutcome::Tail) continue;
        tally_outcome(answer->outcome == evring::IndexOutcome::Found ? "index found" : "index tail");
        if (answer->outcome == evring::IndexOutcome::Found && answer->seqno != 0) {
            // The event a span mark names, read on its own (checked, bounded like a replay).
            evring::Record record;
            std::vector<std::byte> payload;
            auto read = reader->event_at(answer->block, answer->seqno, record, payload);
            if (!read) EVRING_FUZZ_CHECK(names_the_file(read.error().message()));
            else if (*read) EVRING_FUZZ_CHECK(record.event.seqno == answer->seqno && payload.size() == record.payload.size());
            // MEMBER:SEQNO: the event read is that member's, below the seqno asked for.
            if (read && *read && query.kind == IndexQuery::Kind::MemberSeqno)
                EVRING_FUZZ_CHECK(record.event.reserved == query.key && record.event.seqno < query.value);
            // A span mark in a ring set recording: each candidate member's event, as span_seek reads them.
            for (const evring::IndexedBlock& candidate : answer->candidates) {
                read = reader->event_at(candidate, answer->seqno, record, payload);
                if (!read) EVRING_FUZZ_CHECK(names_the_file(read.error().message()));
                else if (*read) EVRING_FUZZ_CHECK(record.event.seqno == answer->seqno && record.event.reserved == candidate.member);
            }
        }
        auto jumped = reader->jump(answer->block);
        if (!jumped || !*jumped) continue;
        evring::Record record;
        const std::uint64_t max_records = 64 * (size + 1024) * 1024;
        for (std::uint64_t i = 0;; ++i) {
            EVRING_FUZZ_CHECK(i < max_records);
            auto status = reader->next(record);
            if (!status || *status != evring::ReadStatus::Record) break;
        }
    }
}

void read_recording(const std::uint8_t* data, std::size_t size) {
    write_input(data, size);
    query_index(size);
    auto reader = evring::RecordingReader::open(scratch_path());
    if (!reader) {
        EVRING_FUZZ_CHECK(names_the_file(reader.error().message()));
        evring::fuzz::tally("recording", &reader.error().message());
        return;
    }
    evring::fuzz::tally("recording", nullptr);
    evring::ReplayTotals seen;
    evring::Record record;
    // Far above the records any input of this size can describe (a block of
    // 67 stored bytes decodes to at most 16 MiB): a runaway loop traps.
    const std::uint64_t max_records = 64 * (size + 1024) * 1024;
    for (std::uint64_t i = 0;; ++i) {
        EVRING_FUZZ_CHECK(i < max_records);
        auto status = reader->next(record);
        if (!status) {
            EVRING_FUZZ_CHECK(names_the_file(status.error().message()));
            return;
        }
        if (*status != evring::ReadStatus::Record) {
            EVRING_FUZZ_CHECK(reader->notice().empty() == (*status == evring::ReadStatus::CleanEnd));
            const evring::ReplayTotals& t = reader->totals();
            EVRING_FUZZ_CHECK(t.events == seen.events && t.expired == seen.expired && t.gaps == seen.gaps &&
                              t.lost == seen.lost && t.damage_reports == seen.damage_reports);
            tally_outcome(*status == evring::ReadStatus::CleanEnd   ? "clean end"
                          : *status == evring::ReadStatus::Truncated ? "truncated end"
                                                                     : "damaged end");
            auto again = reader->next(record);  // the end repeats
            EVRING_FUZZ_CHECK(again && *again == *status);
            return;
        }
        switch (record.kind) {
        case evring::RecordKind::Event: {
            EVRING_FUZZ_CHECK(record.payload.size() == record.event.payload_size);
            volatile std::uint8_t sum = 0;
            for (std::byte b : record.payload) sum = static_cast<std::uint8_t>(sum + static_cast<std::uint8_t>(b));
            ++seen.events;
            break;
        }
        case evring::RecordKind::ExpiredPayload: ++seen.expired; break;
        case evring::RecordKind::Gap:
            EVRING_FUZZ_CHECK(record.gap.lost_count > 0);
            ++seen.gaps;
            seen.lost += record.gap.lost_count;
            break;
        case evring::RecordKind::Damage:
            EVRING_FUZZ_CHECK(names_the_file(record.damage.message));
            tally_outcome(std::string(evring::describe(record.damage.kind)).c_str());
            ++seen.damage_reports;
            break;
        case evring::RecordKind::End: break;
        default: __builtin_trap();  // unknown kinds are never handed out
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    read_recording(data, size);
    std::vector<std::uint8_t> resealed(data, data + size);
    reseal(resealed);
    if (resealed != std::vector<std::uint8_t>(data, data + size)) read_recording(resealed.data(), resealed.size());
    ::unlink(scratch_path().c_str());
    return 0;
}
