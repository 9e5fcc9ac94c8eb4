// Opening a source with its schema (source_handle.hpp).
#include "source_handle.hpp"

#include <fmt/format.h>

#include "evring/source/position.hpp"
#include "query/span_seek.hpp"
#include "reader_session.hpp"

namespace evring::bindings {

Result<std::unique_ptr<evring_source>> open_source_handle(const std::string& location,
                                                          const OpenSettings& settings) {
    auto source = open_source(location, settings.source);
    if (!source) return std::move(source).error();
    auto schema = find_source_schema(**source, settings.schema_path);
    if (!schema) return std::move(schema).error().context(fmt::format("opening '{}'", location));
    auto handle = std::make_unique<evring_source>();
    handle->source = std::move(*source);
    handle->schema = std::move(*schema);
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
