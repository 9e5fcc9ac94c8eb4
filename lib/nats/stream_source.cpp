// A relayed stream as an EventSource (include/evring/nats_source.hpp): the
// connection, the stream's newest announcement and schema read at open, and
// a StreamReader opened by seek() at the asked-for start.
#include "evring/nats_source.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <optional>
#include <vector>

#include "evring/clock.hpp"
#include "evring/flow_filter.hpp"
#include "evring/nats_reader.hpp"
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

class StreamSource final : public EventSource {
public:
    StreamSource(Connection connection, std::string stream, std::string prefix, Announcement ring,
                 std::vector<std::byte> schema)
        : connection_(std::move(connection)), stream_(std::move(stream)), prefix_(std::move(prefix)),
          ring_(std::move(ring)), schema_(std::move(schema)) {}

    void set_identity(SourceIdentity id) { identity_ = std::move(id); }

    Result<std::string> seek(const Position& start) override {
        auto at = start_at(start);
        if (!at) return std::move(at).error();
        ReaderOptions options;
        options.stream = stream_;
        options.prefix = prefix_;
        options.start = *at;
        options.event_subject = event_subject_;
        auto reader = StreamReader::open(connection_, std::move(options));
        if (!reader) return std::move(reader).error();
        reader_.emplace(std::move(reader).value());
        return std::string();
    }

    void wait(std::chrono::nanoseconds timeout) override {
        if (reader_) reader_->wait(timeout);
    }
    bool live() const override { return true; }
    Result<std::uint64_t> now_nanos() override { return wall_clock_nanos(); }
    std::uint64_t next_seqno() const override { return reader_ ? reader_->next_seqno() : 0; }

    std::span<const std::byte> schema() const override {
        if (reader_ && !reader_->schema().empty()) return reader_->schema();
        return schema_;
    }
    std::string end_text() const override { return fmt::format("end of stream '{}'", stream_); }

    void narrow(const FlowFilter& filter) override {
        // One type, numeric subjects, one message per event: the server filters.
        const std::uint32_t flags = ring_.flags;
        if ((flags & (kAnnounceBatched | kAnnounceTypeNames)) != 0) return;
        std::optional<std::uint16_t> only;
        for (std::uint32_t t = 0; t < 65536; ++t) {
            if (!filter.types.contains(static_cast<std::uint16_t>(t))) continue;
            if (only) return;
            only = static_cast<std::uint16_t>(t);
        }
        if (!only) return;
        SubjectLayout layout;
        layout.prefix = prefix_;
        layout.flow_tag = ring_.flow_token;
        const std::string token = std::to_string(*only);
        if (auto subject = event_filter(layout, token, std::nullopt)) event_subject_ = *subject;
    }

protected:
    SourceStep read(SourceItem& item, PayloadRead payload) override {
        if (!reader_) {
            auto sought = seek(Position::oldest());
            if (!sought) return fail(std::move(sought).error());
        }
        switch (reader_->next(read_)) {
        case ReadStep::Event:
            item.event.descriptor = read_.event.descriptor;
            item.event.payload_state = payload == PayloadRead::Copy ? PayloadState::Ok : PayloadState::NotRead;
            item.event.payload = payload == PayloadRead::Copy ? read_.event.payload : std::span<const std::byte>();
            return SourceStep::Event;
        case ReadStep::Gap:
            item.gap = SourceGap{read_.gap.first_seqno, read_.gap.count, read_.gap.reason, read_.gap.detail};
            return SourceStep::Gap;
        case ReadStep::Notice: item.notice = read_.notice; return SourceStep::Notice;
        case ReadStep::NotReady: return SourceStep::NotReady;
        case ReadStep::Failed: return fail(reader_->error());
        }
        return SourceStep::NotReady;
    }

private:
    Result<StartAt> start_at(const Position& start) {
        switch (start.kind) {
        case Position::Kind::Oldest: return StartAt::oldest();
        case Position::Kind::Span: return unresolved_span(start);
        case Position::Kind::Seqno: return StartAt::source_seqno(start.value);
        case Position::Kind::None:
        case Position::Kind::Latest:
        case Position::Kind::Back: {
            auto newest = newest_seqno();
            if (!newest) return std::move(newest).error();
            if (*newest == 0) return StartAt::newest_only();  // no event yet: the next one
            if (start.kind != Position::Kind::Back) return StartAt::source_seqno(*newest);
            return StartAt::source_seqno(*newest >= start.value ? *newest - start.value + 1 : 1);
        }
        case Position::Kind::AbsoluteTime:
        case Position::Kind::RelativeTime: return StartAt::time(start.time_at(wall_clock_nanos()));
        }
        return StartAt::oldest();
    }

    // The newest source seqno the stream holds, through a reader that reads nothing.
    Result<std::uint64_t> newest_seqno() {
        ReaderOptions options;
        options.stream = stream_;
        options.prefix = prefix_;
        options.start = StartAt::newest_only();
        auto probe = StreamReader::open(connection_, std::move(options));
        if (!probe) return std::move(probe).error();
        return probe->newest_source_seqno();
    }

    Connection connection_;
    std::string stream_;
    std::string prefix_;
    Announcement ring_;
    std::vector<std::byte> schema_;
    std::string event_subject_;
    std::optional<StreamReader> reader_;
    ReadItem read_;
};

// The relay's prefix: the stream's one subject PREFIX.>.
Result<std::string> stream_prefix(const StreamInfo& info) {
    for (const std::string& subject : info.subjects)
        if (subject.size() > 2 && subject.ends_with(".>")) return subject.substr(0, subject.size() - 2);
    return Error(EINVAL, fmt::format("stream '{}' captures no subjects of the form PREFIX.>; it was not made by "
                                     "evring relay",
                                     info.name));
}

}  // namespace

Result<std::unique_ptr<EventSource>> open_stream_source(std::string_view location, const ConnectOptions& connect) {
    auto url = parse_url(location);
    if (!url) return std::move(url).error();
    if (url->stream.empty())
        return Error(EINVAL, fmt::format("'{}' names no stream: expected nats://HOST[:PORT]/STREAM", url->display()));
    auto connection = Connection::connect(*url, connect);
    if (!connection) return std::move(connection).error();
    auto info = connection->stream_info(url->stream);
    if (!info) return Error(info.error().errno_value(), fmt::format("'{}': {}", url->display(), info.error().message()));
    auto prefix = stream_prefix(*info);
    if (!prefix) return std::move(prefix).error().context(url->display());
    auto announced = detail::latest_announcement(connection->impl(), url->stream, *prefix);
    if (!announced) return std::move(announced).error().context(url->display());
    if (!*announced)
        return Error(ENOENT, fmt::format("'{}': the stream holds no relayed ring (no evring announcement)",
                                         url->display()));
    std::vector<std::byte> schema = stored_schema(*connection, url->stream, *prefix);
    const Announcement ring = **announced;
    auto source = std::make_unique<StreamSource>(std::move(connection).value(), url->stream, *prefix, ring,
                                                 std::move(schema));
    SourceIdentity id;
    id.kind = SourceKind::Stream;
    id.location = std::string(location);
    id.path = url->display();
    id.content_type = ring.ring.content_type;
    id.schema_hash = ring.ring.schema_hash;
    id.ring_size = ring.ring.size;
    id.instance = instance_number(ring.ring.instance);
    source->set_identity(std::move(id));
    return std::unique_ptr<EventSource>(std::move(source));
}

void register_nats_source_scheme() {
    register_source_scheme("nats", [](std::string_view location, const SourceOptions&) {
        return open_stream_source(location);
    });
}

}  // namespace evring::nats
