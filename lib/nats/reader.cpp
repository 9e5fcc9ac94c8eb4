// Handing out a stream's messages as events, gaps and notices in source
// sequence order. See nats_reader.hpp for the contract.
#include <fmt/format.h>

#include <algorithm>

#include "reader_impl.hpp"

namespace evring::nats {
void StreamReader::Impl::select_member(std::optional<std::uint32_t> m) {
    const std::uint32_t next = m.value_or(0);  // decode_message bounds it by kMaxMember
    if (next == member) return;
    if (member_expected.size() <= std::max(next, member)) member_expected.resize(std::max(next, member) + 1, 0);
    member_expected[member] = expected;
    expected = member_expected[next];
    member = next;
}

void StreamReader::Impl::forget_members() {
    member_expected.clear();
    member = 0;
}

SourceStep StreamReader::Impl::hole(std::uint64_t first, std::uint64_t count, std::string detail, SourceItem& item) {
    text = std::move(detail);
    item.gap = SourceGap{first, count, kGapNotInStream, text};
    item.gap.member = member;
    expected = first + count;
    ++stats.gaps;
    stats.lost += count;
    return SourceStep::Gap;
}

// One event (whole): a hole before it, a copy to drop, or the event itself.
// `consumed` says whether the event was used up (false: a hole came first).
SourceStep StreamReader::Impl::event_item(const EventDescriptor& event, std::span<const std::byte> payload,
                                        SourceItem& item, bool& consumed) {
    consumed = true;
    if (expected != 0 && event.seqno < expected) {
        if (event.seqno >= start_floor) ++stats.duplicates;  // below it: before the start asked for
        return SourceStep::NotReady;  // dropped: the caller goes on
    }
    if (expected != 0 && event.seqno > expected && !filtered) {
        consumed = false;
        return hole(expected, event.seqno - expected,
                    fmt::format("sequence numbers {} to {} are not in stream '{}' (deleted, discarded by its "
                                "limits, or before its start)",
                                expected, event.seqno - 1, options.stream),
                    item);
    }
    expected = event.seqno + 1;
    item.event.member = member;
    item.event.descriptor = event;
    item.event.payload_state = PayloadState::Ok;
    item.event.payload = payload;
    ++stats.events;
    return SourceStep::Event;
}

// Hands out the next item of `current`; NotReady when it holds nothing more.
SourceStep StreamReader::Impl::process(SourceItem& item) {
    if (decoded.instance != instance) meet_instance();
    if (decoded.kind == MessageKind::Event || decoded.kind == MessageKind::Gap) select_member(decoded.member);
    else if (decoded.kind == MessageKind::Batch) select_member(std::nullopt);
    switch (decoded.kind) {
    case MessageKind::Announcement: return announcement_item(item);
    case MessageKind::Schema: take_schema_chunk(); return SourceStep::NotReady;
    case MessageKind::Gap: return gap_item(item);
    case MessageKind::Batch: return batch_item(item);
    case MessageKind::Event: break;
    }
    if (decoded.chunk_count == 1) {
        bool consumed = true;
        SourceStep step = event_item(decoded.event, decoded.part, item, consumed);
        if (consumed) have_current = false;
        return step;
    }
    return chunk_item(item);
}

// Another ring instance (or the first message seen): its sequence numbers
// start where its announcement, or its first message, says.
void StreamReader::Impl::meet_instance() {
    const bool first = instance.empty();
    instance = std::string(decoded.instance);
    if (!first) forget_members();
    if (decoded.kind != MessageKind::Announcement && !first) expected = 0;
    if (decoded.kind != MessageKind::Announcement && first && expected == 0) {
        select_member(decoded.member);  // a ring set: the first message's member starts there
        expected = decoded.first_seqno();
    }
}

// An announcement restarts the count only for another ring, or one started
// again; handed out as a notice.
SourceStep StreamReader::Impl::announcement_item(SourceItem& item) {
    have_current = false;
    ++stats.announcements;
    const Announcement& a = decoded.announcement;
    const bool same_start = expected != 0 && ring && ring->ring.instance == a.ring.instance;
    if ((a.flags & kAnnounceMembers) != 0) {
        // A ring set: each member's first event or gap says where it starts.
        if (!same_start) {
            forget_members();
            expected = 0;
        }
    } else if (!same_start) {
        expected = a.first_seqno;
    }
    filtered = !options.event_subject.empty() || (a.flags & kAnnounceFiltered) != 0;
    ring = a;
    text = fmt::format("ring '{}' (instance {}) relayed from sequence number {}{}", a.ring.name,
                       a.ring.instance, a.first_seqno, (a.flags & kAnnounceFiltered) ? ", filtered" : "");
    item.notice = text;
    return SourceStep::Notice;
}

// A relayed gap: what part of it is not accounted for yet, after any hole
// before it.
SourceStep StreamReader::Impl::gap_item(SourceItem& item) {
    const std::uint64_t first = decoded.gap.first_lost_seqno, last = decoded.last_seqno();
    if (expected != 0 && last < expected) {
        have_current = false;
        return SourceStep::NotReady;  // already accounted for
    }
    if (expected != 0 && first > expected && !filtered)
        return hole(expected, first - expected,
                    fmt::format("sequence numbers {} to {} are not in stream '{}'", expected, first - 1,
                                options.stream),
                    item);
    have_current = false;
    const std::uint64_t from = expected != 0 ? std::max(first, expected) : first;
    item.gap = SourceGap{from, last - from + 1, decoded.gap.reason, {}};
    item.gap.member = member;
    expected = last + 1;
    ++stats.gaps;
    stats.lost += item.gap.count;
    return SourceStep::Gap;
}

// A batch's events one at a time; the message stays current until its last.
SourceStep StreamReader::Impl::batch_item(SourceItem& item) {
    if (!batch) batch.emplace(decoded);
    for (;;) {
        BatchCursor saved = *batch;
        EventDescriptor event;
        std::span<const std::byte> payload;
        if (!batch->next(event, payload)) {
            have_current = false;
            batch.reset();
            return SourceStep::NotReady;
        }
        bool consumed = true;
        SourceStep step = event_item(event, payload, item, consumed);
        if (!consumed) *batch = saved;  // the hole first, then this event
        if (step != SourceStep::NotReady) return step;
    }
}

SourceStep StreamReader::Impl::next(SourceItem& item) {
    Impl& r = *this;
    if (r.failed) return SourceStep::Failed;
    if (r.recovered) {
        r.recovered = false;
        r.text = fmt::format("durable consumer '{}' of stream '{}' created again after stream sequence {} (deliveries "
                             "were interrupted); what it delivers again is dropped",
                             r.options.durable, r.options.stream, r.acked_through);
        item.notice = r.text;
        return SourceStep::Notice;
    }
    for (;;) {
        if (r.have_current) {
            // An event cut short (chunks missing) is a gap before anything else.
            if (r.chunks_seen != 0 && (r.decoded.kind != MessageKind::Event || r.decoded.chunk == 0)) {
                const std::uint64_t lost = r.chunked_event.seqno;
                r.chunks_seen = 0;
                if (r.expected == 0 || lost >= r.expected)
                    return r.hole(lost, 1, fmt::format("event {} lost chunks in stream '{}'", lost, r.options.stream),
                                  item);
            }
            SourceStep step = r.process(item);
            if (step != SourceStep::NotReady) return step;
            continue;
        }
        auto taken = r.take_next();
        if (!taken) return r.fail(std::move(taken).error());
        if (!*taken) {
            if (auto s = r.drain(); !s) return r.fail(std::move(s).error());
            taken = r.take_next();
            if (!taken) return r.fail(std::move(taken).error());
            if (!*taken) return r.check_stream();
        }
        r.idle_since = std::chrono::steady_clock::now();
        ++r.stats.messages;
        r.wire = detail::wire_view(r.current.message.get());
        if (auto s = decode_message(r.wire, r.decoded); !s) {
            r.note_unacked();
            // Not ours: passed over, so one stray message never stops a reader.
            if (r.skip_foreign(s.error(), item)) return SourceStep::Notice;
            continue;
        }
        r.have_current = true;
        r.note_unacked();
    }
}

// Counts a message that is not evring's, or does not decode as one, and
// words the first of each kind as a notice (true when it did).
bool StreamReader::Impl::skip_foreign(const Error& why, SourceItem& item) {
    // Subjects are the publisher's bytes: shown in part, the rest elided.
    constexpr std::size_t kShownSubject = 80;
    const std::string_view subject = wire.subject;
    const std::string shown = subject.size() > kShownSubject
                                  ? fmt::format("{}...", subject.substr(0, kShownSubject))
                                  : std::string(subject);
    if (!is_evring_message(wire)) {
        if (stats.foreign++ != 0) return false;
        text = fmt::format("stream '{}' holds messages that are not evring's (the first: message {} on '{}'); "
                           "skipping them",
                           options.stream, current.sequence, shown);
    } else {
        if (stats.invalid++ != 0) return false;
        text = fmt::format("message {} of stream '{}' on '{}' is not a valid evring message: {}; skipping it and "
                           "any like it",
                           current.sequence, options.stream, shown, why.message());
    }
    item.notice = text;
    return true;
}

}  // namespace evring::nats
