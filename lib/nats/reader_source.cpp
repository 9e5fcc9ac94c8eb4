// StreamReader as an EventSource (lib/nats/nats_reader.hpp): opening
// (the stream, its newest announcement and schema), seek() re-subscribing
// at a Position, narrow(), and read() over the consumers in reader_impl.hpp.
#include <fmt/format.h>

#include <cerrno>
#include <charconv>

#include "evring/clock.hpp"
#include "evring/source/flow_filter.hpp"
#include "reader_impl.hpp"
#include "stream_inspect.hpp"

namespace evring::nats {
namespace {

std::uint64_t instance_number(std::string_view instance) {
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(instance.data(), instance.data() + instance.size(), value, 16);
    if (ec == std::errc() && end == instance.data() + instance.size()) return value;
    // Not a relay's hex digits: any stable digest of the text does.
    std::uint64_t h = 1469598103934665603ull;
    for (char c : instance) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return h;
}

// The schema blob the stream's newest schema message carries (one message;
// a chunked schema is left to the reader, which reassembles it when read).
std::vector<std::byte> stored_schema(const Connection& connection, const std::string& stream,
                                     const std::string& prefix) {
    auto fetched = detail::fetch_last_on(connection.impl(), stream, control_subject(prefix, MessageKind::Schema));
    if (!fetched || !fetched->valid() || fetched->decoded.kind != MessageKind::Schema ||
        fetched->decoded.chunk_count != 1)
        return {};
    return {fetched->decoded.part.begin(), fetched->decoded.part.end()};
}

}  // namespace

StreamReader::StreamReader(std::unique_ptr<Connection> owned, const Connection& connection)
    : owned_(std::move(owned)), connection_(&connection) {}

// The subscriptions are settled while the connection is alive: a wait set
// may keep impl_ after this, and owned_ goes right after.
StreamReader::~StreamReader() {
    if (impl_) impl_->close_subscriptions();
}

Result<std::unique_ptr<StreamReader>> StreamReader::open(const Connection& connection, ReaderOptions options) {
    auto reader = prepare(nullptr, connection, std::move(options), {});
    if (!reader) return reader;
    if (auto s = (*reader)->subscribe((*reader)->options_); !s) return std::move(s).error();
    return reader;
}

Result<std::unique_ptr<StreamReader>> StreamReader::open(std::unique_ptr<Connection> connection,
                                                         ReaderOptions options, std::string_view location) {
    const Connection& handle = *connection;
    return prepare(std::move(connection), handle, std::move(options), location);
}

Result<std::unique_ptr<StreamReader>> StreamReader::prepare(std::unique_ptr<Connection> owned,
                                                            const Connection& connection, ReaderOptions options,
                                                            std::string_view location) {
    if (auto s = validate_stream_name(options.stream); !s) return std::move(s).error();
    auto info = connection.stream_info(options.stream);
    if (!info) return std::move(info).error();
    // Its messages are JSON documents, not evring's encoding: refused by name (relay --assemble).
    if (!info->assembled_span.empty())
        return Error(EMEDIUMTYPE, fmt::format("stream '{}' carries assembled {} JSON (relay --assemble), not events; "
                                              "read it with a NATS client",
                                              options.stream, info->assembled_span));
    if (options.prefix.empty()) {
        auto prefix = stream_prefix(*info);
        if (!prefix) return std::move(prefix).error();
        options.prefix = std::move(*prefix);
    }
    auto announced = detail::latest_announcement(connection.impl(), options.stream, options.prefix);
    if (!announced) return std::move(announced).error();

    std::unique_ptr<StreamReader> reader(new StreamReader(std::move(owned), connection));
    reader->announced_ = *announced;
    reader->stored_schema_ = stored_schema(connection, options.stream, options.prefix);
    Url url = connection.url();
    url.stream = options.stream;
    SourceIdentity& id = reader->identity_;
    id.kind = SourceKind::Stream;
    id.path = url.display();
    id.location = location.empty() ? id.path : std::string(location);
    if (const auto& ring = reader->announced_) {
        id.content_type = ring->ring.content_type;
        id.schema_hash = ring->ring.schema_hash;
        id.ring_size = ring->ring.size;
        id.instance = instance_number(ring->ring.instance);
        // A ring set relayed: events and gaps carry their member.
        id.members = (ring->flags & kAnnounceMembers) != 0;
    }
    reader->options_ = std::move(options);
    return reader;
}

Status StreamReader::subscribe(ReaderOptions options) {
    // A durable resumed: after its ack floor, whatever the position asked.
    if (resume_start_) options.start = *resume_start_;
    auto impl = open_impl(*connection_, std::move(options), impl_ ? impl_->ring : announced_);
    if (!impl) return std::move(impl).error();
    if (impl_) {
        foreign_before_ += impl_->stats.foreign + impl_->stats.invalid;
        impl_->close_subscriptions();
    }
    impl_ = std::move(impl).value();
    if (resume_start_ && !resume_members_.empty()) {
        // A ring set's stream: every member expects the event after its own at the floor.
        impl_->instance = resume_instance_;
        impl_->member_expected.assign(resume_members_.size(), 0);
        for (std::size_t m = 0; m < resume_members_.size(); ++m)
            if (resume_members_[m] != 0) impl_->member_expected[m] = resume_members_[m] + 1;
        impl_->member = 0;
        impl_->expected = impl_->member_expected[0];
    } else if (resume_start_ && resume_seqno_ != 0) {
        // The floor's message may be a batch's: its events are not wanted again.
        impl_->instance = resume_instance_;
        impl_->expected = resume_seqno_ + 1;
        impl_->start_floor = resume_seqno_ + 1;
    }
    resume_start_.reset();
    return {};
}

Result<std::string> StreamReader::seek(const Position& start) {
    auto at = start_at(start);
    if (!at) return std::move(at).error();
    ReaderOptions options = options_;
    options.start = *at;
    if (!event_subject_.empty() && options.durable.empty()) options.event_subject = event_subject_;
    if (auto s = subscribe(std::move(options)); !s) return std::move(s).error();
    return std::string();
}

Result<StartAt> StreamReader::start_at(const Position& start) const {
    switch (start.kind) {
    case Position::Kind::Oldest: return StartAt::oldest();
    case Position::Kind::Seqno:
        if (identity_.members && start.member == Position::kAnyMember)
            return Error(EINVAL, fmt::format("stream '{}' relays a ring set: a sequence number needs its member "
                                             "(MEMBER:SEQNO), since every member counts its own",
                                             options_.stream));
        if (start.member != Position::kAnyMember) {
            if (!identity_.members)
                return Error(EINVAL, fmt::format("stream '{}' relays one ring, not a ring set: {}:{} names a "
                                                 "member it does not have",
                                                 options_.stream, start.member, start.value));
            return StartAt::member_seqno(start.member, start.value);
        }
        return StartAt::source_seqno(start.value);
    case Position::Kind::None:
    case Position::Kind::Latest:
    case Position::Kind::Back: {
        if (identity_.members) {
            // A set's stream: members count their own seqnos, so the newest
            // event (or the Nth back) is named by its member and seqno.
            const std::uint64_t back = start.kind == Position::Kind::Back && start.value > 0 ? start.value - 1 : 0;
            auto event = set_event_back(*connection_, options_.stream, back);
            if (!event) return std::move(event).error();
            return event->value_or(StartAt::newest_only());
        }
        auto newest = newest_source_seqno();
        if (!newest) return std::move(newest).error();
        if (*newest == 0) return StartAt::newest_only();  // no event yet: the next one
        if (start.kind != Position::Kind::Back) return StartAt::source_seqno(*newest);
        return StartAt::source_seqno(*newest >= start.value ? *newest - start.value + 1 : 1);
    }
    case Position::Kind::AbsoluteTime:
    case Position::Kind::RelativeTime: return StartAt::time(start.time_at(wall_clock_nanos()));
    case Position::Kind::Span: return unresolved_span(start);  // resolved by span_seek.hpp's reader
    }
    return StartAt::oldest();
}

void StreamReader::narrow(const FlowFilter& filter) {
    if (!options_.durable.empty()) return;  // a named reader reads every message (nats_reader.hpp)
    // One type, numeric subjects, one message per event: the server filters.
    if (!announced_ || (announced_->flags & (kAnnounceBatched | kAnnounceTypeNames)) != 0) return;
    std::optional<std::uint16_t> only;
    for (std::uint32_t t = 0; t < 65536; ++t) {
        if (!filter.types.contains(static_cast<std::uint16_t>(t))) continue;
        if (only) return;
        only = static_cast<std::uint16_t>(t);
    }
    if (!only) return;
    SubjectLayout layout;
    layout.prefix = options_.prefix;
    layout.flow_tag = announced_->flow_token;
    if (auto subject = event_filter(layout, std::to_string(*only), std::nullopt)) event_subject_ = *subject;
}

SourceStep StreamReader::read(SourceItem& item, PayloadRead payload) {
    if (!impl_) {  // reading without seek(): from the oldest message
        if (auto s = subscribe(options_); !s) return fail(std::move(s).error());
    }
    const SourceStep step = impl_->next(item);
    counters_.foreign = foreign_before_ + impl_->stats.foreign + impl_->stats.invalid;
    if (step == SourceStep::Failed) return fail(impl_->error);
    if (step == SourceStep::Event) {
        last_seqno_ = item.event.descriptor.seqno;
        last_state_ = item.event.payload_state;
        last_payload_ = item.event.payload;
    }
    if (step == SourceStep::Event && payload == PayloadRead::None) {
        item.event.payload_state = PayloadState::NotRead;
        item.event.payload = {};
    }
    return step;
}

// The message last decoded is still held (valid until the next call).
SourceStep StreamReader::load_payload(SourceEvent& event) {
    const bool same = last_seqno_ == event.descriptor.seqno && last_seqno_ != 0;
    event.payload_state = same ? last_state_ : PayloadState::Expired;
    event.payload = same ? last_payload_ : std::span<const std::byte>{};
    return SourceStep::Event;
}

void StreamReader::wait(std::chrono::nanoseconds timeout) {
    if (impl_) impl_->wait(timeout);
}

Result<std::uint64_t> StreamReader::now_nanos() { return wall_clock_nanos(); }
std::uint64_t StreamReader::next_seqno() const { return impl_ ? impl_->expected : 0; }

std::span<const std::byte> StreamReader::schema() const {
    if (impl_ && !impl_->schema.empty()) return impl_->schema;
    return stored_schema_;
}

std::string StreamReader::end_text() const { return fmt::format("end of stream '{}'", options_.stream); }
const ReaderOptions& StreamReader::options() const { return impl_ ? impl_->options : options_; }
const std::optional<Announcement>& StreamReader::announcement() const { return impl_ ? impl_->ring : announced_; }
ReaderStats StreamReader::stats() const { return impl_ ? impl_->stats : ReaderStats{}; }

Result<std::uint64_t> StreamReader::newest_source_seqno() const {
    return nats::newest_source_seqno(*connection_, options_.stream);
}

}  // namespace evring::nats
