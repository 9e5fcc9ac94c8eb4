// evring digest (digest_cmd.hpp): SHA-256 (OpenSSL's EVP interface) over one
// 64-byte little-endian record per event (its descriptor, with the blanked
// words zeroed), a payload state byte, and the payload bytes when read.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "commands.hpp"
#include "evring/schema/schema_resolve.hpp"
#include "digest_cmd.hpp"
#include "output/json.hpp"
#include "open.hpp"
#include "ops/stop.hpp"
#include "output/values.hpp"

namespace evring::cli {
namespace {

class DigestSink final : public FollowSink {
public:
    DigestSink(bool blank_time, bool blank_offset, bool blank_seqno, std::array<bool, 4> blank_flow)
        : ctx_(EVP_MD_CTX_new()), blank_time_(blank_time), blank_offset_(blank_offset), blank_seqno_(blank_seqno),
          blank_flow_(blank_flow) {
        ok_ = ctx_ != nullptr && EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) == 1;
    }
    ~DigestSink() override { EVP_MD_CTX_free(ctx_); }
    DigestSink(const DigestSink&) = delete;
    DigestSink& operator=(const DigestSink&) = delete;

    // --member: only these members of a ring set (empty: all).
    void only_members(std::vector<std::uint32_t> members) { members_ = std::move(members); }

    bool event(const SourceEvent& e) override {
        if (!wanted(e.member)) return true;
        EventDescriptor d = e.descriptor;
        d.reserved = 0;
        if (blank_time_) d.record_epoch_nanos = 0;
        if (blank_offset_) d.payload_buf_offset = 0;
        if (blank_seqno_) d.seqno = 0;
        for (std::size_t i = 0; i < 4; ++i)
            if (blank_flow_[i]) d.content_ext[i] = 0;
        std::uint8_t record[65];
        std::memcpy(record, &d, 64);  // the descriptor's layout is little-endian and fixed (format.hpp)
        record[64] = e.payload_state == PayloadState::Ok ? 1 : 2;  // 2: expired or invalid, no bytes
        ok_ = ok_ && EVP_DigestUpdate(ctx_, record, sizeof record) == 1;
        if (e.payload_state == PayloadState::Ok)
            ok_ = ok_ && EVP_DigestUpdate(ctx_, e.payload.data(), e.payload.size()) == 1;
        ++events_;
        return ok_;
    }
    bool gap(const SourceGap& g) override {
        if (!wanted(g.member)) return true;
        ++gaps_;
        gap_seqnos_ += g.count;
        return true;
    }
    // A live ring: digest what is there. A stream is read up to a stop
    // position instead (run_digest): it is idle while messages are fetched.
    bool idle() override { return keep_waiting_; }
    void keep_waiting() { keep_waiting_ = true; }

    std::string hex() {
        unsigned char out[EVP_MAX_MD_SIZE];
        unsigned int length = 0;
        if (!ok_ || EVP_DigestFinal_ex(ctx_, out, &length) != 1) return {};
        std::string text;
        for (unsigned int i = 0; i < length; ++i) text += fmt::format("{:02x}", out[i]);
        return text;
    }
    std::uint64_t events() const { return events_; }
    std::uint64_t gaps() const { return gaps_; }
    std::uint64_t gap_seqnos() const { return gap_seqnos_; }

private:
    bool wanted(std::uint32_t member) const {
        return members_.empty() || std::find(members_.begin(), members_.end(), member) != members_.end();
    }

    EVP_MD_CTX* ctx_;
    std::vector<std::uint32_t> members_;
    bool ok_ = false;
    bool blank_time_, blank_offset_, blank_seqno_;
    bool keep_waiting_ = false;
    std::array<bool, 4> blank_flow_;
    std::uint64_t events_ = 0, gaps_ = 0, gap_seqnos_ = 0;
};

// The sequence number of a stream's newest event now (read from a second
// reader at `latest`), so that a digest of a stream covers what it held when
// the digest started, as for a live ring; nullopt when it holds none within
// a few seconds.
std::optional<std::uint64_t> newest_in_stream(const std::string& location) {
    auto probe = open_for_command(location, {});
    if (!probe || !(*probe)->seek(Position::latest())) return std::nullopt;
    SourceItem item;
    for (int i = 0; i < 100 && !stop_requested(); ++i) {
        switch ((*probe)->next(item)) {
        case SourceStep::Event: return item.event.descriptor.seqno;
        case SourceStep::NotReady: (*probe)->wait(std::chrono::milliseconds(50)); break;
        case SourceStep::Gap:
        case SourceStep::Notice: break;
        case SourceStep::End:
        case SourceStep::Failed: return std::nullopt;
        }
    }
    return std::nullopt;
}

}  // namespace

