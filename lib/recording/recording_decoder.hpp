// Private to lib/: what the version 1 and version 2 recording decoders share.
//
// A decoder turns the body of one file into Records. It never throws damage
// at its caller: damaged parts become Damage records queued in `pending` and
// returned in file order, and the end of the replay is a status with a
// notice. Every produce() call consumes file bytes, queues a report or sets
// the final status, so next() always terminates.
//
// Thread safety: one thread at a time (the RecordingReader's).
#pragma once

#include <unistd.h>

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "recording/recording_index.hpp"
#include "recording/recording_reader.hpp"

namespace evring {

struct RecordingReader::Decoder {
    std::string path;
    int fd = -1;
    std::uint64_t file_bytes = 0;
    RecordingFileHeader header{};
    bool header_trusted = true;
    bool follow = false;   // RecordingReader::follow
    bool stalled = false;  // follow: produce() met the end of a file being written
    std::vector<std::byte> schema;
    ReplayTotals totals;
    std::string notice;

    Decoder() = default;
    Decoder(const Decoder&) = delete;
    Decoder& operator=(const Decoder&) = delete;
    virtual ~Decoder() {
        if (fd >= 0) ::close(fd);
    }

    // Called once by open() after the fields above are set: checks what the
    // decoder needs before the first record (a v2 schema block, say).
    virtual Status start() { return {}; }
    Result<ReadStatus> next(Record& record);
    // The index (recording_index.hpp); files without one answer NoIndex.
    virtual Result<IndexAnswer> find(const IndexQuery&) {
        IndexAnswer answer;
        answer.why = named() + " is a version 1 recording: it has no index";
        return answer;
    }
    virtual Result<bool> jump(const IndexedBlock&, std::string& why) {
        why = "a version 1 recording has no blocks";
        return false;
    }

protected:
    // Puts the next record in `record` (true), or makes progress without one
    // (false): reports queued, bytes consumed or the final status set.
    virtual Result<bool> produce(Record& record) = 0;

    // "recording 'PATH'"
    std::string named() const;
    // Queues a Damage record; `message` follows "recording 'PATH': ".
    void report(DamageKind kind, std::uint64_t offset, std::uint64_t bytes, std::uint64_t first_lost,
                std::uint64_t last_lost, std::uint64_t lost_records, std::string_view message);
    void finish(ReadStatus status, std::string why);
    bool finished() const { return final_.has_value(); }
    // Re-reads the file size (a recording may still be growing).
    Status refresh_size();
    // Damage reports that lost records, since the file started.
    bool lost_records_to_damage() const { return lost_records_to_damage_; }

private:
    void count(const Record& record);

    std::deque<Record> pending_;
    std::optional<ReadStatus> final_;
    bool lost_records_to_damage_ = false;
};

std::unique_ptr<RecordingReader::Decoder> make_decoder_v1();
std::unique_ptr<RecordingReader::Decoder> make_decoder_v2();

// "seqno 5..9 lost", "seqno 5 and after lost", "" (nothing known).
std::string lost_text(std::uint64_t first_lost, std::uint64_t last_lost);

}  // namespace evring
