// The recorder's direct path (record_ring_loop.hpp).
//
// It repeats the parts of follow()'s loop (lib/source/follow.cpp) that a
// plain ring can meet: positioning, the stop seqno and time, count, the stop
// flag, gaps, notices, idling. What direct_record_applies turns away (filters, span
// labels, follow_name, healing) never reaches it. A change to those parts of
// follow() belongs here too; record_ring_loop_test.cpp records the same ring
// both ways and compares.
#include "record/record_ring_loop.hpp"

#include <array>
#include <atomic>
#include <optional>
#include <span>
#include <vector>

#include "evring/clock.hpp"
#include "evring/ring/payload.hpp"
#include "evring/ring/shared_word.hpp"
#include "ring/sigbus_guard.hpp"
#include "source/ring_source.hpp"

namespace evring {
namespace {

// Descriptors read per run: a run's SIGBUS guard and checks are paid once
// for this many events, and the stop flag is looked at between runs.
constexpr std::size_t kRun = 64;

class DirectLoop {
public:
    DirectLoop(RingSource& source, const FollowOptions& options, RegisteringSink& registration,
               RecordSink& recorder)
        : source_(source), ring_(*source.ring()), options_(options), registration_(registration),
          recorder_(recorder), writer_(recorder.writer()) {}
    Result<FollowResult> run();

private:
    Status position();
    std::size_t run_length() const noexcept;
    Result<std::optional<FollowEnd>> record(std::span<EventDescriptor> run, std::size_t& used);
    // Never inlined into record()'s sigsetjmp frame: a fault's longjmp then
    // abandons this whole frame, its locals with it, instead of returning
    // into a frame whose registers it may have clobbered (-Wclobbered, which
    // the TSan build's inlining raises on the writer's staged header).
    [[gnu::noinline]] void stage_inline(std::span<EventDescriptor> run, std::size_t& at,
                                        std::optional<FollowEnd>& end);
    std::optional<FollowEnd> after_kept(const EventDescriptor& d) noexcept;
    std::optional<FollowEnd> record_one(const EventDescriptor& d, std::optional<Error>& fault);
    void publish(std::span<const EventDescriptor> kept) noexcept;
    std::optional<FollowEnd> on_gap(const SourceGap& gap);
    std::optional<FollowEnd> on_idle();
    FollowResult finish(FollowEnd end);

