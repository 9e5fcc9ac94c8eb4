// A named reader on a binding's source (named_session.hpp).
#include "named_session.hpp"

#include <fmt/format.h>

#include <vector>

#include "evring/source/position.hpp"
#include "query/span_seek.hpp"
#include "reader_session.hpp"

namespace evring::bindings {

Status resume_named(evring_source& handle, std::string_view name, std::string_view first_start, bool reset,
                    std::string_view caller) {
    if (handle.named)
        return Error(EINVAL, fmt::format("{}: this source is reader '{}' already", caller, handle.named->name()));
    // The position must be decided before anything is handed out, or a
    // commit would cover events the resume never accounted for.
    if (handle.source->counters().events != 0)
        return Error(EINVAL, fmt::format("{}: call it before the first event is read", caller));
    auto start = parse_start(first_start, "start");
    if (!start) return std::move(start).error().context(caller);
    auto reader = NamedReader::open(name);
    if (!reader) return std::move(reader).error().context(caller);
    std::vector<std::string> notices;
    auto resumed = (*reader)->resume(*handle.source, *start, false, reset, notices);
    if (!resumed) return std::move(resumed).error().context(caller);
    auto noted = seek_source(*handle.source, *resumed, handle.schema.schema ? &*handle.schema.schema : nullptr);
    if (!noted) return std::move(noted).error().context(fmt::format("{}: reader '{}'", caller, name));
    if (!noted->empty()) notices.push_back(std::move(*noted));
    (*reader)->started(*handle.source);
    handle.named = std::move(*reader);
    handle.named_notices.clear();
    for (std::string& text : notices) {
        if (!handle.named_notices.empty()) handle.named_notices += '\n';
        handle.named_notices += text;
        hold_notice(handle, std::move(text));
    }
    publish_position(handle);
    return {};
}

Status commit_named(evring_source& handle, std::string_view caller) {
    if (!handle.named)
        return Error(EINVAL, fmt::format("{}: not a named reader (resume it by a name first)", caller));
    if (auto s = handle.named->commit(handle.named_ended); !s)
        return std::move(s).error().context(fmt::format("{}: reader '{}'", caller, handle.named->name()));
    return {};
}

}  // namespace evring::bindings
