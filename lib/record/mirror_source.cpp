// The mirror pipeline (mirror_source.hpp).
#include "record/mirror_source.hpp"

#include <fmt/format.h>

#include <bit>

#include "evring/ring/ring_writer.hpp"
#include "registry/reader_kinds.hpp"
#include "sink/registering_sink.hpp"
#include "util/text_escape.hpp"

namespace evring {
namespace {

unsigned shift_of(std::uint64_t power_of_two, unsigned fallback) {
    return std::has_single_bit(power_of_two) ? static_cast<unsigned>(std::countr_zero(power_of_two)) : fallback;
}

void say(const MirrorJob& job, std::string_view line) {
    if (job.report) job.report(line);
}

// The mirror ring: the source ring's sizes unless given, its content type,
// schema hash and (when it embeds cleanly) its schema.
Result<RingWriter> create_mirror(const MirrorJob& job, const EventSource& source) {
    RingConfig config = job.ring;
    const SourceIdentity& id = source.identity();
    if (!job.sizes_given && id.ring_size.descriptor_capacity != 0) {
        config.descriptor_shift = shift_of(id.ring_size.descriptor_capacity, config.descriptor_shift);
        config.payload_buf_shift = shift_of(id.ring_size.payload_buf_size, config.payload_buf_shift);
    }
    CreateOptions create;
    create.keep_on_close = job.keep;
    const auto blob = source.schema();
    RingContent content(id.content_type, id.schema_hash, {blob.begin(), blob.end()});
    auto writer = RingWriter::create(RingSpec(config, content), create);
    if (writer || blob.empty()) return writer;
    // A schema that does not embed (damaged, or another hash): the ring without it.
    say(job, fmt::format("the stream's schema cannot be embedded ({}); the mirror ring has none",
                         printable(writer.error().message())));
    return RingWriter::create(RingSpec(config, RingContent(id.content_type, id.schema_hash)), create);
}

void say_started(const MirrorJob& job, const EventSource& source, const RingWriter& writer) {
    const std::string from = printable(source.identity().path);
    say(job, fmt::format("mirroring {} into ring file {}", from, printable(writer.path())));
    if (source.identity().members)
        say(job, fmt::format("{} comes from a ring set: the mirror holds its merged events without their member "
                             "ids (watch or record the stream to keep them)",
                             from));
}

}  // namespace

Result<Mirrored> mirror_source(std::unique_ptr<EventSource>& source, MirrorJob& job) {
    auto writer = create_mirror(job, *source);
    if (!writer) return std::move(writer).error();
    say_started(job, *source, *writer);
    MirrorSink sink(writer->ring(), job.seqno_tag, source->identity().members, job.report);
    RegisteringSink seen(sink, {job.reader_name, reader_kinds::kMirror, fmt::format("-> {}", writer->path())},
                         job.register_reader);
    if (job.interest) seen.set_interest(*job.interest);
    job.follow.payloads = PayloadRead::Copy;
    auto result = follow(source, job.follow, seen);
    if (!result) return std::move(result).error();
    if (!sink.status()) return sink.status().error();
    return Mirrored{*result, sink.events(), writer->path()};
}

}  // namespace evring
