// evring info: open the source, hand it to the describer of its kind.
#include <fmt/format.h>

#include "commands.hpp"
#include "escape.hpp"
#include "info.hpp"
#include "open.hpp"
#include "values.hpp"

namespace evring::cli {

void Lines::add(const char* label, const std::string& value) {
    text += fmt::format("{:<20} {}\n", label, printable(value));
}

int run_info(const InfoOptions& options) {
    SourceOptions source_options;
    source_options.recording_series = false;  // info describes the file named
    if (options.max_snapshot_size) {
        auto size = parse_size("--max-snapshot-size", *options.max_snapshot_size);
        if (!size) return usage_error(size.error());
        source_options.max_snapshot_size = *size;
    }
    auto source = open_for_command(options.ring, source_options);
    if (!source) return runtime_error(source.error());
    if (auto* recording = dynamic_cast<RecordingSource*>(source->get())) return describe_recording(*recording, options.json);
    if (auto* ring = dynamic_cast<RingSource*>(source->get())) return describe_ring(*ring, options.json);
    return runtime_error(Error(EINVAL, fmt::format("info cannot describe a {} yet", describe((*source)->kind()))));
}

}  // namespace evring::cli
