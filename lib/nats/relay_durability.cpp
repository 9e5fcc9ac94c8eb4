// A relay's durability warning (relay_durability.hpp).
#include "nats/relay_durability.hpp"

#include <fmt/format.h>

namespace evring::nats {

std::optional<std::string> durability_warning(const StreamInfo& stream, bool server_syncs_writes) {
    constexpr const char* kSee = "docs/distributed.md, \"What 'nothing lost' holds under\"";
    if (!stream.file_storage)
        return fmt::format("stream '{}' keeps its messages in memory: a restart of nats-server loses all of "
                           "them, acknowledged or not ({})",
                           stream.name, kSee);
    if (server_syncs_writes) return std::nullopt;
    const std::string where =
        stream.replicas <= 1 ? std::string("its server's host crashes or loses power")
                             : fmt::format("hosts holding a majority of its {} replicas crash or lose power",
                                           stream.replicas);
    return fmt::format("stream '{}': nats-server acknowledges a message before it syncs it to disk (every 2 minutes "
                       "by default), so an acknowledged event is lost if {} before then; configure the server with "
                       "'jetstream {{ sync_interval: always }}' (nats-server 2.10 or later) and pass --server-syncs "
                       "({})",
                       stream.name, where, kSee);
}

}  // namespace evring::nats
