// run_assembled_relay (assembled_relay.hpp): the follow loop into a
// SpanAssembler, each instance it hands out published as one JSON message.
#include "nats/assembled_relay.hpp"

#include <fmt/format.h>

#include <cerrno>

#include "assembled_stream.hpp"
#include "nats/nats_relay.hpp"
#include "registry/reader_kinds.hpp"
#include "sink/registering_sink.hpp"
#include "source/source_renamed.hpp"

namespace evring::nats {
namespace {

class AssembledSink final : public FollowSink {
public:
    AssembledSink(SpanAssembler& assembler, const Connection& connection, const AssembledRelayOptions& options,
                  std::string prefix, detail::AssembledTail tail, std::size_t limit)
        : assembler_(assembler), connection_(connection), options_(options), prefix_(std::move(prefix)),
          tail_(std::move(tail)), limit_(limit) {}

    bool event(const SourceEvent& event) override {
        assembler_.event(event);
        return publish_ready();
    }
    bool gap(const SourceGap& gap) override {
        assembler_.gap(gap);  // the instances it breaks go out as broken
        log(fmt::format("gap: seqno {}..{} lost ({})", gap.first_seqno, gap.first_seqno + gap.count - 1,
                        describe(gap.reason)));
        return publish_ready();
    }
    void notice(std::string_view text) override { log(text); }

    bool finish() {
        assembler_.end();  // what is still open is counted, not published
        return publish_ready();
    }
    const Error* failure() const { return failure_ ? &*failure_ : nullptr; }
    AssembledRelayResult& result() { return result_; }

private:
    bool publish_ready() {
        while (auto s = assembler_.take())
            if (!publish(*s)) return false;
        return true;
    }
    bool publish(const AssembledSpan& s) {
        const std::string name = assembled_name(s, options_.stage);
        if (tail_.holds(s.label, name)) {
            ++result_.skipped;
            return true;
        }
        const std::string body = assembled_json(s, assembler_.schema(), options_.json);
        if (body.size() > limit_) {
            failure_ = Error(EFBIG, fmt::format("{} is {} bytes of JSON; {} and stream '{}' accept {} at most: raise "
                                                "the server's max_payload (docs/distributed.md)",
                                                name, body.size(), connection_.url().display(), options_.stream,
                                                limit_));
            return false;
        }
        const std::string subject = fmt::format("{}.{}.{}", prefix_, s.span->name, assembled_state_word(s, options_.stage));
        auto sent = detail::publish_assembled(connection_.impl(), subject, name, body, options_.stop_flag);
        if (!sent) {
            failure_ = std::move(sent).error();
            return false;
        }
        if (*sent == detail::Published::Stopped) return false;
        ++(*sent == detail::Published::Duplicate ? result_.duplicates : result_.published);
        result_.largest = std::max<std::uint64_t>(result_.largest, body.size());
        return true;
    }
    void log(std::string_view text) const {
        if (options_.log) options_.log(text);
    }

    SpanAssembler& assembler_;
    const Connection& connection_;
    const AssembledRelayOptions& options_;
    std::string prefix_;
    detail::AssembledTail tail_;
    std::size_t limit_;
    AssembledRelayResult result_;
    std::optional<Error> failure_;
};

StreamSpec spec_of(const AssembledRelayOptions& options, const std::string& prefix) {
    StreamSpec spec = options.stream_spec;
    spec.name = options.stream;
    spec.prefix = prefix;
    spec.assembled_span = options.span;
    return spec;
}

}  // namespace

Result<AssembledRelayResult> run_assembled_relay(const AssembledRelayOptions& options,
                                                 std::unique_ptr<EventSource> source, const Schema& schema) {
    if (auto s = validate_stream_name(options.stream); !s) return std::move(s).error();
    auto assembler = SpanAssembler::make(schema, options.span, options.stage);
    if (!assembler) return std::move(assembler).error();
    auto connection = Connection::connect(options.url, options.connect);
    if (!connection) return std::move(connection).error();
    const std::string prefix = options.prefix.empty() ? default_prefix(options.stream) : options.prefix;
    auto info = connection->ensure_stream(spec_of(options, prefix));
    if (!info) return std::move(info).error();
    auto tail = detail::read_assembled_tail(connection->impl(), *info, options.span);
    if (!tail) return std::move(tail).error();
    if (tail->any && options.log)
        options.log(fmt::format("stream '{}' holds {} instances up to label {}: those already there are skipped",
                                options.stream, options.span, tail->label));

    FollowOptions follow_options;
    follow_options.start = options.start;
    follow_options.payloads = PayloadRead::Copy;  // labels, ids and stages are in payloads
    follow_options.follow_name = follows_names(*source);
    follow_options.reopen = options.source_options;
    follow_options.stop_flag = options.stop_flag;
    AssembledSink sink(*assembler, *connection, options, prefix, std::move(*tail),
                       connection->message_limit(*info));
    RegisteringSink seen(sink,
                         {"relay", reader_kinds::kRelay,
                          fmt::format("-> {} {} --assemble {}", options.url.display(), options.stream, options.span)},
                         options.register_reader);
    auto followed = follow(source, follow_options, seen);
    if (followed && !sink.failure()) sink.finish();
    if (const Error* failure = sink.failure())
        return Error(failure->errno_value(), fmt::format("relaying {} instances into stream '{}' on {}: {}",
                                                         options.span, options.stream, options.url.display(),
                                                         failure->message()));
    if (!followed) return std::move(followed).error();
    AssembledRelayResult result = std::move(sink.result());
    result.counts = assembler->counts();
    result.follow = std::move(followed).value();
    return result;
}

}  // namespace evring::nats
