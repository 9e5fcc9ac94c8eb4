// The record pipeline (record_source.hpp).
#include "record/record_source.hpp"

#include <filesystem>

#include "evring/schema/schema_resolve.hpp"
#include "query/recording_span_marks.hpp"
#include "record/record_run_sink.hpp"
#include "registry/reader_kinds.hpp"

namespace evring {
namespace {

// A registration the caller already holds (a binding's reader handle) kept
// informed of what the loop reads, ahead of the recording, and listed as
// the recorder (kind record, "-> PATH") while it records, so lapped readers
// of the ring heal from this recording (healer.hpp) as from `evring record`'s;
// then listed as it was again.
class FeedRegistration final : public FollowSink {
public:
    FeedRegistration(RegisteringSink& registration, FollowSink& inner, const ReaderInfo& recorder)
        : registration_(registration), inner_(inner), before_(registration.info()) {
        registration_.describe(recorder.kind, recorder.detail);
    }
    ~FeedRegistration() override { registration_.describe(before_.kind, before_.detail); }
    FeedRegistration(const FeedRegistration&) = delete;
    FeedRegistration& operator=(const FeedRegistration&) = delete;
    void started(const EventSource& source) override {
        registration_.started(source);  // already registered: keeps its slots (registering_sink.hpp)
        inner_.started(source);
    }
    bool event(const SourceEvent& event) override {
        registration_.event(event);  // its inner sink never stops it
        return inner_.event(event);
    }
    bool gap(const SourceGap& gap) override { return inner_.gap(gap); }
    void notice(std::string_view text) override { inner_.notice(text); }
    bool idle() override {
        registration_.keep_alive();
        return inner_.idle();
    }

private:
    RegisteringSink& registration_;
    FollowSink& inner_;
    ReaderInfo before_;
};

// A named recorder's mark says what its file holds, as the recording's
// worker writes it (RecordingOptions::on_block, NamedReader::output_written).
std::function<void(const BlockProgress&)> mark_blocks(NamedReader& reader, bool ring_set) {
    return [&reader, ring_set](const BlockProgress& block) {
        if (!ring_set) {
            block.written ? reader.output_written(block.last_seqno) : reader.output_writing(block.last_seqno);
            return;
        }
        for (const BlockProgress::MemberLast& m : block.members)
            block.written ? reader.output_member_written(m.member, m.seqno)
                          : reader.output_member_writing(m.member, m.seqno);
    };
}

// The registry lists the recorder with its absolute path: lapped readers
// find the recording there (--heal, healer.hpp).
ReaderInfo recorder_info(const RecordJob& job) {
    std::error_code failed;
    const auto absolute = std::filesystem::absolute(job.output, failed);
    return {job.reader_name, reader_kinds::kRecord, "-> " + (failed ? job.output : absolute.string())};
}

}  // namespace

void describe_recording(const EventSource& source, const Schema* schema, RecordingOptions& options) {
    options.schema = source.schema();
    if (schema != nullptr) {
        options.span_marker = span_marker(*schema);
        options.span_marked_types = span_marked_types(*schema);  // the other types stay inline
    }
    options.ring_set = source.identity().members;  // member ids in every record
    if (const SourceKind kind = source.kind(); kind == SourceKind::Ring || kind == SourceKind::RingSet)
        options.origin_instance = source.identity().instance;
}

Result<Recorded> record_source(std::unique_ptr<EventSource>& source, RecordJob& job) {
    const Schema* schema = job.schema;
    std::optional<ResolvedSchema> found;
    if (schema == nullptr)
        if (auto resolved = resolve_schema(*source); resolved && resolved->schema) {
            found = std::move(*resolved);
            schema = &*found->schema;
        }
    describe_recording(*source, schema, job.recording);
    if (job.named != nullptr) job.recording.on_block = mark_blocks(*job.named, job.recording.ring_set);
    auto writer = RecordingWriter::create(job.output, source_header(source->identity()), job.recording);
    if (!writer) return std::move(writer).error();
    RecordSink sink(*writer, job.output, job.report);
    if (job.keep_going) sink.keep_going(job.keep_going);
    const Position& start = job.follow.start;
    if (start.kind == Position::Kind::Seqno && start.member == Position::kAnyMember) sink.asked_from(start.value);
    const ReaderInfo listed_as = recorder_info(job);
    RegisteringSink seen(sink, listed_as, job.register_reader && job.registration == nullptr);
    if (job.interest) seen.set_interest(*job.interest);
    std::optional<FeedRegistration> fed;
    if (job.registration != nullptr) fed.emplace(*job.registration, sink, listed_as);
    FollowSink& recorder = fed ? static_cast<FollowSink&>(*fed) : seen;
    // A commit covers only what is written and synced: each one waits for
    // the recording's worker and the disk, so they come at most once a second.
    std::optional<Error> sync_failed;
    std::optional<CommitSink> committing;
    if (job.named != nullptr)
        committing.emplace(recorder, *job.named, [&] {
            auto synced = writer->sync();
            if (!synced) sync_failed = std::move(synced).error();
            return !sync_failed;
        }, std::chrono::seconds(1));
    job.follow.payloads = PayloadRead::Copy;
    // The direct path (record_run_sink.hpp), wherever follow() gives it runs.
    FollowSink& first = committing ? static_cast<FollowSink&>(*committing) : recorder;
    RecordRunSink runs(first, fed ? *job.registration : seen, sink, committing ? &*committing : nullptr);
    auto result = follow(source, job.follow, runs);
    Recorded recorded;
    recorded.direct = runs.took_runs();
    recorded.written = sink.status();
    if (recorded.written && sync_failed) recorded.written = *sync_failed;
    if (recorded.written) recorded.written = writer->finish();
    recorded.totals = writer->totals();
    recorded.last_file = writer->current_path();
    recorded.stopped = sink.stopped();
    if (!result) return std::move(result).error();
    recorded.follow = *result;
    if (job.named != nullptr && recorded.written) {
        if (committing->error()) return *committing->error();
        if (auto s = job.named->commit(result->end == FollowEnd::End); !s) return std::move(s).error();
    }
    return recorded;
}

RecordEnd record_end(const Recorded& recorded) noexcept {
    if (!recorded.written) return RecordEnd::Failed;
    switch (recorded.follow.end) {
    case FollowEnd::Count: return RecordEnd::Count;
    case FollowEnd::Stop: return RecordEnd::Until;
    case FollowEnd::Stopped: return RecordEnd::Stopped;
    case FollowEnd::Sink: return recorded.stopped ? RecordEnd::Stopped : RecordEnd::Failed;
    case FollowEnd::End: break;
    }
    return RecordEnd::End;
}

std::string record_ended(const Recorded& recorded) {
    switch (record_end(recorded)) {
    case RecordEnd::Count: return "reached --count";
    case RecordEnd::Until: return "reached --until";
    case RecordEnd::Stopped: return "interrupted";
    case RecordEnd::Failed: return "writing the recording failed";
    case RecordEnd::End: break;
    }
    return recorded.follow.why;
}

}  // namespace evring
