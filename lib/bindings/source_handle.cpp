// Opening a source with its schema (source_handle.hpp).
#include "source_handle.hpp"

#include <fmt/format.h>

#include "evring/source/position.hpp"
#include "query/span_seek.hpp"
#include "read/reading.hpp"
#include "reader_session.hpp"

namespace evring::bindings {

Result<std::unique_ptr<evring_source>> open_source_handle(const std::string& location,
                                                          const OpenSettings& settings) {
    // The read pipeline's open and schema (read/reading.hpp), as every
    // command's; what a handle selects is set on it afterwards.
    ReadRequest request;
    request.location = location;
    request.source = settings.source;
    if (!settings.schema_path.empty()) request.schema_file = settings.schema_path;
    auto reading = Reading::open(std::move(request));
    if (!reading) return std::move(reading).error();
    if (auto s = (*reading)->find_schema(); !s) return std::move(s).error().context(fmt::format("opening '{}'", location));
    auto handle = std::make_unique<evring_source>();
    handle->source = std::move((*reading)->source());
    handle->open_options = settings.source;
    handle->schema = source_schema_of((*reading)->take_schema(), settings.schema_path);
    return handle;
}

Status seek_source(evring_source& handle, const std::string& position, std::string_view option) {
    auto start = parse_start(position, option);
    if (!start) return std::move(start).error();
    // Span positions (block:N) decode through the handle's schema (span_seek.hpp).
    auto notice = evring::seek_source(*handle.source, *start, handle.schema.schema ? &*handle.schema.schema : nullptr);
    if (!notice) return std::move(notice).error();
    handle.notice = std::move(*notice);
    publish_position(handle);
    return {};
}

}  // namespace evring::bindings
