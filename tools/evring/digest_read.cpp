#include "digest_read.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>

#include "commands.hpp"
#include "open.hpp"
#include "ops/stop.hpp"

namespace evring::cli {
namespace {

// The sequence number of a stream's newest event now (read from a second
// reader at `latest`), so that a read of a stream covers what it held when
// the command started, as for a live ring; nullopt when it holds none within
// a few seconds.
std::optional<std::uint64_t> newest_in_stream(const std::string& location) {
    auto probe = open_for_command(location, {});
    if (!probe || !(*probe)->seek(Position::latest())) return std::nullopt;
    SourceItem item;
    for (int i = 0; i < 100 && !stop_requested(); ++i) {
        switch ((*probe)->next(item)) {
        case SourceStep::Event: return item.event.descriptor.seqno;
        case SourceStep::NotReady: (*probe)->wait(std::chrono::milliseconds(50)); break;
        case SourceStep::Gap:
        case SourceStep::Notice: break;
        case SourceStep::End:
        case SourceStep::Failed: return std::nullopt;
        }
    }
    return std::nullopt;
}

// --blank-flow values: an index, `all`, or a flow tag name of the schema.
Status blank_flows(const std::vector<std::string>& tags, const Schema* schema, std::array<bool, 4>& blank) {
    for (const auto& tag : tags) {
        if (tag == "all") { blank.fill(true); continue; }
        if (tag.size() == 1 && tag[0] >= '0' && tag[0] <= '3') { blank[static_cast<std::size_t>(tag[0] - '0')] = true; continue; }
        auto index = schema ? schema->flow_tag(tag) : std::nullopt;
        if (!index)
            return Error(EINVAL, fmt::format("bad --blank-flow '{}': expected an index 0-3, all, or a flow "
                                             "tag name of the source's schema", tag));
        blank[*index] = true;
    }
    return {};
}

}  // namespace

void ComparedReadOptions::add_to(CLI::App& c, bool with_name) {
    select.add_range(c);
    select.add_filters(c);
    if (with_name) select.add_name(c);
    if (with_name) heal.add(c);
    select.add_member(c);
    c.add_flag("--blank-time", blank_time, "Leave record_epoch_nanos out (Monad's digest -T)");
    c.add_flag("--blank-offset", blank_offset, "Leave payload_buf_offset out (-P)");
    c.add_flag("--blank-seqno", blank_seqno, "Leave seqno out (a ring evring mirror filled numbers from 1)");
    c.add_option("--blank-flow", blank_flows, "Leave this flow tag out: a name, an index 0-3, or all (-C; repeatable)")
        ->type_name("TAG")
        ->allow_extra_args(false);
    c.add_option("--schema", schema_file, "Schema file naming the flow tags")->type_name("FILE");
}

int open_compared(const std::string& location, ComparedReadOptions& options, ComparedSource& out) {
    FollowOptions follow;
    if (auto s = options.select.check(follow); !s) return usage_error(s.error());
    follow.payloads = PayloadRead::Copy;
    follow.stop_flag = &stop_flag();
    // --type, --flow and --where: the events they keep, so two sources can
    // be compared on a part (one block, one type).
    ReadRequest request;
    request.location = location;
    request.selection = &options.select;
    if (auto s = options.heal.apply(request.source, options.select.name.has_value()); !s) return usage_error(s.error());
    if (!options.schema_file.empty()) request.schema_file = options.schema_file;
    std::unique_ptr<Reading> reading;
    if (int failed = open_selected(std::move(request), follow, reading); failed != kExitOk) return failed;
    Reading& r = *reading;
    out.schema = r.schema();
    out.blank = {.time = options.blank_time, .offset = options.blank_offset, .seqno = options.blank_seqno};
    if (auto s = blank_flows(options.blank_flows, out.schema, out.blank.flow); !s) return usage_error(s.error());
    install_stop_handlers();
    if (r.source()->kind() == SourceKind::Stream) {
        FollowOptions& f = r.follow();
        if (f.stop.kind == Position::Kind::None && f.count == 0) {
            auto newest = newest_in_stream(location);
            if (!newest)
                return runtime_error(Error(ENOENT, fmt::format("stream '{}' holds no event to read",
                                                               r.source()->identity().path)));
            f.stop = Position::seqno(*newest);
        }
        out.stream = true;
    }
    out.reading = std::move(reading);
    return kExitOk;
}

}  // namespace evring::cli