    RingSource& source_;
    const MappedRing& ring_;
    const FollowOptions& options_;
    RegisteringSink& registration_;
    RecordSink& recorder_;
    RecordingWriter& writer_;
    StopAt stop_at_;
    FollowResult result_;
    std::uint64_t unread_ = 0;       // read by a run, never looked at: the loop stopped before them
    std::vector<std::byte> scratch_;  // record_one's copies
};

// As FollowLoop::position, for what direct_record_applies lets through.
Status DirectLoop::position() {
    auto notice = options_.seek ? options_.seek(source_, options_.start, options_.schema) : source_.seek(options_.start);
    if (!notice) return std::move(notice).error();
    if (!notice->empty()) registration_.notice(*notice);
    if (options_.stop.kind != Position::Kind::None) {
        auto at = source_.resolve_stop(options_.stop);
        if (!at) return std::move(at).error();
        stop_at_ = *at;
    }
    registration_.started(source_);
    return {};
}

// A run reads no further than --count or the stop seqno allow, so that the
// source stands where follow() would leave it.
std::size_t DirectLoop::run_length() const noexcept {
    std::uint64_t n = kRun;
    if (options_.count != 0) n = std::min(n, options_.count - result_.handed_out);
    if (stop_at_.seqno != StopAt::kNever) {
        const std::uint64_t next = source_.next_seqno();
        n = std::min(n, stop_at_.seqno >= next ? stop_at_.seqno - next + 1 : 1);
    }
    return static_cast<std::size_t>(n);
}

Result<FollowResult> DirectLoop::run() {
    if (auto s = position(); !s) return std::move(s).error();
    std::array<EventDescriptor, kRun> descriptors;
    SourceItem item;
    for (;;) {
        if (options_.stop_flag != nullptr && options_.stop_flag->load(std::memory_order_relaxed))
            return finish(FollowEnd::Stopped);
        std::size_t filled = 0;
        const SourceStep step = source_.read_run(std::span(descriptors).first(run_length()), filled, item);
        if (filled > 0) {
            std::size_t used = 0;
            auto end = record(std::span(descriptors).first(filled), used);
            if (!end) return std::move(end).error();
            unread_ += filled - used;
            if (*end) return finish(**end);  // a Gap read after the run stays counted, as read
        }
        std::optional<FollowEnd> end;
        switch (step) {
        case SourceStep::Event: break;  // a full run, or all that was ready
        case SourceStep::Gap: end = on_gap(item.gap); break;
        case SourceStep::Notice: registration_.notice(item.notice); break;
        case SourceStep::NotReady: end = on_idle(); break;
        case SourceStep::End: return finish(FollowEnd::End);
        case SourceStep::Failed: return source_.error();
        }
        if (end) return finish(*end);
    }
}

// Stages `run`: stretches inline under one guard each, and between them the
// one event that cannot go inline through the sinks (record_one). `used`:
// the events looked at, the one that ended the loop included.
Result<std::optional<FollowEnd>> DirectLoop::record(std::span<EventDescriptor> run, std::size_t& used) {
    std::optional<FollowEnd> end;
    std::size_t i = 0;
    while (i < run.size() && !end) {
        const std::size_t from = i;
        const std::uint64_t before = result_.handed_out;
        const void* fault_at = nullptr;
        if (!detail::run_under_sigbus_frame([&] { stage_inline(run, i, end); }, fault_at))
            return detail::truncated_error(ring_, fault_at, "copying a payload");  // the writer is as it was
        // The kept events lead the stretch (an event past the stop ends it unkept).
        const auto kept = static_cast<std::uint32_t>(result_.handed_out - before);
        publish(run.subspan(from, kept));
        if (!recorder_.kept(kept)) end = FollowEnd::Sink;
        if (end || i == run.size()) break;
        // An event the inline stretch left: expired, out of bounds, or the writer's slow path.
        std::optional<Error> fault;
        end = record_one(run[i++], fault);
        if (fault) return std::move(*fault);
    }
    used = i;
    return end;
}

// The inline stretch, from run[at]. Inside the SIGBUS guard: reads of the
// ring, and the writer's inline calls only (stages_inline: no lock,
// allocation or system call). Each payload is copied into the space its
// record will have and checked before the event is begun
// (inline_payload_space), so a fault abandons nothing, and an overwritten
// payload is left to record_one. Returns when the run is done, the loop is
// to end (`end`), or at an event that needs more than this (`at` left at it).
// What the loop reads per event is in locals: the fence before each copy
// would make the compiler store and reload members every event.
void DirectLoop::stage_inline(std::span<EventDescriptor> run, std::size_t& at, std::optional<FollowEnd>& end) {
    const StopAt stop = stop_at_;
    const std::uint64_t left = options_.count == 0 ? StopAt::kNever : options_.count - result_.handed_out;
    const std::uint64_t max_payload = ring_.layout().size.payload_buf_size;  // payload_in_bounds
    const std::byte* const buffer = ring_.payload_buffer();
    const std::uint64_t mask = ring_.payload_mask();
    const std::uint64_t& window_start = ring_.header().control.buffer_window_start;
    RecordingWriter& writer = writer_;
    std::uint64_t kept = 0;
    std::size_t i = at;
    for (; i < run.size(); ++i) {
        EventDescriptor& d = run[i];
        if (d.seqno > stop.seqno || d.record_epoch_nanos > stop.nanos) {
            end = FollowEnd::Stop;
            ++i;  // looked at, as follow() does, and not recorded
            break;
        }
        if (d.payload_size > max_payload || !writer.stages_inline(d.payload_size)) break;
        std::byte* dst = writer.inline_payload_space();
        // The writer's state is in memory before a copy that may fault
        // (sigbus_guard.hpp: the guard abandons the copy mid-way).
        std::atomic_signal_fence(std::memory_order_seq_cst);
        detail::racy_copy(dst, buffer + (d.payload_buf_offset & mask), d.payload_size);  // P1
        // payload_valid (payload.hpp), with the window's address held: P2
        // pairs with the writer's W4, P3 sees the window raised past the
        // bytes if they were rewritten. Overwritten: record_one records it
        // expired, as the general path does.
        shared::fence_acquire();
        if (d.payload_buf_offset < shared::load_relaxed(window_start)) break;
        d.reserved = 0;  // a plain ring's events have no member (RecordSink::event)
        writer.stage_copied_event(d);  // its header and descriptor before the copied payload
        if (++kept == left) {
            end = FollowEnd::Count;
            ++i;
            break;
        }
        if (d.seqno == stop.seqno) {
            end = FollowEnd::Stop;
            ++i;
            break;
        }
    }
    at = i;
    result_.handed_out += kept;
}

// What follow() does after its sink kept an event: the count, the stop seqno.
std::optional<FollowEnd> DirectLoop::after_kept(const EventDescriptor& d) noexcept {
    ++result_.handed_out;
    if (options_.count != 0 && result_.handed_out >= options_.count) return FollowEnd::Count;
    if (d.seqno == stop_at_.seqno) return FollowEnd::Stop;
    return std::nullopt;
}

// The registration's per-event update (RegisteringSink::event) for events
// staged inline: the source stands after each one. No gap comes within a
// run, so the counts are the source's now.
void DirectLoop::publish(std::span<const EventDescriptor> kept) noexcept {
    ReaderRegistration* registration = registration_.ring_registration();
    if (registration == nullptr) return;
    const SourceCounters& c = source_.counters();
    for (const EventDescriptor& d : kept) registration->on_event(d.record_epoch_nanos, d.seqno + 1, c.lost, c.abandoned);
}

// One event through the sinks, as follow() hands it over: its payload copied
// under a guard as RingSource does (Expired when overwritten, Invalid when it
// cannot fit the ring), then RegisteringSink::event and RecordSink::event.
std::optional<FollowEnd> DirectLoop::record_one(const EventDescriptor& d, std::optional<Error>& fault) {
    if (d.seqno > stop_at_.seqno || d.record_epoch_nanos > stop_at_.nanos) return FollowEnd::Stop;
    SourceEvent event;
    event.descriptor = d;
    event.payload_state = PayloadState::Invalid;
    if (payload_in_bounds(ring_, d)) {
        if (scratch_.size() < d.payload_size) scratch_.resize(d.payload_size);  // outside the guard
        PayloadResult copied = PayloadResult::Invalid;
        const void* fault_at = nullptr;
        if (!detail::run_under_sigbus_frame(
                [&] { copied = copy_payload(ring_, d, scratch_.data(), d.payload_size); }, fault_at)) {
            fault = detail::truncated_error(ring_, fault_at, "copying a payload");
            return FollowEnd::End;
        }
        event.payload_state = copied == PayloadResult::Ok ? PayloadState::Ok : PayloadState::Expired;
        if (copied == PayloadResult::Ok) event.payload = {scratch_.data(), d.payload_size};
    }
    if (!registration_.event(event)) return FollowEnd::Sink;
    return after_kept(d);
}

std::optional<FollowEnd> DirectLoop::on_gap(const SourceGap& gap) {
    if (gap.first_seqno > stop_at_.seqno) return FollowEnd::Stop;
    if (!registration_.gap(gap)) return FollowEnd::Sink;
    if (gap.last_seqno() >= stop_at_.seqno) return FollowEnd::Stop;
    return std::nullopt;
}

std::optional<FollowEnd> DirectLoop::on_idle() {
    if (stop_at_.nanos != StopAt::kNever && wall_clock_nanos() > stop_at_.nanos) return FollowEnd::Stop;
    if (!registration_.idle()) return FollowEnd::Sink;
    source_.wait(options_.max_sleep);
    return std::nullopt;
}

// As FollowLoop::finish. read_run counts what it reads, but no payloads:
// every event the loop looked at had its payload read, as with PayloadRead::Copy.
FollowResult DirectLoop::finish(FollowEnd end) {
    result_.end = end;
    result_.counters = source_.counters();
    result_.counters.events -= unread_;
    result_.counters.payloads = result_.counters.events;
    result_.damaged = source_.damaged();
    switch (end) {
    case FollowEnd::Count: result_.why = "reached the count"; break;
    case FollowEnd::Stop: result_.why = "reached the stop position"; break;
    case FollowEnd::End: result_.why = source_.end_text(); break;
    case FollowEnd::Stopped: result_.why = "interrupted"; break;
    case FollowEnd::Sink: result_.why = "the output stopped"; break;
    }
    return result_;
}

}  // namespace

bool direct_record_applies(const EventSource& source, const FollowOptions& options,
                           const RecordingOptions& recording) noexcept {
    const auto* ring = dynamic_cast<const RingSource*>(&source);
    return ring != nullptr && ring->ring() != nullptr && !source.heals() && options.filter.accepts_everything() &&
           options.where == nullptr && options.members.empty() && options.span_labels == nullptr &&
           options.span_stop.kind == SpanLimit::Kind::None && options.stop.kind != Position::Kind::Span &&
           options.start.member == Position::kAnyMember && !options.follow_name && !recording.span_marker &&
           recording.rotate_bytes == 0 && !recording.ring_set;
}

Result<FollowResult> follow_ring_direct(EventSource& source, const FollowOptions& options,
                                        RegisteringSink& registration, RecordSink& recorder) {
    DirectLoop loop(static_cast<RingSource&>(source), options, registration, recorder);
    return loop.run();
}

}  // namespace evring