Command add_digest(CLI::App& app) {
    auto options = std::make_shared<DigestOptions>();
    DigestOptions& o = *options;
    auto* c = app.add_subcommand("digest", "One SHA-256 over the events of a source, to compare sources");
    c->add_option("SOURCE", o.source, "Ring name or path, snapshot, recording or stream")->required();
    o.select.add_range(*c);
    o.select.add_filters(*c);
    o.select.add_name(*c);
    o.select.add_member(*c);
    c->add_flag("--blank-time", o.blank_time, "Leave record_epoch_nanos out (Monad's digest -T)");
    c->add_flag("--blank-offset", o.blank_offset, "Leave payload_buf_offset out (-P)");
    c->add_flag("--blank-seqno", o.blank_seqno, "Leave seqno out (a ring evring mirror filled numbers from 1)");
    c->add_option("--blank-flow", o.blank_flows, "Leave this flow tag out: a name, an index 0-3, or all (-C; repeatable)")
        ->type_name("TAG")
        ->allow_extra_args(false);
    c->add_option("--schema", o.schema_file, "Schema file naming the flow tags")->type_name("FILE");
    c->add_flag("--json", o.json, "One JSON object");
    return {c, [options] { return run_digest(*options); }};
}

int run_digest(DigestOptions& options) {
    FollowOptions follow_options;
    if (auto s = options.select.check(follow_options); !s) return usage_error(s.error());
    auto source = open_for_command(options.source, {});
    if (!source) return runtime_error(source.error());
    if (!options.select.members.empty() && !(*source)->identity().members)
        return usage_error(Error(EINVAL, fmt::format("--member picks members of a ring set; '{}' is a {}",
                                                     options.source, describe((*source)->kind()))));
    auto found = resolve_schema(**source, {.schema_file = options.schema_file});
    if (!found) return runtime_error(found.error());
    if (!found->warning.empty()) report_error(found->warning);
    const Schema* schema = found->schema ? &*found->schema : nullptr;
    // --type, --flow and --where: a digest of the events they keep, so two
    // sources can be compared on a part (one block, one type).
    if (auto s = options.select.resolve(follow_options, schema, **source); !s) return exit_code(s.error());
    std::array<bool, 4> blank{};
    for (const auto& tag : options.blank_flows) {
        if (tag == "all") { blank.fill(true); continue; }
        if (tag.size() == 1 && tag[0] >= '0' && tag[0] <= '3') { blank[static_cast<std::size_t>(tag[0] - '0')] = true; continue; }
        auto index = schema ? schema->flow_tag(tag) : std::nullopt;
        if (!index)
            return usage_error(Error(EINVAL, fmt::format("bad --blank-flow '{}': expected an index 0-3, all, or a flow "
                                                         "tag name of the source's schema", tag)));
        blank[*index] = true;
    }
    follow_options.payloads = PayloadRead::Copy;
    install_stop_handlers();
    follow_options.stop_flag = &stop_flag();
    DigestSink sink(options.blank_time, options.blank_offset, options.blank_seqno, blank);
    sink.only_members(options.select.members);
    if ((*source)->kind() == SourceKind::Stream) {
        if (follow_options.stop.kind == Position::Kind::None && follow_options.count == 0) {
            auto newest = newest_in_stream(options.source);
            if (!newest) return runtime_error(Error(ENOENT, fmt::format("stream '{}' holds no event to digest",
                                                                        (*source)->identity().path)));
            follow_options.stop = Position::seqno(*newest);
        }
        sink.keep_waiting();
    }
    // --name: the events since the last run; committed once the result is printed.
    auto named = options.select.resume_named(follow_options, **source);
    if (!named) return exit_code(named.error());
    std::optional<CommitSink> committing;
    if (*named) committing.emplace(sink, **named, [] { return true; }, CommitSink::kAtEnd);
    auto result = follow(*source, follow_options, committing ? static_cast<FollowSink&>(*committing) : sink);
    if (!result) return runtime_error(result.error());
    const std::string hex = sink.hex();
    if (hex.empty()) return runtime_error(Error(EIO, "SHA-256 failed (OpenSSL)"));
    if (options.json) {
        JsonObject o;
        o.string("digest", hex).number("events", sink.events()).number("gaps", sink.gaps())
            .number("gap_seqnos", sink.gap_seqnos()).string("source", (*source)->identity().path);
        fmt::print("{}\n", o.text());
    } else {
        fmt::print("{}  {} events, {} gaps ({} seqnos)\n", hex, sink.events(), sink.gaps(), sink.gap_seqnos());
    }
    if (auto s = commit_printed(named->get(), *result); !s) return runtime_error(s.error());
    return result->damaged ? kExitRuntime : kExitOk;
}

}  // namespace evring::cli
