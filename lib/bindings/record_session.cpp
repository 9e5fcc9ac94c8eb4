// Recording a reader handle's events (record_session.hpp).
#include "record_session.hpp"

#include <fmt/format.h>

#include "query/span_labels_schema.hpp"
#include "source/span_labels.hpp"

namespace evring::bindings {
namespace {

// The handle stands where its caller put it: the loop starts there.
Result<std::string> stay(EventSource&, const Position&, const Schema*) { return std::string(); }

// `until` into the loop's stop; a span's label (block:N) needs the handle's
// schema and a label table the loop fills as it reads.
Status plan_stop(const evring_source& handle, const RecordRequest& request, FollowOptions& follow,
                 std::optional<SpanLabels>& labels) {
    if (!request.until) return {};
    auto stop = parse_stop(*request.until, "until");
    if (!stop) return Error(EINVAL, fmt::format("{}: {}", request.caller, stop.error().message()));
    follow.stop = *stop;
    if (stop->kind != Position::Kind::Span) return {};
    if (!handle.schema.schema)
        return Error(EINVAL, fmt::format("{}: until '{}' names a span, and the source has no schema", request.caller,
                                         *request.until));
    auto limit = span_stop_for(*stop, *handle.schema.schema);
    if (!limit) return Error(EINVAL, fmt::format("{}: {}", request.caller, limit.error().message()));
    labels.emplace(span_labels_for(*handle.schema.schema));
    if (!labels->any())
        return Error(EINVAL, fmt::format("{}: until '{}': the schema's spans have no labels", request.caller,
                                         *request.until));
    follow.span_labels = &*labels;
    follow.span_stop = *limit;
    return {};
}

}  // namespace

Result<Recorded> record_handle(evring_source& handle, const RecordRequest& request) {
    if (request.level < 1 || request.level > 19)
        return Error(EINVAL, fmt::format("{}: level {} is not a zstd level (1 to 19)", request.caller, request.level));
    if (request.threads < 1 || request.threads > kMaxRecordingThreads)
        return Error(EINVAL, fmt::format("{}: threads {} is not 1 to {}", request.caller, request.threads,
                                         kMaxRecordingThreads));
    RecordJob job;
    job.output = request.output;
    job.follow.seek = stay;
    job.follow.count = request.count;
    job.follow.where = handle.where.get();
    job.follow.schema = handle.schema.schema ? &*handle.schema.schema : nullptr;
    std::optional<SpanLabels> labels;
    if (auto s = plan_stop(handle, request, job.follow, labels); !s) return std::move(s).error();
    job.recording.compress = request.compress;
    job.recording.compression_level = request.level;
    job.recording.rotate_bytes = request.rotate_bytes;
    job.recording.threads = request.threads;
    job.schema = job.follow.schema;
    job.register_reader = false;  // the handle registered itself, or chose not to
    job.registration = handle.registration.get();
    job.named = handle.named.get();
    job.keep_going = request.keep_going;
    return record_source(handle.source, job);
}

}  // namespace evring::bindings
