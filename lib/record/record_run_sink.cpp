// The recorder's direct path (record_run_sink.hpp): the runs follow() hands
// it, staged straight into the recording writer.
#include "record/record_run_sink.hpp"

#include <atomic>

#include "evring/ring/payload.hpp"
#include "evring/ring/shared_word.hpp"
#include "ring/sigbus_guard.hpp"
#include "source/ring_source.hpp"

namespace evring {

// Stretches inline under one guard each, and between them the one event
// that cannot go inline, through the sinks (record_one).
Result<detail::RingRunSink::Taken> RecordRunSink::take_run(RingSource& source, std::span<EventDescriptor> run,
                                                           std::uint64_t stop_nanos) {
    const MappedRing& ring = *source.ring();
    Taken taken;
    while (taken.looked < run.size() && !taken.end) {
        const std::size_t from = taken.looked;
        const std::uint64_t before = taken.kept;
        const void* fault_at = nullptr;
        if (!detail::run_under_sigbus_frame([&] { stage_inline(ring, run, stop_nanos, taken); }, fault_at))
            return detail::truncated_error(ring, fault_at, "copying a payload");  // the writer is as it was
        // The kept events lead the stretch (an event past the stop time ends it unkept).
        const auto kept = static_cast<std::uint32_t>(taken.kept - before);
        publish(source, run.subspan(from, kept));
        if (!recorder_.kept(kept)) taken.end = FollowEnd::Sink;
        if (kept > 0 && commits_ != nullptr && !taken.end &&
            !commits_->taken(run[from].seqno, run[from + kept - 1].seqno))
            taken.end = FollowEnd::Sink;
        if (taken.end || taken.looked == run.size()) break;
        // An event the stretch left: expired, out of bounds, or the writer's slow path
        // (a block's end, span marks).
        auto one = record_one(source, run[taken.looked++]);
        if (!one) return std::move(one).error();
        if (*one)
            ++taken.kept;
        else
            taken.end = FollowEnd::Sink;
    }
    return taken;
}

// The inline stretch, from run[taken.looked]. Inside the SIGBUS guard: reads
// of the ring, and the writer's inline calls only (stages_inline: no lock,
// allocation or system call). Each payload is copied into the space its
// record will have and checked before the event is begun
// (inline_payload_space), so a fault abandons nothing, and an overwritten
// payload is left to record_one. Returns when the run is done, at an event
// past the stop time (taken.end), or at an event that needs more than this
// (taken.looked left at it). Never inlined into take_run's sigsetjmp frame:
// a fault's longjmp then abandons this whole frame, its locals with it,
// instead of returning into a frame whose registers it may have clobbered
// (-Wclobbered, which the TSan build's inlining raises on the writer's
// staged header). What it reads per event is in locals: the fence before
// each copy would make the compiler store and reload members every event.
void RecordRunSink::stage_inline(const MappedRing& ring, std::span<EventDescriptor> run, std::uint64_t stop_nanos,
                                 Taken& taken) {
    const std::uint64_t max_payload = ring.layout().size.payload_buf_size;  // payload_in_bounds
    const std::byte* const buffer = ring.payload_buffer();
    const std::uint64_t mask = ring.payload_mask();
    const std::uint64_t& window_start = ring.header().control.buffer_window_start;
    RecordingWriter& writer = recorder_.writer();
    std::uint64_t kept = 0;
    std::size_t i = taken.looked;
    for (; i < run.size(); ++i) {
        EventDescriptor& d = run[i];
        if (d.record_epoch_nanos > stop_nanos) {
            taken.end = FollowEnd::Stop;
            ++i;  // looked at, as follow() does, and not recorded
            break;
        }
        // Out of bounds, the block's end, or a type that gets span marks: record_one.
        if (d.payload_size > max_payload || !writer.stages_inline(d)) break;
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
        ++kept;
    }
    taken.looked = i;
    taken.kept += kept;
}

// The registration's per-event update (RegisteringSink::event) for events
// staged inline: the source stands after each one. No gap comes within a
// run, so the counts are the source's now.
void RecordRunSink::publish(const RingSource& source, std::span<const EventDescriptor> kept) noexcept {
    ReaderRegistration* registration = registration_.ring_registration();
    if (registration == nullptr) return;
    const SourceCounters& c = source.counters();
    for (const EventDescriptor& d : kept) registration->on_event(d.record_epoch_nanos, d.seqno + 1, c.lost, c.abandoned);
}

// One event through the sinks, as follow() hands it over: its payload read
// by the ring source (Expired when overwritten, Invalid when it cannot fit
// the ring). False: a sink stopped the loop.
Result<bool> RecordRunSink::record_one(RingSource& source, const EventDescriptor& d) {
    SourceEvent event;
    event.descriptor = d;
    if (source.fill_payload(event) == SourceStep::Failed) return source.error();
    return first_.event(event);
}

}  // namespace evring
