// lib/sink/mirror_sink.hpp — the follow-loop sink that mirrors: every event
// the loop keeps published, descriptor and payload, into a new local ring
// (the mirror pipeline, lib/record/mirror_source.hpp, `evring mirror`).
//
// Sequence numbers: the mirror ring numbers its events itself, from 1, one
// after another; source gaps take no sequence numbers in it. Mirror seqno M
// is therefore source seqno M + OFFSET, where OFFSET changes only at a gap
// (or a new source ring instance): the sink says "mirror seqno M = source
// seqno S" whenever it changes, and with a seqno tag each event also carries
// its source seqno in content_ext[TAG] (docs/distributed.md).
//
// A ring set's merged stream: every member counts its own sequence numbers,
// so the line says "mirror seqno M = member K seqno S", said when member K's
// numbering jumps, and gaps name their member. The ring has no member
// column: member ids are not kept.
//
// What it tells a person (the seqno mapping, each gap with its reason, the
// source's notices) goes to `report`, one line each without a prefix; a null
// report keeps quiet. An event too large for the mirror ring ends the loop,
// with status() saying so.
//
// Thread safety: one thread (the follow loop's) per sink; the sink is the
// mirror ring's only writer (WriterSharing::Exclusive).
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "evring/ring/publisher.hpp"
#include "evring/source/follow.hpp"

namespace evring {

class MirrorSink final : public FollowSink {
public:
    using Report = std::function<void(std::string_view)>;
    // seqno_tag: the content_ext index for the source seqno, or -1 for none.
    // members: the source is a ring set's merged stream.
    MirrorSink(const MappedRing& ring, int seqno_tag, bool members, Report report = {})
        : publisher_(ring, WriterSharing::Exclusive), tag_(seqno_tag), members_(members), report_(std::move(report)) {}

    bool event(const SourceEvent& event) override;
    bool gap(const SourceGap& gap) override;
    void notice(std::string_view text) override;

    const Status& status() const { return status_; }
    std::uint64_t events() const { return events_; }

private:
    void say_mapping(std::uint64_t mirror_seqno, const SourceEvent& event) const;
    void say(std::string_view line) const {
        if (report_) report_(line);
    }
    // The last source seqno mirrored, per member (one entry for a ring; a set
    // has at most 1024 members, the stream reader's bound).
    std::uint64_t& last_source(std::uint32_t member) {
        if (last_source_.size() <= member) last_source_.resize(std::size_t{member} + 1, 0);
        return last_source_[member];
    }

    Publisher publisher_;
    int tag_;
    bool members_;
    Report report_;
    std::vector<std::uint64_t> last_source_ = std::vector<std::uint64_t>(1, 0);
    std::uint64_t events_ = 0;
    Status status_;
};

}  // namespace evring
