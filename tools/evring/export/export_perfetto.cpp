// The Perfetto writer: TracePackets encoded with ProtoWriter, one at a time.
#include "export/export_perfetto.hpp"

#include <fmt/format.h>

#include <cstring>

#include "evring/schema/schema_decode.hpp"
#include "evring/schema/schema_render.hpp"
#include "output/output.hpp"
#include "export/proto_writer.hpp"

namespace evring::cli {
namespace {

namespace pf = perfetto_field;
constexpr std::uint64_t kSequenceId = 1;

// "0x" and the integer's value in hex, most significant digit first, no leading zeros.
std::string wide_hex(std::span<const std::byte> little_endian) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out = "0x";
    bool leading = true;
    for (std::size_t i = little_endian.size(); i-- > 0;) {
        const auto v = std::to_integer<unsigned>(little_endian[i]);
        for (unsigned nibble : {v >> 4, v & 15u}) {
            if (leading && nibble == 0) continue;
            leading = false;
            out += kDigits[nibble];
        }
    }
    if (leading) out += '0';
    return out;
}

// The payload's fields as DebugAnnotations of the open TrackEvent: a field of
// the payload is a top-level annotation, a nested struct's fields its
// dict_entries, an array's elements its array_values.
//
// Bounded like every rendering of a payload (schema_render.hpp): once the
// annotations written reach `bound` bytes the walk stops, and a last
// top-level annotation "(truncated)" = true says so.
class AnnotationVisitor final : public FieldVisitor {
public:
    AnnotationVisitor(ProtoWriter& w, std::size_t bound) : w_(w), start_(w.size()), bound_(bound) {}

    bool full() override {
        if (w_.size() - start_ < bound_) return false;
        truncated_ = true;
        return true;
    }
    void begin_struct(std::string_view name, const SchemaStruct*) override {
        if (depth_++ == 0) return;  // the payload itself: its fields are top level
        push(name, false);
    }
    void end_struct() override {
        if (--depth_ == 0) {
            if (truncated_) {
                auto h = open("(truncated)");
                w_.boolean(pf::kAnnotationBool, true);
                w_.end(h);
            }
            return;
        }
        pop();
    }
    void begin_array(std::string_view name, std::uint64_t) override {
        ++depth_;
        push(name, true);
    }
    void end_array() override {
        --depth_;
        pop();
    }
    void scalar(std::string_view name, const ScalarValue& v) override {
        auto h = open(name);
        switch (v.type) {
        case Scalar::I8: case Scalar::I16: case Scalar::I32: case Scalar::I64:
            w_.sint64_as_int(pf::kAnnotationInt, v.i);
            break;
        case Scalar::F32: case Scalar::F64:
            w_.float64(pf::kAnnotationDouble, v.f);
            break;
        case Scalar::Bool:
            if (v.u <= 1) w_.boolean(pf::kAnnotationBool, v.u == 1);
            else w_.uint(pf::kAnnotationUint, v.u);
            break;
        default:
            w_.uint(pf::kAnnotationUint, v.u);
        }
        w_.end(h);
    }
    void enumeration(std::string_view name, const SchemaEnum& type, const ScalarValue& v,
                     std::string_view value_name) override {
        if (value_name.empty()) {
            auto h = open(name);
            if (type.is_signed()) w_.sint64_as_int(pf::kAnnotationInt, v.i);
            else w_.uint(pf::kAnnotationUint, v.u);
            w_.end(h);
            return;
        }
        string_value(name, value_name);
    }
    void bytes(std::string_view name, std::span<const std::byte> value) override {
        text_.clear();
        append_shown_bytes(text_, value);
        string_value(name, text_);
    }
    void wide_integer(std::string_view name, Scalar, std::span<const std::byte> le) override {
        string_value(name, wide_hex(le));
    }

    void string_value(std::string_view name, std::string_view value) {
        auto h = open(name);
        w_.string(pf::kAnnotationString, value);
        w_.end(h);
    }
    void uint_value(std::string_view name, std::uint64_t value) {
        auto h = open(name);
        w_.uint(pf::kAnnotationUint, value);
        w_.end(h);
    }

private:
    struct Level {
        ProtoWriter::Nested handle;
        bool array;
    };
    ProtoWriter::Nested open(std::string_view name) {
        const bool in_array = !stack_.empty() && stack_.back().array;
        const std::uint32_t field = stack_.empty() ? pf::kEventDebugAnnotations
                                    : in_array     ? pf::kAnnotationArrayValues
                                                   : pf::kAnnotationDictEntries;
        auto h = w_.begin(field);
        if (!in_array) w_.string(pf::kAnnotationName, name);
        return h;
    }
    void push(std::string_view name, bool array) { stack_.push_back(Level{open(name), array}); }
    void pop() {
        w_.end(stack_.back().handle);
        stack_.pop_back();
    }

    ProtoWriter& w_;
    std::size_t start_;
    std::size_t bound_;
    bool truncated_ = false;
    std::vector<Level> stack_;
    int depth_ = 0;
    std::string text_;
};

class PerfettoWriter final : public TraceWriter {
public:
    PerfettoWriter(int fd, std::string path) : out_(fd), path_(std::move(path)) {}

