// evring diff (diff_cmd.hpp): two sources read as digest reads them, each by
// its own follow loop in its own thread, joined on (member, seqno).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <thread>

#include "commands.hpp"
#include "diff/diff_cmd.hpp"
#include "diff/event_channel.hpp"
#include "ops/stop.hpp"
#include "output/values.hpp"

namespace evring::cli {
namespace {

// Events queued per side between its reading thread and the comparison, and
// events held by the join waiting for their match.
constexpr std::size_t kChannelEvents = 1024;
constexpr std::size_t kMaxPending = 100000;

// One side's follow loop hands its events (blanked, payload copied) to the
// channel; gaps are counted as digest counts them (ComparedSink).
class SideSink final : public ComparedSink {
public:
    SideSink(EventChannel& channel, const ComparedSource& read, std::optional<std::uint8_t> span_tag)
        : ComparedSink(read), channel_(channel), labels_(read.reading->follow().span_labels), span_tag_(span_tag) {}

    void notice(std::string_view text) override { notices.emplace_back(text); }

    std::vector<std::string> notices;

private:
    bool take(const SourceEvent& e, const EventDescriptor& blanked) override {
        ComparedEvent copy;
        copy.member = e.member;
        copy.descriptor = blanked;
        copy.key = e.descriptor.seqno;
        copy.payload_state = e.payload_state;
        if (e.payload_state == PayloadState::Ok) copy.payload.assign(e.payload.begin(), e.payload.end());
        // The follow loop noted the labels up to this event on this thread.
        if (span_tag_ && labels_ != nullptr) copy.label = labels_->instance_label(e.descriptor, *span_tag_);
        return channel_.push(std::move(copy));
    }

    EventChannel& channel_;
    const SpanLabels* labels_;
    std::optional<std::uint8_t> span_tag_;
};

// A reading thread: the follow loop, then the channel ended.
struct SideReader {
    SideReader(ComparedSource& read, std::optional<std::uint8_t> span_tag)
        : read_(read), channel(kChannelEvents), sink(channel, read, span_tag) {}
    void run() {
        result = read_.reading->run(sink);
        channel.end();
    }

