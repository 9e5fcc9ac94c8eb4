// evring info: open the source, hand it to the describer of its kind.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "output/escape.hpp"
#include "ops/info.hpp"
#include "open.hpp"
#include "output/values.hpp"

namespace evring::cli {

void Lines::add(const char* label, const std::string& value) {
    text += fmt::format("{:<20} {}\n", label, printable(value));
}

void add_schema(Lines& lines, const ResolvedSchema& found) {
    if (!found.schema) {
        lines.add("schema", "none: events show as raw bytes");
        return;
    }
    lines.add("schema", fmt::format("{}, {} event types, from {}", found.schema->content_name(),
                                    found.schema->events().size(), found.from));
}

void add_schema(JsonObject& o, const ResolvedSchema& found) {
    o.string("schema_origin", to_string(found.origin)).string("schema_from", found.from);
    if (!found.schema) {
        o.null("schema_name");
        return;
    }
    o.string("schema_name", found.schema->content_name())
        .string("schema_own_hash", found.schema->hash_hex())
        .number("schema_event_types", found.schema->events().size());
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
    auto found = resolve_schema(**source, {.schema_file = options.schema_file});
    if (!found) return runtime_error(found.error());
    if (!found->warning.empty()) report_error(found->warning);
    if (auto* recording = dynamic_cast<RecordingSource*>(source->get()))
        return describe_recording(*recording, options.json, *found);
    if (auto* ring = dynamic_cast<RingSource*>(source->get())) return describe_ring(*ring, options.json, *found);
    if (auto* set = dynamic_cast<RingSetSource*>(source->get())) return describe_ring_set(*set, options.json, *found);
    return runtime_error(Error(EINVAL, fmt::format("info cannot describe a {} yet", describe((*source)->kind()))));
}

Command add_info(CLI::App& app) {
    auto o = std::make_shared<InfoOptions>();
    auto* c = app.add_subcommand("info", "Describe a ring, snapshot or recording");
    c->add_option("RING", o->ring, "Ring name or path, snapshot or recording")->required();
    c->add_flag("--json", o->json, "Print one JSON object");
    c->add_option("--schema", o->schema_file, "Schema file describing the source, when it carries none (docs/schema.md)")
        ->type_name("FILE");
    c->add_option("--max-snapshot-size", o->max_snapshot_size, kMaxSnapshotSizeHelp)->type_name("SIZE");
    return {c, [o] { return run_info(*o); }};
}

}  // namespace evring::cli