    void track(const TrackInfo& track) override {
        auto packet = begin_packet();
        auto d = w_.begin(pf::kTrackDescriptor);
        w_.uint(pf::kTrackUuid, track.uuid);
        w_.string(pf::kTrackName, track.name);
        if (track.parent != 0) w_.uint(pf::kTrackParentUuid, track.parent);
        if (track.kind == TrackInfo::Kind::Root) {
            auto p = w_.begin(pf::kTrackProcess);
            w_.uint(pf::kProcessPid, 1);
            w_.string(pf::kProcessName, track.name);
            w_.end(p);
        }
        if (track.kind == TrackInfo::Kind::Counter) {
            auto c = w_.begin(pf::kTrackCounter);
            w_.uint(pf::kCounterUnit, pf::kUnitCount);
            w_.string(pf::kCounterUnitName, track.unit);
            w_.end(c);
        }
        w_.end(d);
        end_packet(packet);
    }
    void instant(std::uint64_t track, std::uint64_t nanos, std::string_view name, const EventArgs& args) override {
        event(pf::kTypeInstant, track, nanos, name, args);
    }
    void slice_begin(std::uint64_t track, std::uint64_t nanos, std::string_view name,
                     const EventArgs& args) override {
        event(pf::kTypeSliceBegin, track, nanos, name, args);
    }
    void slice_end(std::uint64_t track, std::uint64_t nanos, const EventArgs& args) override {
        event(pf::kTypeSliceEnd, track, nanos, {}, args);
    }
    void counter(std::uint64_t track, std::uint64_t nanos, double value) override {
        auto packet = begin_packet(nanos);
        auto e = w_.begin(pf::kTrackEvent);
        w_.uint(pf::kEventType, pf::kTypeCounter);
        w_.uint(pf::kEventTrackUuid, track);
        w_.float64(pf::kEventDoubleCounterValue, value);
        w_.end(e);
        end_packet(packet);
    }
    void maybe_flush() override { out_.maybe_flush(); }
    Status finish() override {
        out_.flush();
        if (out_.failed())
            return Error(out_.error(), fmt::format("cannot write '{}': {}", path_, std::strerror(out_.error())));
        return {};
    }
    std::uint64_t bytes() const override { return written_; }
    std::uint64_t records() const override { return packets_; }

private:
    ProtoWriter::Nested begin_packet(std::uint64_t nanos = 0) {
        w_.clear();
        auto packet = w_.begin(pf::kTracePacket);
        if (nanos != 0) w_.uint(pf::kTimestamp, nanos);
        w_.uint(pf::kTrustedPacketSequenceId, kSequenceId);
        if (first_) w_.uint(pf::kSequenceFlags, pf::kSeqIncrementalStateCleared);
        first_ = false;
        return packet;
    }
    void end_packet(ProtoWriter::Nested packet) {
        w_.end(packet);
        const auto bytes = w_.bytes();
        out_.put(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
        written_ += bytes.size();
        ++packets_;
    }

    void event(std::uint64_t type, std::uint64_t track, std::uint64_t nanos, std::string_view name,
               const EventArgs& args) {
        auto packet = begin_packet(nanos);
        auto e = w_.begin(pf::kTrackEvent);
        w_.uint(pf::kEventType, type);
        w_.uint(pf::kEventTrackUuid, track);
        if (type != pf::kTypeSliceEnd) {
            w_.string(pf::kEventCategories, "evring");
            w_.string(pf::kEventName, name);
        }
        annotations(args);
        w_.end(e);
        end_packet(packet);
    }

    void annotations(const EventArgs& args) {
        AnnotationVisitor v(w_, args.event != nullptr ? output_bound(kDefaultMaxOutput, args.event->payload.size())
                                                      : SIZE_MAX);
        if (!args.note.empty()) v.string_value("note", args.note);
        if (args.event == nullptr) return;
        const SourceEvent& e = *args.event;
        v.uint_value("seqno", e.descriptor.seqno);
        for (std::size_t i = 0; i < 4; ++i)
            if (e.descriptor.content_ext[i] != 0) v.uint_value((*args.flow_names)[i], e.descriptor.content_ext[i]);
        if (e.payload_state == PayloadState::Expired) return v.string_value("payload", "expired");
        if (e.payload_state == PayloadState::Invalid) return v.string_value("payload", "invalid size");
        if (e.payload_state != PayloadState::Ok) return;
        if (args.schema != nullptr) {
            const DecodeError error = check_payload(*args.schema, e.descriptor.event_type, e.payload);
            if (error.ok()) {
                visit_payload(*args.schema, e.descriptor.event_type, e.payload, v);
                return;
            }
            v.string_value("decode_error", describe_decode_error(*args.schema, error));
        }
        if (e.payload.empty()) return;
        text_.clear();
        append_shown_bytes(text_, e.payload);
        v.string_value("payload", text_);
    }

    OutputBuffer out_;
    std::string path_;
    ProtoWriter w_;
    std::string text_;
    std::uint64_t written_ = 0;
    std::uint64_t packets_ = 0;
    bool first_ = true;
};

}  // namespace

std::unique_ptr<TraceWriter> make_perfetto_writer(int fd, std::string path) {
    return std::make_unique<PerfettoWriter>(fd, std::move(path));
}

}  // namespace evring::cli
