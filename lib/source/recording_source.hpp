// lib/source/recording_source.hpp — a recording (or a rotated series) as an event source.
//
// The EventSource (event_source.hpp) over RecordingReader
// (recording_reader.hpp). open_source (source_open.hpp) makes these.
//
// Contract, beyond event_source.hpp:
// - A rotated recording FILE, FILE.1, FILE.2, ... (recording_writer.hpp) is
//   replayed as one stream: when a file's end record says it continues, the
//   next file is opened (it must belong to the same series) and a Notice says
//   so. A file that is missing, unreadable, of another series or cut short
//   (no end record) does not hide the files after it: the replay goes on
//   with the next intact file of the series found in the directory, one
//   Notice names what was skipped, and the sequence numbers lost between
//   the last one accounted for and the first one of that file come as one
//   LostToDamage Gap naming the file. With no intact file after it, a
//   missing or foreign continuation is damage: a Notice, then End; a cut
//   file is the end (the recorder was killed). With `series` false only the
//   named file is read.
// - Gap records come back as Gaps with their recorded reason. A damaged part
//   whose lost sequence numbers are known is a LostToDamage Gap whose detail
//   is the reader's report (naming the file, the offset and the reason); any
//   other damage report, a truncated end and an end that does not check out
//   are Notices. damaged() is then true: everything readable was still
//   handed out.
// - An ExpiredPayload record is an Event whose payload state is Expired.
// - Positions: oldest is the first event; a sequence number starts at the
//   first event at or past it (a notice when that is not the sequence
//   number asked for because it is older than the first event; an ERANGE
//   error past the newest one, as for a snapshot); an absolute time starts
//   at the first event stamped at or after it and shows everything after
//   that. Gaps before the start are not handed out; damage always is.
//   MEMBER:SEQNO in a ring set recording starts the merged stream at that
//   member's event (or its first one past it), through the per-member rows
//   of its index (seek_member; read from the start, said once, without).
//   Position::after_members in a ring set recording (a named reader
//   resuming) reads from the start and passes over each member's events
//   and gaps up to its `last`: a member's seqnos rise in the file, but the
//   members interleave, so no one block is where every member resumes.
// - A version 3 file's index (recording_index.hpp) takes sequence numbers
//   and times straight to their block, through the files of a rotated
//   series, in a few reads; span positions go through span_index (used by
//   span_seek.hpp), which reads the index with this source's own reader
//   (the file is not opened again; later files of a series are), and
//   span_event, which reads the event it names, to check it. Without an index (version 1 and 2 files), or when the
//   index lies, the source reads from the start as before, and the notice
//   of seek (or span_index) says so, once per source. Latest, -N (the last
//   N events) and relative times (back from the newest event's time) go
//   through the index too: the end blocks lead to the series' last file,
//   its index to the newest block from which it counts N events, and those
//   blocks (and the unindexed tail of a file still being written) are read
//   once to count them exactly, so they cost O(N) events, not the file.
//   The index's counts are a claim: when the blocks hold fewer, the index is
//   not trusted. -N reaching back past the series' last file goes back a file
//   at a time through each file's index (the same blocks-from-there count);
//   files without an index cost one extra pass over the series.
//   SEQNO and TIME answers are checked before they are believed
//   (recording_index.hpp): the block before the one named, or a file's last
//   block for an answer past the file, is read and must end before the
//   position; otherwise the index is not trusted (a scan, said once).
// - A seek may come at any time, also after reading (to the end, or into a
//   later file of a series) and after another seek: the source then starts
//   over from the file it was opened on, so a recording can be read again
//   in one source (issue 32). Its counters go on counting.
// - Never NotReady, unless opened with `follow`: a recording is read to its
//   end; wait() returns at once. With `follow` (`watch --follow`), a file
//   being written is read as it grows: at its current end (no end record
//   yet) the source is NotReady, wait() sleeps a little (the file has no
//   doorbell: it polls its size, at most every 50 ms), and a file whose end
//   record says it continues waits for the next file to appear. It ends
//   with the end record of the last file. Positions use the index blocks
//   written so far (recording_index.hpp) and read the rest.
//
// Thread safety: as event_source.hpp (one thread at a time).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "evring/source/event_source.hpp"
#include "recording/recording_index.hpp"
#include "recording/recording_reader.hpp"

