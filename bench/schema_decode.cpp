// evring-schema-decode: how fast events decode to JSON (docs/schema.md).
//
//   evring-schema-decode [--rounds N] [--output FILE] SNAPSHOT...
//
// Loads each snapshot (not timed), finds its schema among the built-in ones
// by the header's hash, then, N times over, reads every event with the
// ordinary iterator, copies its payload, decodes it to a JSON object and
// appends one jsonl line (seqno, type, type_name, flow tags, fields) to a
// buffer written to FILE (default /dev/null) every 1 MiB. Prints events/s
// and output MB/s per snapshot and in total, and the same for text lines.
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "schema/schema_builtin.hpp"
#include "evring/schema/schema_render.hpp"
#include "ring/snapshot.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Totals {
    std::uint64_t events = 0;
    std::uint64_t bytes = 0;
    double seconds = 0;
};

void append_number(std::string& out, std::uint64_t v) {
    char text[24];
    const auto end = std::to_chars(text, text + sizeof text, v).ptr;
    out.append(text, static_cast<std::size_t>(end - text));
}

// One pass over the ring; returns the events read.
std::uint64_t pass(const evring::MappedRing& ring, const evring::Schema& schema, bool text, std::vector<std::byte>& payload,
                   std::string& out, std::FILE* sink, std::uint64_t& bytes) {
    evring::Iterator it(ring);
    it.seek(it.oldest_seqno());
    evring::EventDescriptor event;
    std::uint64_t events = 0;
    while (it.try_next(event) == evring::NextResult::Success) {
        if (evring::copy_payload(ring, event, payload.data(), payload.size()) != evring::PayloadResult::Ok) continue;
        const std::span<const std::byte> bytes_in(payload.data(), event.payload_size);
        if (text) {
            append_number(out, event.seqno);
            out += ' ';
            if (!evring::append_event_text(schema, event.event_type, bytes_in, out).ok()) out += "?";
        } else {
            out += "{\"seqno\":";
            append_number(out, event.seqno);
            out += ",\"event_type\":";
            append_number(out, event.event_type);
            const evring::SchemaEvent* e = schema.event(event.event_type);
            out += ",\"type_name\":\"";
            out += e != nullptr ? e->name : "";
            out += "\",\"content_ext\":[";
            for (int i = 0; i < 4; ++i) {
                if (i) out += ',';
                append_number(out, event.content_ext[i]);
            }
            out += "],\"fields\":";
            if (!evring::append_fields_json(schema, event.event_type, bytes_in, out).ok()) out += "null";
            out += '}';
        }
        out += '\n';
        ++events;
        if (out.size() >= (1u << 20)) {
            bytes += out.size();
            std::fwrite(out.data(), 1, out.size(), sink);
            out.clear();
        }
    }
    bytes += out.size();
    std::fwrite(out.data(), 1, out.size(), sink);
    out.clear();
    return events;
}

Totals measure(const evring::MappedRing& ring, const evring::Schema& schema, bool text, int rounds, std::FILE* sink) {
    std::vector<std::byte> payload(ring.header().size.payload_buf_size);
    std::string out;
    out.reserve(2u << 20);
    Totals t;
    pass(ring, schema, text, payload, out, sink, t.bytes);  // warm up: page in the ring, grow the buffer
    t.bytes = 0;
    const auto start = Clock::now();
    for (int r = 0; r < rounds; ++r) t.events += pass(ring, schema, text, payload, out, sink, t.bytes);
    t.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return t;
}

void report(const char* what, const char* format, const Totals& t) {
    std::printf("%-34s %-5s %9llu events %7.3f s  %6.2f M events/s  %7.1f MB/s\n", what, format,
                static_cast<unsigned long long>(t.events), t.seconds, static_cast<double>(t.events) / t.seconds / 1e6,
                static_cast<double>(t.bytes) / t.seconds / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
    int rounds = 5;
    const char* output = "/dev/null";
    std::vector<std::string> files;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = std::atoi(argv[++i]);
        else if (std::strcmp(argv[i], "--output") == 0 && i + 1 < argc) output = argv[++i];
        else files.emplace_back(argv[i]);
    }
    if (files.empty() || rounds < 1) {
        std::fprintf(stderr, "usage: evring-schema-decode [--rounds N] [--output FILE] SNAPSHOT...\n");
        return 2;
    }
    std::FILE* sink = std::fopen(output, "w");
    if (sink == nullptr) {
        std::perror(output);
        return 1;
    }
    Totals json_total, text_total;
    for (const auto& file : files) {
        auto loaded = evring::load_snapshot(file);
        if (!loaded) {
            std::fprintf(stderr, "%s\n", loaded.error().message().c_str());
            return 1;
        }
        const evring::RingHeader& header = loaded->ring.header();
        auto schema = evring::find_builtin_schema(header.content_type, header.schema_hash);
        if (!schema) {
            std::fprintf(stderr, "%s: no built-in schema for its hash\n", file.c_str());
            return 1;
        }
        const char* name = std::strrchr(file.c_str(), '/') ? std::strrchr(file.c_str(), '/') + 1 : file.c_str();
        for (bool text : {false, true}) {
            const Totals t = measure(loaded->ring, *schema, text, rounds, sink);
            report(name, text ? "text" : "jsonl", t);
            Totals& sum = text ? text_total : json_total;
            sum.events += t.events;
            sum.bytes += t.bytes;
            sum.seconds += t.seconds;
        }
    }
    report("all snapshots", "jsonl", json_total);
    report("all snapshots", "text", text_total);
    std::fclose(sink);
    return 0;
}
