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
#include "digest_cmd.hpp"
#include "digest_read.hpp"
#include "output/json.hpp"
#include "output/values.hpp"

namespace evring::cli {
namespace {

class DigestSink final : public ComparedSink {
public:
    explicit DigestSink(const ComparedSource& read) : ComparedSink(read), ctx_(EVP_MD_CTX_new()) {
        ok_ = ctx_ != nullptr && EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) == 1;
    }
    ~DigestSink() override { EVP_MD_CTX_free(ctx_); }
    DigestSink(const DigestSink&) = delete;
    DigestSink& operator=(const DigestSink&) = delete;

    std::string hex() {
        unsigned char out[EVP_MAX_MD_SIZE];
        unsigned int length = 0;
        if (!ok_ || EVP_DigestFinal_ex(ctx_, out, &length) != 1) return {};
        std::string text;
        for (unsigned int i = 0; i < length; ++i) text += fmt::format("{:02x}", out[i]);
        return text;
    }

private:
    bool take(const SourceEvent& e, const EventDescriptor& blanked) override {
        std::uint8_t record[65];
        std::memcpy(record, &blanked, 64);  // the descriptor's layout is little-endian and fixed (format.hpp)
        record[64] = e.payload_state == PayloadState::Ok ? 1 : 2;  // 2: expired or invalid, no bytes
        ok_ = ok_ && EVP_DigestUpdate(ctx_, record, sizeof record) == 1;
        if (e.payload_state == PayloadState::Ok)
            ok_ = ok_ && EVP_DigestUpdate(ctx_, e.payload.data(), e.payload.size()) == 1;
        return ok_;
    }

    EVP_MD_CTX* ctx_;
    bool ok_ = false;
};

}  // namespace

Command add_digest(CLI::App& app) {
    auto options = std::make_shared<DigestOptions>();
    DigestOptions& o = *options;
    auto* c = app.add_subcommand("digest", "One SHA-256 over the events of a source, to compare sources");
    c->add_option("SOURCE", o.source, "Ring name or path, snapshot, recording or stream")->required();
    o.read.add_to(*c, true);
    c->add_flag("--json", o.json, "One JSON object");
    return {c, [options] { return run_digest(*options); }};
}

int run_digest(DigestOptions& options) {
    ComparedSource read;
    if (int code = open_compared(options.source, options.read, read); code != kExitOk) return code;
    Reading& r = *read.reading;
    auto& source = r.source();
    DigestSink sink(read);
    // --name: the events since the last run; committed once the result is printed.
    std::vector<std::string> notices;
    const Status resumed = r.resume_named(notices);
    for (const auto& notice : notices) report_error(notice);
    if (!resumed) return exit_code(resumed.error());
    auto result = r.run(sink, {}, CommitSink::kAtEnd);
    if (!result) return runtime_error(result.error());
    const std::string hex = sink.hex();
    if (hex.empty()) return runtime_error(Error(EIO, "SHA-256 failed (OpenSSL)"));
    if (options.json) {
        JsonObject o;
        o.string("digest", hex).number("events", sink.events()).number("gaps", sink.gaps())
            .number("gap_seqnos", sink.gap_seqnos()).string("source", source->identity().path);
        fmt::print("{}\n", o.text());
    } else {
        fmt::print("{}  {} events, {} gaps ({} seqnos)\n", hex, sink.events(), sink.gaps(), sink.gap_seqnos());
    }
    if (auto s = commit_printed(r.named(), *result); !s) return runtime_error(s.error());
    if (!result->damaged) return kExitOk;
    return damaged_error(source->identity().path,
                         "the digest covers only what could be read (the damaged part counts as gaps)");
}

}  // namespace evring::cli