namespace evring {

namespace detail {
// "finding seqno 41692", "finding the last 10 events": what an index lookup
// was for, in the notice of a scan that replaces it (recording_source_index.cpp).
std::string what_is_found(const IndexQuery& query);
}  // namespace detail

// The file a rotated recording continues in: FILE -> FILE.1, FILE.1 -> FILE.2
// (`file_index` is the index in the current file's header).
std::string next_recording_path(const std::string& path, std::uint32_t file_index);
// FILE for FILE.N whose header says it is file N; `path` otherwise.
std::string series_base(const std::string& path, std::uint32_t file_index);

class RecordingSource final : public EventSource {
public:
    static Result<std::unique_ptr<RecordingSource>> open(const std::string& path, std::string location,
                                                         bool series = true, bool follow = false);
    ~RecordingSource() override;

    Result<std::string> seek(const Position& start) override;
    void wait(std::chrono::nanoseconds timeout) override;
    bool live() const override { return follow_ && phase_ != Phase::Done; }
    // The newest event's time (through the index, or an extra pass over the
    // series; done once).
    Result<std::uint64_t> now_nanos() override;
    std::uint64_t next_seqno() const override { return 0; }
    std::span<const std::byte> schema() const override { return first_schema_; }
    std::string end_text() const override;
    bool damaged() const override { return damaged_ || EventSource::damaged(); }

    // The file being read now.
    const RecordingReader& reader() const noexcept { return *reader_; }
    // How the current file's replay ended (nullopt while it goes on).
    std::optional<ReadStatus> file_status() const noexcept { return status_; }
    // The current file's end record says the recording continues.
    bool continued() const noexcept { return continued_; }
    // Files opened so far.
    std::uint32_t files() const noexcept { return files_; }

    // The span instance `query` (a SpanLabel or SpanLatest query) asks for,
    // through the indexes of the series' files, without moving this source:
    // Found with the event's seqno; Tail with `seqno` the first sequence
    // number past the indexed part (the rest must be scanned from there);
    // NotFound, NoIndex or Lies: scan from the start. `notice` gets the one
    // line a person is told when the answer costs a scan (at most once per
    // source).
    Result<IndexAnswer> span_index(const IndexQuery& query, std::string& notice);
    // The event a Found answer of the last span_index names, read on its own
    // (RecordingReader::event_at) from the file it is in, without moving
    // this source or opening that file again; false with `why` when the
    // index named an event that is not there.
    Result<bool> span_event(const IndexAnswer& answer, Record& record, std::vector<std::byte>& payload,
                            std::string& why);

protected:
    SourceStep read(SourceItem& item, PayloadRead payload) override;
    SourceStep load_payload(SourceEvent& event) override;

private:
    enum class Phase { Reading, FileEnded, Done };
    struct Scan {
        std::uint64_t events = 0;
        std::uint64_t first_seqno = 0;  // of the first event (0: none)
        std::uint64_t last_seqno = 0;   // of the last event
        std::uint64_t last_nanos = 0;
    };
    // A later file of the series to go on with (recording_series.cpp).
    struct Successor;

