// tools/evring/export/export_cmd.hpp — `evring export SOURCE --perfetto FILE
// [--chrome-json FILE]`: a timeline of any event source (ring, snapshot,
// recording) for trace viewers (docs/cli.md, docs/operations.md "Export").
//
// add_export (commands.hpp) registers the command; run_export returns its
// exit code (0 success, 1 a source that cannot be read or an output that
// cannot be written, 2 usage). Positions and filters
// are watch's (event_selection.hpp; --from defaults to oldest);
// a live ring is exported up to its newest event and the command ends.
//
// Thread safety: one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "event_selection.hpp"
#include "evring/error.hpp"

namespace evring::cli {

struct ExportOptions {
    std::string source;
    std::string perfetto;
    std::string chrome_json;
    EventSelection select{"oldest"};  // --from, --until, --count, --type, --flow, --where
    std::string track_by = "type";
    std::string schema_file;
    std::string rate_interval = "10ms";
    std::optional<std::string> max_snapshot_size;
};

int run_export(ExportOptions& options);

// A duration with a unit: 10ms, 500us, 1s, 250000ns (1ns to 1h).
Result<std::uint64_t> parse_duration_nanos(std::string_view option, std::string_view text);

}  // namespace evring::cli
