// tools/evring/ops/info.hpp — `evring info`: what a source is, gathered in one
// step and rendered (text or JSON) in another.
//
// Thread safety: one thread.
#pragma once

#include <string>

#include "source/recording_source.hpp"
#include "source/ring_set_source.hpp"
#include "source/ring_source.hpp"
#include "evring/schema/schema_resolve.hpp"
#include "output/json.hpp"

namespace evring::cli {

// Both return an exit code (commands.hpp) after printing to stdout; `schema`
// is what schema_resolve.hpp found for the source.
int describe_ring(RingSource& source, bool json, const ResolvedSchema& schema);
int describe_recording(RecordingSource& source, bool json, const ResolvedSchema& schema);
int describe_ring_set(RingSetSource& source, bool json, const ResolvedSchema& schema);  // info_set.cpp

// Label-aligned "label   value" lines for the text renderers.
struct Lines {
    std::string text;
    void add(const char* label, const std::string& value);
};

// Which schema decodes the events and where it came from: one "schema" line,
// or the keys schema_origin, schema_from, schema_name (null when none),
// schema_own_hash (the schema file's own hash) and schema_event_types.
void add_schema(Lines& lines, const ResolvedSchema& schema);
void add_schema(JsonObject& object, const ResolvedSchema& schema);

}  // namespace evring::cli
