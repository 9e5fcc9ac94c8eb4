// tools/evring/export/export_chrome.hpp — the Chrome JSON trace writer of `evring
// export --chrome-json` (the older format chrome://tracing, Perfetto's UI and
// speedscope read): {"traceEvents":[...]} streamed event by event.
//
// What it writes: per track a metadata event ("ph":"M", thread_name) giving
// it a tid under pid 1; per instant "ph":"i" (thread scope); per slice "B" and
// "E"; per counter sample "C" named after its track. "ts" is microseconds
// (three decimals: nanosecond resolution) since the first timestamp written,
// so that doubles hold it exactly; that origin, in nanoseconds since the Unix
// epoch, is in "otherData" at the end. "args" are the event's sequence number,
// its flow tags by name and its decoded payload fields (schema_render.hpp's
// JSON), or its payload in hex without a schema.
//
// Thread safety: one thread.
#pragma once

#include <memory>

#include "export/export_trace.hpp"

namespace evring::cli {

// Writes to `fd` (not closed); `path` names it in errors.
std::unique_ptr<TraceWriter> make_chrome_json_writer(int fd, std::string path);

}  // namespace evring::cli
