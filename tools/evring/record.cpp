// evring record: the library's follow loop with a sink that writes every
// event, and a gap marker with its reason for every sequence number it did
// not capture, into a recording.
//
// The sink copies each event's descriptor and payload straight into the
// recording's staging buffer (no formatting) and ends a block only when idle
// (at most every 50 ms) or once a second when busy, so it keeps up with fast
// writers; zstd and write(2) run on the recording writer's own thread.
#include <filesystem>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstring>

#include "commands.hpp"
#include "registry/reader_kinds.hpp"
#include "evring/schema/schema_resolve.hpp"
#include "output/escape.hpp"
#include "evring/source/follow.hpp"
#include "query/recording_span_marks.hpp"
#include "recording/recording_writer.hpp"
#include "open.hpp"
#include "sink/registering_sink.hpp"
#include "ops/stop.hpp"
#include "output/values.hpp"
#include "watch.hpp"

namespace evring::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct RecordPlan {
    FollowOptions follow;
    RecordingOptions recording;
};

Result<RecordPlan> plan_record(const RecordOptions& options) {
    RecordPlan plan;
    if (auto s = options.select.check(plan.follow); !s) return std::move(s).error();
    if (options.rotate_size) {
        auto size = parse_size("--rotate-size", *options.rotate_size);
        if (!size) return std::move(size).error();
        plan.recording.rotate_bytes = *size;
    }
    if (options.level) {
        auto level = parse_int_in("--level", *options.level, 1, 19);
        if (!level) return std::move(level).error();
        plan.recording.compression_level = *level;
    }
    plan.recording.compress = !options.no_compress;
    plan.follow.payloads = PayloadRead::Copy;
    plan.follow.stop_flag = &stop_flag();
    return plan;
}

// What a recording's file header records about its source.
RingHeader source_header(const SourceIdentity& id) {
    RingHeader header{};
    header.magic = kRingMagic;
    header.content_type = id.content_type;
    header.schema_hash = id.schema_hash;
    header.size = id.ring_size;
    return header;
}

class RecordSink final : public FollowSink {
public:
    RecordSink(RecordingWriter& writer, std::string output) : writer_(writer), output_(std::move(output)) {}

    void started(const EventSource& source) override {
        kind_ = source.kind();
        members_ = source.identity().members;
        const std::uint64_t from = source.next_seqno();
        fmt::print(stderr, "evring: recording {}{} into {}\n", printable(source.identity().path),
                   from != 0 ? fmt::format(" from seqno {}", from) : std::string(), printable(output_));
    }

    bool event(const SourceEvent& event) override {
        EventDescriptor descriptor = event.descriptor;
        descriptor.reserved = static_cast<std::uint16_t>(event.member);  // kRecordingRingSet; 0 otherwise
        if (event.payload_state == PayloadState::Invalid) descriptor.payload_size = 0;  // cannot fit: descriptor only
        std::byte* dst = writer_.begin_event(descriptor);
        const bool intact = event.payload_state == PayloadState::Ok;
        if (intact && descriptor.payload_size > 0) std::memcpy(dst, event.payload.data(), descriptor.payload_size);
        if (!keep(writer_.end_event(intact))) return false;
        dirty_ = true;
        if (++since_clock_check_ == 4096) {
            since_clock_check_ = 0;
            if (Clock::now() - last_flush_ > std::chrono::seconds(1)) return flush();
        }
        return true;
    }

    bool gap(const SourceGap& gap) override {
        const std::string seqno = members_ ? fmt::format("member {} seqno", gap.member) : std::string("seqno");
        const std::string range = gap.count == 1 ? fmt::format("{} {}", seqno, gap.first_seqno)
                                                 : fmt::format("{} {}..{}", seqno, gap.first_seqno, gap.last_seqno());
        const std::string why = gap.reason == GapReason::FellBehind && kind_ != SourceKind::Recording
                                    ? std::string("the recorder fell behind")
                                    : std::string(describe(gap.reason));
        fmt::print(stderr, "evring: {} not captured ({} events): {}; a gap marker was recorded\n", range, gap.count,
                   why);
        if (!gap.detail.empty()) fmt::print(stderr, "evring: {}\n", printable(gap.detail));
        dirty_ = true;
        return keep(writer_.append_gap(gap.first_seqno, gap.count, gap.reason, gap.member));
    }

    void notice(std::string_view text) override { fmt::print(stderr, "evring: {}\n", printable(text)); }

    bool idle() override {
        if (dirty_ && Clock::now() - last_flush_ > std::chrono::milliseconds(50)) return flush();
        return true;
    }

    const Status& status() const { return status_; }

private:
    bool flush() {
        dirty_ = false;
        last_flush_ = Clock::now();
        return keep(writer_.flush());
    }
    bool keep(Status status) {
        if (!status) status_ = std::move(status);
        return status_.ok();
    }

    RecordingWriter& writer_;
    std::string output_;
    SourceKind kind_ = SourceKind::Ring;
    bool members_ = false;
    Status status_;
    Clock::time_point last_flush_ = Clock::now();
    bool dirty_ = false;
    std::uint32_t since_clock_check_ = 0;
};

