// open_stream_source (include/evring/nats/nats_source.hpp): a nats:// URL to a
// StreamReader on a connection of its own, and the "nats" scheme of
// open_source.
#include "evring/nats/nats_source.hpp"

#include <fmt/format.h>

#include <cerrno>

#include "nats/nats_reader.hpp"

namespace evring::nats {

Result<std::unique_ptr<EventSource>> open_stream_source(std::string_view location, const ConnectOptions& connect) {
    auto url = parse_url(location);
    if (!url) return std::move(url).error();
    if (url->stream.empty())
        return Error(EINVAL, fmt::format("'{}' names no stream: expected nats://HOST[:PORT]/STREAM", url->display()));
    auto connection = Connection::connect(*url, connect);
    if (!connection) return std::move(connection).error();
    ReaderOptions options;
    options.stream = url->stream;
    auto reader = StreamReader::open(std::make_unique<Connection>(std::move(connection).value()), options, location);
    if (!reader) return Error(reader.error().errno_value(), fmt::format("'{}': {}", url->display(), reader.error().message()));
    if (!(*reader)->announcement())
        return Error(ENOENT, fmt::format("'{}': the stream holds no relayed ring (no evring announcement)",
                                         url->display()));
    return std::unique_ptr<EventSource>(std::move(reader).value());
}

void register_nats_source_scheme() {
    register_source_scheme("nats", [](std::string_view location, const SourceOptions&) {
        return open_stream_source(location);
    });
}

}  // namespace evring::nats
