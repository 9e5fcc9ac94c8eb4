// Finding, creating and validating JetStream streams. See nats_connection.hpp.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>

#include "connection_impl.hpp"

namespace evring::nats {
namespace {

// A stream of assembled instances says so, and which span, in its description.
constexpr std::string_view kAssembledHead = "evring relay --assemble: ";
constexpr std::string_view kAssembledTail = " JSON (docs/distributed.md)";

std::string assembled_span_of(const char* description) {
    const std::string_view d = description != nullptr ? description : "";
    if (!d.starts_with(kAssembledHead) || !d.ends_with(kAssembledTail)) return {};
    return std::string(d.substr(kAssembledHead.size(), d.size() - kAssembledHead.size() - kAssembledTail.size()));
}

StreamInfo convert(const jsStreamInfo& si) {
    StreamInfo info;
    const jsStreamConfig& config = *si.Config;
    info.name = config.Name != nullptr ? config.Name : "";
    for (int i = 0; i < config.SubjectsLen; ++i)
        if (config.Subjects[i] != nullptr) info.subjects.emplace_back(config.Subjects[i]);
    info.messages = si.State.Msgs;
    info.bytes = si.State.Bytes;
    info.first_sequence = si.State.Msgs == 0 ? 0 : si.State.FirstSeq;
    info.last_sequence = si.State.LastSeq;
    info.first_time_nanos = si.State.FirstTime;
    info.last_time_nanos = si.State.LastTime;
    info.created_nanos = si.Created;
    info.duplicate_window_nanos = config.Duplicates;
    info.max_message_size = config.MaxMsgSize;
    info.replicas = static_cast<int>(config.Replicas);
    if (si.Cluster != nullptr && si.Cluster->Leader != nullptr) info.leader = si.Cluster->Leader;
    info.file_storage = config.Storage == js_FileStorage;
    info.allow_direct = config.AllowDirect;
    info.limits_retention = config.Retention == js_LimitsPolicy;
    info.writable = !config.Sealed && config.Mirror == nullptr;
    info.assembled_span = assembled_span_of(config.Description);
    return info;
}

// An existing stream must take PREFIX.> and keep what it took.
Status check_existing(const StreamInfo& info, const StreamSpec& spec, std::string_view where) {
    auto fail = [&](std::string reason) {
        return Error(EINVAL, fmt::format("stream '{}' on {} {}", info.name, where, reason));
    };
    if (!info.writable) return fail("is sealed or a mirror: nothing can be published to it");
    if (!info.assembled_span.empty() && spec.assembled_span.empty())
        return fail(fmt::format("carries assembled {} JSON (relay --assemble), not events: relay events into "
                                "another stream", info.assembled_span));
    if (!spec.assembled_span.empty() && info.assembled_span != spec.assembled_span)
        return fail(info.assembled_span.empty()
                        ? std::string("carries events, not assembled JSON: relay --assemble into another stream")
                        : fmt::format("carries assembled {} JSON, not {}: relay --assemble into another stream",
                                      info.assembled_span, spec.assembled_span));
    if (!info.limits_retention)
        return fail("retains messages by interest or as a work queue: a relay needs limits retention, or "
                    "consumers would remove the messages a restarted relay resumes from");
    const bool covered = std::any_of(info.subjects.begin(), info.subjects.end(),
                                     [&](const std::string& s) { return pattern_covers_prefix(s, spec.prefix); });
    if (!covered)
        return fail(fmt::format("captures subjects [{}], which do not cover '{}.>'",
                                fmt::join(info.subjects, ", "), spec.prefix));
    return {};
}

Status create(const Connection::Impl& connection, const StreamSpec& spec) {
    const std::string subject = stream_subject(spec.prefix);
    const char* subjects[] = {subject.c_str()};
    jsStreamConfig config;
    jsStreamConfig_Init(&config);
    config.Name = spec.name.c_str();
    const std::string assembled = fmt::format("{}{}{}", kAssembledHead, spec.assembled_span, kAssembledTail);
    config.Description = spec.assembled_span.empty() ? "evring ring relay (docs/distributed.md)" : assembled.c_str();
    config.Subjects = subjects;
    config.SubjectsLen = 1;
    config.Storage = spec.memory_storage ? js_MemoryStorage : js_FileStorage;
    config.Retention = js_LimitsPolicy;
    config.Discard = js_DiscardOld;
    config.MaxBytes = spec.max_bytes;
    config.MaxMsgs = spec.max_messages;
    config.MaxAge = std::chrono::duration_cast<std::chrono::nanoseconds>(spec.max_age).count();
    config.Duplicates = std::chrono::duration_cast<std::chrono::nanoseconds>(spec.duplicate_window).count();
    config.Replicas = spec.replicas;
    config.AllowDirect = true;
    jsStreamInfo* si = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    natsStatus s = js_AddStream(&si, connection.jetstream, &config, nullptr, &code);
    if (si != nullptr) jsStreamInfo_Destroy(si);
    if (s != NATS_OK && code != JSStreamNameExistErr)  // created meanwhile by another relay: fine
        return detail::nats_error(s, fmt::format("creating stream '{}' on {}", spec.name, connection.where()),
                                  code);
    return {};
}

}  // namespace

Result<StreamInfo> Connection::stream_info(std::string_view stream) const {
    const std::string name(stream);
    jsStreamInfo* si = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    natsStatus s = js_GetStreamInfo(&si, impl_->jetstream, name.c_str(), nullptr, &code);
    if (s == NATS_NOT_FOUND || code == JSStreamNotFoundErr)
        return Error(ENOENT, fmt::format("stream '{}' does not exist on {}", name, impl_->where()));
    if (s != NATS_OK)
        return detail::nats_error(s, fmt::format("getting stream '{}' from {}", name, impl_->where()), code);
    StreamInfo info = convert(*si);
    jsStreamInfo_Destroy(si);
    return info;
}

Result<StreamInfo> Connection::ensure_stream(const StreamSpec& spec) const {
    if (auto s = validate_stream_name(spec.name); !s) return std::move(s).error();
    SubjectLayout layout;
    layout.prefix = spec.prefix;
    if (auto s = validate_subject_layout(layout); !s) return std::move(s).error();
    auto info = stream_info(spec.name);
    if (!info && info.error().errno_value() == ENOENT && spec.create) {
        if (auto s = create(*impl_, spec); !s) return std::move(s).error();
        info = stream_info(spec.name);
    }
    if (!info) return info;
    if (auto s = check_existing(*info, spec, impl_->where()); !s) return std::move(s).error();
    return info;
}

Status Connection::delete_stream(std::string_view stream) const {
    const std::string name(stream);
    jsErrCode code = static_cast<jsErrCode>(0);
    natsStatus s = js_DeleteStream(impl_->jetstream, name.c_str(), nullptr, &code);
    if (s != NATS_OK)
        return detail::nats_error(s, fmt::format("deleting stream '{}' on {}", name, impl_->where()), code);
    return {};
}

std::size_t Connection::message_limit(const StreamInfo& stream) const {
    std::size_t limit = max_payload();
    if (stream.max_message_size > 0) limit = std::min(limit, static_cast<std::size_t>(stream.max_message_size));
    return limit;
}

}  // namespace evring::nats