    ComparedSource& read_;
    EventChannel channel;
    SideSink sink;
    Result<FollowResult> result = Error(ECANCELED, "not read");
};

// Any error is exit 2 for diff, as for cmp(1): 1 means the sources differ.
constexpr int kExitTrouble = 2;
int trouble(int code) { return code == kExitOk ? kExitOk : kExitTrouble; }

// Feeds the join from both channels, the side with fewer unmatched events
// first, so differences come out in the sources' order; stops early (true)
// when the list is full (--by seqno), fails on a stop signal.
Result<bool> compare_sides(std::array<SideReader*, 2> readers, DiffJoin& join, const DiffReport& report,
                           bool stop_when_full) {
    std::array<bool, 2> done{};
    while (!(done[0] && done[1])) {
        if (stop_requested()) return Error(EINTR, "interrupted");
        if (stop_when_full && (report.more || (report.max == 0 && report.first))) return true;
        const int side = done[0] ? 1 : done[1] ? 0 : join.pending(0) <= join.pending(1) ? 0 : 1;
        auto event = readers[side]->channel.pop();
        if (!event) {
            done[side] = true;
            join.end(side);
            continue;
        }
        if (!join.add(side, std::move(*event)))
            return Error(E2BIG, fmt::format("more than {} events of one source wait for their match in the other (their "
                                            "ring set members interleave too differently): compare one --member at a time",
                                            kMaxPending));
    }
    return false;
}

}  // namespace

Command add_diff(CLI::App& app) {
    auto options = std::make_shared<DiffOptions>();
    DiffOptions& o = *options;
    auto* c = app.add_subcommand("diff", "Where two sources differ: the first differing event, then a bounded list");
    c->add_option("A", o.a, "Ring name or path, snapshot, recording, ring set or stream")->required();
    c->add_option("B", o.b, "The source to compare with A")->required();
    o.read.add_to(*c, false);
    c->add_option("--max", o.max, "List at most N differences (default 10; 0: only the first)")->type_name("N");
    c->add_option("--by", o.by, "seqno: list differing events (default); member: also counts per ring set member; "
                                "a span with a label (block): also counts per span instance")
        ->type_name("seqno|member|SPAN");
    c->add_option("--format", o.format, "text (default) or json (one object)");
    return {c, [options] { return run_diff(*options); }};
}

// --by SPAN: the flow tag that puts A's events in its instances (a span
// with a label and an opener in A's schema).
Result<std::uint8_t> span_tag(const Schema* schema, const std::string& by) {
    std::string spans;
    if (schema != nullptr)
        for (const SchemaSpan& span : schema->spans()) {
            if (span.label.empty() || !span.opener) continue;
            if (span.name == by) return *span.opener;
            spans += (spans.empty() ? "" : ", ") + span.name;
        }
    return Error(EINVAL, fmt::format("bad --by '{}': give seqno, member or a span with a label{}", by,
                                     spans.empty() ? std::string(" (the source's schema has none)")
                                                   : fmt::format(" ({})", spans)));
}

int run_diff(DiffOptions& options) {
    const bool by_key = options.by == "seqno" || options.by == "member";
    if (options.by.empty()) return usage_error(Error(EINVAL, "bad --by '': give seqno, member or a span"));
    if (auto s = parse_choice("--format", options.format, {"text", "json"}); !s) return usage_error(s.error());
    options.read.select.span_labels = !by_key;  // --by block: the block's number
    std::array<ComparedSource, 2> reads;
    if (int code = open_compared(options.a, options.read, reads[0]); code != kExitOk) return trouble(code);
    if (int code = open_compared(options.b, options.read, reads[1]); code != kExitOk) return trouble(code);
    std::optional<std::uint8_t> tag;
    if (!by_key) {
        auto found = span_tag(reads[0].schema, options.by);
        if (!found) return trouble(usage_error(found.error()));
        tag = *found;
    }
    DiffReport report;
    report.max = options.max;
    report.seqno_blanked = options.read.blank_seqno;
    report.schema = reads[0].schema ? reads[0].schema : reads[1].schema;
    for (int i = 0; i < 2; ++i) {
        report.sides[i].path = reads[i].reading->source()->identity().path;
        report.sides[i].set = reads[i].reading->source()->identity().members;
    }
    const bool by_member = options.by == "member";
    report.span = tag ? options.by : std::string();
    DiffJoin join(options.read.blank_seqno, kMaxPending, [&report](const Difference& d) { report.add(d); });
    SideReader a(reads[0], tag), b(reads[1], tag);
    std::thread thread_a([&a] { a.run(); });
    std::thread thread_b([&b] { b.run(); });
    auto compared = compare_sides({&a, &b}, join, report, options.by == "seqno");
    a.channel.close();
    b.channel.close();
    thread_a.join();
    thread_b.join();
    if (!compared) return trouble(runtime_error(compared.error()));
    report.partial = *compared;
    int code = kExitOk;
    for (int i = 0; i < 2; ++i) {
        SideReader& r = i == 0 ? a : b;
        for (const auto& notice : r.sink.notices) report_error(notice);
        if (!r.result) return trouble(runtime_error(r.result.error()));
        report.sides[i].events = join.events(i);
        report.sides[i].gaps = r.sink.gaps();
        report.sides[i].gap_seqnos = r.sink.gap_seqnos();
        if (r.result->damaged) {
            damaged_error(report.sides[i].path, "the comparison covers only what could be read");
            code = kExitTrouble;  // diff's trouble status, not exit 1 (different)
        }
    }
    report.members = join.members();
    report.spans = join.spans();
    if (options.format == "json") print_diff_json(report, by_member);
    else print_diff_text(report, by_member);
    if (code != kExitOk) return code;
    return report.found == 0 ? kExitOk : kExitRuntime;
}

}  // namespace evring::cli