    RecordingSource(RecordingReader reader, bool series, bool follow);
    SourceStep from_record(SourceItem& item, PayloadRead payload, bool& handed_out);
    SourceStep damage(SourceItem& item);
    SourceStep next_file(SourceItem& item);
    Successor find_successor();
    // Hands out the LostToDamage gap between the last sequence number
    // accounted for and `seqno`, the first of a file read after a skip.
    bool bridge(std::uint64_t seqno, SourceItem& item);
    void account(std::uint64_t last_seqno) noexcept;
    // The last events of the series, through the index (recording_source_index.cpp).
    struct Last {
        std::string path;             // the file `block` is in
        IndexedBlock block;
        std::uint64_t events = 0;     // counted from `block` to the end of the series
        std::uint64_t first_seqno = 0; // of the first event counted
        std::uint64_t last_nanos = 0; // of the newest event
    };
    // The notice of a -N that reaches past the oldest event (`held` in all).
    std::string past_oldest(std::uint64_t keep, std::uint64_t held, std::uint64_t oldest) const;
    // Back to the state open() left: the opened file from its start, no
    // start position (recording_source.cpp). Nothing to do while untouched.
    Status rewind();
    // `resume` (Position::resume): seqno just past the last event is the end, not an error.
    Result<std::string> seek_seqno(std::uint64_t seqno, bool resume = false);
    Result<std::string> seek_back(std::uint64_t keep);
    Result<std::string> seek_member(std::uint32_t member, std::uint64_t seqno);
    Result<std::string> seek_members_after(const std::vector<Position::MemberAfter>& after);
    // Passed over as already consumed (Position::after_members).
    bool consumed(std::uint32_t member, std::uint64_t last_seqno) const noexcept {
        return member < member_after_.size() && last_seqno <= member_after_[member];
    }
    Result<std::string> seek_time(std::uint64_t nanos, std::string notice);
    // nullopt: scan instead (`notice` says why when a person should know).
    Result<std::optional<Last>> last_by_index(std::uint64_t n, std::string& notice);
    Result<bool> count_from(RecordingReader& reader, const IndexAnswer& answer, std::uint64_t wanted, Last& last,
                            const std::string& what, std::string& notice);
    Result<bool> move_to(const Last& last);
    Result<std::uint64_t> newest_time(std::string& notice);
    // Jumps to where `query` points (recording_index.cpp): true when it did;
    // false to scan instead, with `notice` saying why when a person should
    // know. `answer` is the index's last answer.
    Result<bool> seek_by_index(const IndexQuery& query, IndexAnswer& answer, std::string& notice);
    bool open_next_for_seek();
    // Reads on in `next`, file `index` of the series: the one way a replay
    // or a seek moves to a later file.
    void adopt_next_file(RecordingReader next, std::uint32_t index);
    std::string scan_notice(const std::string& why, std::string_view what);
    bool before_start(const EventDescriptor& event);
    Result<Scan> scan();

    std::optional<RecordingReader> reader_;
    bool series_;
    bool follow_;
    Record record_;
    Phase phase_ = Phase::Reading;
    std::optional<ReadStatus> status_;
    bool continued_ = false;
    bool damaged_ = false;
    std::uint32_t files_ = 1;
    std::uint64_t series_id_ = 0;
    std::string base_;              // the series' first file (FILE of FILE.N)
    std::uint32_t file_index_ = 0;  // of the file being read
    std::uint64_t accounted_ = 0;   // highest seqno handed out or passed over (events, gaps)
    std::string bridge_;            // after a skip: where the next jump in seqnos was lost
    std::string bridge_detail_;
    bool replay_record_ = false;  // record_ is read again (it followed a bridge gap)
    std::vector<std::byte> first_schema_;
    std::string notice_;
    std::string ended_;
    std::optional<Scan> scan_;
    std::optional<std::uint64_t> newest_nanos_;  // now_nanos, once found
    std::optional<RecordingReader> span_file_;    // a later file of the series span_index found a mark in
    RecordingReader* span_reader_ = nullptr;      // the reader of the last span_index answer
    // The start position (seek).
    std::uint64_t skip_events_ = 0;  // events to pass over, by index
    std::uint64_t min_seqno_ = 0;
    std::uint64_t min_nanos_ = 0;
    bool started_ = true;            // a time start passes everything after its first match
    std::uint32_t start_member_ = Position::kAnyMember;  // MEMBER:SEQNO (ring set recordings)
    std::uint64_t member_seqno_ = 0;
    std::vector<std::uint64_t> member_after_;  // after_members: each member's last consumed seqno
    std::uint64_t index_ = 0;        // events seen so far
    bool told_slow_ = false;         // the "no index: reading from the start" notice was given
    bool untouched_ = true;          // neither read nor positioned since open (rewind has nothing to do)
};

}  // namespace evring
