// Assembled instances into a new ring (assembled_mirror.hpp).
#include "record/assembled_mirror.hpp"

#include <fmt/format.h>

#include <cstring>

#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_writer.hpp"
#include "evring/schema/schema_embed.hpp"
#include "record/assembled_schema.hpp"
#include "registry/reader_kinds.hpp"
#include "sink/registering_sink.hpp"
#include "util/text_escape.hpp"

namespace evring {
namespace {

class AssembledMirrorSink final : public FollowSink {
public:
    AssembledMirrorSink(SpanAssembler& assembler, const MappedRing& ring, const AssembledMirror& assemble,
                        MirrorSink::Report report)
        : assembler_(assembler), publisher_(ring, WriterSharing::Exclusive), assemble_(assemble),
          report_(std::move(report)) {}

    bool event(const SourceEvent& event) override {
        assembler_.event(event);
        return write_ready();
    }
    bool gap(const SourceGap& gap) override {
        assembler_.gap(gap);  // the instances it breaks are written as broken
        say(fmt::format("source seqno {}..{} lost: {}", gap.first_seqno, gap.last_seqno(), describe(gap.reason)));
        return write_ready();
    }
    void notice(std::string_view text) override { say(printable(text)); }
    bool finish() {
        assembler_.end();
        return write_ready();
    }
    const Status& status() const { return status_; }
    std::uint64_t events() const { return events_; }

private:
    bool write_ready() {
        while (auto s = assembler_.take())
            if (!write(*s)) return false;
        return true;
    }
    bool write(const AssembledSpan& s) {
        const std::string json = assembled_json(s, assembler_.schema(), assemble_.json);
        Reservation r = publisher_.reserve(kAssembledHeaderSize + json.size());
        if (!r) {
            status_ = Error(EFBIG, fmt::format("{} is {} bytes of JSON; the mirror ring takes payloads of {} bytes at "
                                               "most: give --to NAME:DESC_SHIFT:PAYLOAD_SHIFT with a larger "
                                               "PAYLOAD_SHIFT",
                                               assembled_name(s, assemble_.stage), json.size(),
                                               publisher_.max_payload_size()));
            return false;
        }
        EventDescriptor& d = r.descriptor();
        d.event_type = kAssembledSpanEvent;
        // When the instance was complete: the event that marked its last stage (or its last event).
        d.record_epoch_nanos = s.stages.empty() ? s.events.back().descriptor.record_epoch_nanos : s.stages.back().nanos;
        const std::uint64_t header[2] = {s.label, json.size()};
        std::memcpy(r.payload(), header, sizeof header);
        std::memcpy(r.payload() + sizeof header, json.data(), json.size());
        publisher_.commit(r);
        ++events_;
        return true;
    }
    void say(std::string_view line) const {
        if (report_) report_(line);
    }

    SpanAssembler& assembler_;
    Publisher publisher_;
    const AssembledMirror& assemble_;
    MirrorSink::Report report_;
    Status status_;
    std::uint64_t events_ = 0;
};

Result<RingWriter> create_ring(const MirrorJob& job) {
    RingConfig config = job.ring;
    if (!job.sizes_given) {
        config.descriptor_shift = kAssembledDescriptorShift;
        config.payload_buf_shift = kAssembledPayloadBufShift;
    }
    CreateOptions create;
    create.keep_on_close = job.keep;
    return RingWriter::create(RingSpec(config, ring_content(assembled_schema())), create);
}

}  // namespace

Result<AssembledMirrored> mirror_assembled(std::unique_ptr<EventSource>& source, MirrorJob& job, const Schema& schema,
                                           const AssembledMirror& assemble) {
    auto assembler = SpanAssembler::make(schema, assemble.span, assemble.stage);
    if (!assembler) return std::move(assembler).error();
    static_assert(kAssembledHeaderSize == 2 * sizeof(std::uint64_t));
    auto writer = create_ring(job);
    if (!writer) return std::move(writer).error();
    if (job.report)
        job.report(fmt::format("mirroring {} instances of {} into ring file {}", assemble.span,
                               printable(source->identity().path), printable(writer->path())));
    AssembledMirrorSink sink(*assembler, writer->ring(), assemble, job.report);
    RegisteringSink seen(sink, {job.reader_name, reader_kinds::kMirror, fmt::format("-> {}", writer->path())},
                         job.register_reader);
    if (job.interest) seen.set_interest(*job.interest);
    job.follow.payloads = PayloadRead::Copy;  // labels, ids and stages are in payloads
    auto result = follow(source, job.follow, seen);
    if (!result) return std::move(result).error();
    if (sink.status()) sink.finish();
    if (!sink.status()) return sink.status().error();
    return AssembledMirrored{Mirrored{*result, sink.events(), writer->path()}, assembler->counts()};
}

}  // namespace evring
