// tools/evring/info.hpp — `evring info`: what a source is, gathered in one
// step and rendered (text or JSON) in another.
//
// Thread safety: one thread.
#pragma once

#include <string>

#include "evring/recording_source.hpp"
#include "evring/ring_source.hpp"

namespace evring::cli {

// Both return an exit code (commands.hpp) after printing to stdout.
int describe_ring(RingSource& source, bool json);
int describe_recording(RecordingSource& source, bool json);

// Label-aligned "label   value" lines for the text renderers.
struct Lines {
    std::string text;
    void add(const char* label, const std::string& value);
};

}  // namespace evring::cli
