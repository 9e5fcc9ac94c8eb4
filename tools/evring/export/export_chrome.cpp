// The Chrome JSON writer: one line per trace event into an OutputBuffer.
#include "export/export_chrome.hpp"

#include <fmt/format.h>

#include <cstring>
#include <unordered_map>

#include "evring/schema/schema_decode.hpp"
#include "evring/schema/schema_render.hpp"
#include "output/output.hpp"

namespace evring::cli {
namespace {

class ChromeJsonWriter final : public TraceWriter {
public:
    ChromeJsonWriter(int fd, std::string path) : out_(fd), path_(std::move(path)) {
        put("{\"traceEvents\":[\n");
    }

    void track(const TrackInfo& track) override {
        const std::uint64_t tid = tids_.size() + 1;
        tids_.emplace(track.uuid, tid);
        if (track.kind == TrackInfo::Kind::Counter) {
            counter_names_.emplace(track.uuid, json_string_literal(track.name));
            return;
        }
        line_.clear();
        if (track.kind == TrackInfo::Kind::Root) {
            line_ += fmt::format("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"args\":{{\"name\":{}}}}}",
                                 json_string_literal(track.name));
        } else {
            line_ += fmt::format("{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":{},\"args\":{{\"name\":{}}}}}",
                                 tid, json_string_literal(track.name));
        }
        emit();
    }
    void instant(std::uint64_t track, std::uint64_t nanos, std::string_view name, const EventArgs& args) override {
        event("i", track, nanos, name, args);
    }
    void slice_begin(std::uint64_t track, std::uint64_t nanos, std::string_view name,
                     const EventArgs& args) override {
        event("B", track, nanos, name, args);
    }
    void slice_end(std::uint64_t track, std::uint64_t nanos, const EventArgs& args) override {
        event("E", track, nanos, {}, args);
    }
    void counter(std::uint64_t track, std::uint64_t nanos, double value) override {
        line_.clear();
        line_ += fmt::format("{{\"ph\":\"C\",\"name\":{},\"pid\":1,\"tid\":0,\"ts\":", counter_names_[track]);
        append_ts(nanos);
        line_ += fmt::format(",\"args\":{{\"value\":{}}}}}", value);
        emit();
    }
    void maybe_flush() override { out_.maybe_flush(); }
    Status finish() override {
        put(fmt::format("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{{\"producer\":\"evring export\","
                        "\"origin_epoch_nanos\":{}}}}}\n",
                        origin_));
        out_.flush();
        if (out_.failed())
            return Error(out_.error(), fmt::format("cannot write '{}': {}", path_, std::strerror(out_.error())));
        return {};
    }
    std::uint64_t bytes() const override { return written_; }
    std::uint64_t records() const override { return events_; }

private:
    void put(std::string_view text) {
        out_.put(text);
        written_ += text.size();
    }
    void emit() {
        if (!first_) put(",\n");
        first_ = false;
        put(line_);
        ++events_;
    }
    void append_ts(std::uint64_t nanos) {
        if (!have_origin_) {
            origin_ = nanos;
            have_origin_ = true;
        }
        const std::uint64_t since = nanos >= origin_ ? nanos - origin_ : 0;
        line_ += fmt::format("{}.{:03}", since / 1000, since % 1000);
    }

    void event(std::string_view ph, std::uint64_t track, std::uint64_t nanos, std::string_view name,
               const EventArgs& args) {
        line_.clear();
        line_ += fmt::format("{{\"ph\":\"{}\",\"pid\":1,\"tid\":{},\"ts\":", ph, tids_[track]);
        append_ts(nanos);
        if (ph == "i") line_ += ",\"s\":\"t\"";
        if (!name.empty()) line_ += fmt::format(",\"cat\":\"evring\",\"name\":{}", json_string_literal(name));
        line_ += ",\"args\":{";
        append_args(args);
        line_ += "}}";
        emit();
    }

    // The members of the args object (without braces).
    void append_args(const EventArgs& args) {
        bool any = false;
        auto member = [&](std::string_view key) {
            if (any) line_ += ',';
            any = true;
            line_ += json_string_literal(key);
            line_ += ':';
        };
        if (!args.note.empty()) {
            member("note");
            line_ += json_string_literal(args.note);
        }
        if (args.event == nullptr) return;
        const SourceEvent& e = *args.event;
        member("seqno");
        line_ += fmt::format("{}", e.descriptor.seqno);
        for (std::size_t i = 0; i < 4; ++i) {
            if (e.descriptor.content_ext[i] == 0) continue;
            member((*args.flow_names)[i]);
            line_ += fmt::format("{}", e.descriptor.content_ext[i]);
        }
        if (e.payload_state == PayloadState::Expired || e.payload_state == PayloadState::Invalid) {
            member("payload");
            line_ += e.payload_state == PayloadState::Expired ? "\"expired\"" : "\"invalid size\"";
            return;
        }
        if (e.payload_state != PayloadState::Ok) return;
        if (args.schema != nullptr) {
            fields_.clear();
            const DecodeError error = append_fields_json(*args.schema, e.descriptor.event_type, e.payload, fields_, kExportJson);
            if (error.ok()) {
                // fields_ is one object: splice its members in.
                if (fields_.size() > 2) {
                    if (any) line_ += ',';
                    line_.append(fields_, 1, fields_.size() - 2);
                }
                return;
            }
            member("decode_error");
            line_ += json_string_literal(describe_decode_error(*args.schema, error));
        }
        if (e.payload.empty()) return;
        fields_.clear();
        append_shown_bytes(fields_, e.payload);
        member("payload");
        line_ += json_string_literal(fields_);
    }

    OutputBuffer out_;
    std::string path_;
    std::string line_;
    std::string fields_;
    std::unordered_map<std::uint64_t, std::uint64_t> tids_;
    std::unordered_map<std::uint64_t, std::string> counter_names_;
    std::uint64_t origin_ = 0;
    std::uint64_t written_ = 0;
    std::uint64_t events_ = 0;
    bool have_origin_ = false;
    bool first_ = true;
};

}  // namespace

std::unique_ptr<TraceWriter> make_chrome_json_writer(int fd, std::string path) {
    return std::make_unique<ChromeJsonWriter>(fd, std::move(path));
}

}  // namespace evring::cli
