// RingSource::read_batch and read_run: many descriptors per call, one SIGBUS
// guard per batch, no virtual call per event (the C ABI's next_batch and
// Python's read_batch are built on read_batch, the ring set's merge on
// read_run).
#include "source/ring_source.hpp"
#include "source/ring_source_state.hpp"

namespace evring {

Batch RingSource::read_batch(std::span<EventDescriptor> out) {
    Batch batch;
    for (;;) {
        NextResult result = NextResult::Success;
        const std::size_t before = batch.events;
        const bool whole = state_->guard(
            [&] {
                while (batch.events < out.size()) {
                    result = it_->try_next(out[batch.events]);
                    if (result == NextResult::Success) {
                        ++batch.events;
                        continue;
                    }
                    if (result == NextResult::NotReady) return;
                    SourceGap gap;
                    if (result == NextResult::Gap) {
                        const std::uint64_t lost = it_->last_gap_lost();
                        gap = SourceGap{it_->next_seqno() - lost, lost, GapReason::FellBehind, {}};
                    } else {
                        gap = SourceGap{it_->last_abandoned_seqno(), 1, GapReason::Abandoned, {}};
                    }
                    counters_.count_gap(gap);
                    ++batch.gaps;
                    batch.skipped += gap.count;
                }
            },
            "reading descriptors");
        counters_.events += batch.events - before;
        if (!whole) {
            batch.stopped = fail(std::move(state_->fault));
            return batch;
        }
        if (batch.events == out.size()) return batch;
        // Not ready: a live ring caught up, a hole, the writer's exit or the end.
        SourceItem item;
        const SourceStep step = not_ready(item);
        if (step == SourceStep::Gap) {
            counters_.count_gap(item.gap);
            ++batch.gaps;
            batch.skipped += item.gap.count;
            continue;
        }
        if (step == SourceStep::Notice) hold(item);
        batch.stopped = step;
        return batch;
    }
}

SourceStep RingSource::read_run(std::span<EventDescriptor> out, std::size_t& filled, SourceItem& item) {
    filled = 0;
    NextResult result = NextResult::Success;
    // Iterator::try_next_run: the committed case inline, no call per event;
    // `filled` and the iterator's next seqno agree after every event, so a
    // SIGBUS mid-run keeps what was read before it.
    const bool whole = state_->guard([&] { result = it_->try_next_run(out, filled); }, "reading descriptors");
    counters_.events += filled;
    if (!whole) return fail(std::move(state_->fault));
    if (filled == out.size()) return SourceStep::Event;
    SourceStep step = SourceStep::Gap;
    switch (result) {
    case NextResult::Gap: {
        const std::uint64_t lost = it_->last_gap_lost();
        item.gap = SourceGap{it_->next_seqno() - lost, lost, GapReason::FellBehind, {}};
        break;
    }
    case NextResult::Abandoned:
        item.gap = SourceGap{it_->last_abandoned_seqno(), 1, GapReason::Abandoned, {}};
        break;
    case NextResult::Success:  // not reached: a full run returned above
    case NextResult::NotReady:
        if (filled > 0) return SourceStep::Event;  // what was ready is read; the rest comes later
        step = not_ready(item);  // the writer's exit, a hole, the end
        break;
    }
    if (step == SourceStep::Gap) counters_.count_gap(item.gap);
    return step;
}

}  // namespace evring
