// The relay's follow sink: events, gaps and new ring instances from the
// follow loop into a StreamPublisher (lib/nats/nats_relay.hpp has the
// contract). Private to lib/nats.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

#include "evring/source/follow.hpp"
#include "nats/nats_publisher.hpp"
#include "nats/nats_relay.hpp"

namespace evring::nats::detail {

class RelaySink final : public FollowSink {
public:
    RelaySink(StreamPublisher& publisher, const RelayOptions& options) : publisher_(publisher), options_(options) {}

    // What started() does on the first source: a resumed relay checks that
    // the ring still holds `resume_next` (else a gap covers the missing
    // range); a fresh one announces the instance and its schema.
    void set_resume(std::optional<std::uint64_t> resume_next) { resume_next_ = resume_next; }
    // A resumed ring set: the first event of `member` numbered `seqno` is
    // already in the stream (it positioned the merge) and is not published.
    void skip_once(std::uint32_t member, std::uint64_t seqno) { skip_ = {member, seqno}; }
    // Called at each step of a wait for the publisher (a full window, a
    // server outage), which can last as long as the outage: the relay's
    // registration keeps its heartbeat there (RegisteringSink::keep_alive).
    void set_keep_alive(std::function<void()> keep_alive) { keep_alive_ = std::move(keep_alive); }

    void started(const EventSource& source) override;
    bool event(const SourceEvent& event) override;
    bool gap(const SourceGap& gap) override;
    void notice(std::string_view text) override;
    bool idle() override;
    void replaced(const EventSource& old_source, const EventSource& new_source) override;

    // Publishes what is held back (a merged gap) and waits for every
    // acknowledgement, at most options.flush_timeout.
    Status finish();

    const Error* failure() const { return failure_ ? &*failure_ : nullptr; }
    std::uint64_t first_seqno() const { return first_seqno_; }
    std::uint64_t resume_gap() const { return resume_gap_; }
    std::uint64_t outages() const { return outages_; }

private:
    bool handle_status(PublishStatus status, bool caught_up);
    template <class Publish>
    bool publish_waiting(Publish publish);
    bool announce(const EventSource& source);
    bool hold_gap(std::uint64_t first, std::uint64_t count, GapReason reason, std::uint32_t member);
    // The member a ring set's event or gap goes out with; none for a ring.
    std::optional<std::uint32_t> member_of(std::uint32_t member) const {
        return members_ ? std::optional<std::uint32_t>(member) : std::nullopt;
    }
    bool release_gap();
    void log(std::string_view text) const;

    StreamPublisher& publisher_;
    const RelayOptions& options_;
    std::optional<std::uint64_t> resume_next_;
    std::function<void()> keep_alive_;
    bool first_start_ = true;
    bool members_ = false;  // the source is a ring set (SourceIdentity::members)
    std::optional<std::pair<std::uint32_t, std::uint64_t>> skip_;
    std::uint64_t first_seqno_ = 0;
    std::uint64_t resume_gap_ = 0;
    std::uint64_t outages_ = 0;
    bool in_outage_ = false;
    std::optional<Error> failure_;
    // A gap not yet published: consecutive lost payloads are merged into one message.
    struct HeldGap {
        std::uint64_t first = 0;
        std::uint64_t count = 0;
        GapReason reason = GapReason::FellBehind;
        std::uint32_t member = 0;
    };
    std::optional<HeldGap> held_gap_;
};

}  // namespace evring::nats::detail