std::string record_ended(const FollowResult& result) {
    switch (result.end) {
    case FollowEnd::Count: return "reached --count";
    case FollowEnd::Stop: return "reached --until";
    case FollowEnd::Stopped: return "interrupted";
    case FollowEnd::Sink: return "writing the recording failed";
    case FollowEnd::End: break;
    }
    return result.why;
}

}  // namespace

int run_record(RecordOptions& options) {
    auto plan = plan_record(options);
    if (!plan) return usage_error(plan.error());
    // --wait: a ring not created yet is waited for (follow.hpp).
    if (options.wait) {
        install_stop_handlers();
        if (!wait_for_name(options.ring, plan->follow, report_error)) return kExitOk;  // interrupted
    }
    auto source = open_for_command(options.ring, {});
    if (!source) return runtime_error(source.error());
    // --where needs the source's schema; compiled before anything is written.
    std::optional<ResolvedSchema> found;
    if (options.select.where) {
        auto resolved = resolve_schema(**source);
        if (!resolved) return runtime_error(resolved.error());
        found = std::move(*resolved);
        if (auto s = options.select.resolve(plan->follow, found->schema ? &*found->schema : nullptr, **source); !s)
            return exit_code(s.error());
    }
    // The schema blob the source carries goes into every file of the recording,
    // and its span labels make the recording's span index (recording_index.hpp).
    plan->recording.schema = (*source)->schema();
    if (!found) {
        if (auto resolved = resolve_schema(**source)) found = std::move(*resolved);
    }
    if (found && found->schema) plan->recording.span_marker = span_marker(*found->schema);
    const Schema* schema = found && found->schema ? &*found->schema : nullptr;
    auto interest = options.interest.resolve(schema, **source, options.ring, options.no_register);
    if (!interest) return usage_error(interest.error());
    // Record what we asked for, whoever else listens (other readers' interest may bring more).
    if (*interest) InterestOption::narrow(**interest, schema, plan->follow.filter.types);
    plan->recording.ring_set = (*source)->identity().members;  // member ids in every record
    // Lapped readers of this ring heal from recordings of its instance only (healing_source.hpp).
    if (const SourceKind kind = (*source)->kind(); kind == SourceKind::Ring || kind == SourceKind::RingSet)
        plan->recording.origin_instance = (*source)->identity().instance;
    auto writer = RecordingWriter::create(options.output, source_header((*source)->identity()), plan->recording);
    if (!writer) return runtime_error(writer.error());
    install_stop_handlers();
    RecordSink sink(*writer, options.output);
    // The absolute path: lapped readers find this recording through the registry (--heal, healer.hpp).
    std::error_code absolute_failed;
    const auto output = std::filesystem::absolute(options.output, absolute_failed);
    RegisteringSink seen(sink, {"record", reader_kinds::kRecord, "-> " + (absolute_failed ? options.output : output.string())},
                         !options.no_register);
    if (*interest) seen.set_interest(**interest);
    auto result = follow(*source, plan->follow, seen);
    Status status = sink.status();
    if (status) status = writer->finish();
    if (!result) return runtime_error(result.error());
    const RecordingTotals& t = writer->totals();
    // Also when writing failed (a full disk): what was taken, then the error;
    // the blocks written before it stay readable (recording_writer.hpp).
    fmt::print(stderr,
               "evring: {} {} events, {} expired payloads, {} lost in {} gaps, in {} file(s) (last: {}); {}{}\n",
               status ? "recorded" : "took", t.events, t.expired, t.lost, t.gaps, t.files,
               printable(writer->current_path()),
               status ? printable(record_ended(*result))
                      : "writing the recording failed: only the blocks written before the error are in it",
               result->counters.late > 0 ? late_words(result->counters.late) : std::string());
    if (!status) return runtime_error(status.error());
    if (result->damaged) {
        report_error(fmt::format("'{}' is damaged: everything readable was recorded, with a gap marker for what "
                                 "was lost", (*source)->identity().path));
        return kExitRuntime;
    }
    return kExitOk;
}

Command add_record(CLI::App& app) {
    auto o = std::make_shared<RecordOptions>();
    auto* c = app.add_subcommand("record", "Follow a ring and write every event to disk");
    c->add_option("RING", o->ring, "Ring name or path, snapshot or recording")->required();
    c->add_option("-o,--output", o->output, "Recording file to create")->required();
    o->select.add_range(*c, {.from = "latest (default), oldest, SEQNO, -N or a time"});
    c->add_option("--rotate-size", o->rotate_size,
                  "Start FILE.1, FILE.2, ... when a file reaches SIZE (binary units: 64K, 512M, 4G)")
        ->type_name("SIZE");
    o->select.add_filters(*c, {.type = nullptr, .flow = nullptr,
                               .where = "Record only events this expression keeps (docs/cli.md)"});
    c->add_flag("--no-compress", o->no_compress, "Write records without zstd");
    c->add_option("--level", o->level, "zstd level, 1 to 19 (default 1)")->type_name("LEVEL");
    c->add_flag("--no-register", o->no_register, kNoRegisterHelp);
    c->add_flag("--wait", o->wait, kWaitHelp);
    o->interest.add(*c, "--interest-level");
    return {c, [o] { return run_record(*o); }};
}

}  // namespace evring::cli
