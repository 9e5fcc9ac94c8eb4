// `evring schema check|show|compile` (add_schema, commands.hpp; docs/schema.md,
// docs/cli.md). Exit codes: 0 success, 1 an invalid schema, a source without
// a schema or an unwritable output, 2 usage. `show` takes a source (ring,
// snapshot, recording: the schema schema_resolve.hpp finds for it, and its
// origin), a schema file or the name of a built-in schema.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "commands.hpp"
#include "output/escape.hpp"
#include "evring/format.hpp"
#include "evring/schema/schema.hpp"
#include "schema/schema_builtin.hpp"
#include "codegen/schema_codegen.hpp"
#include "schema/schema_lint.hpp"
#include "evring/schema/schema_render.hpp"
#include "evring/schema/schema_resolve.hpp"
#include "open.hpp"
#include "output/output_file.hpp"

namespace evring::cli {

namespace {

// The options of the three subcommands; the one chosen is the one parsed.
struct SchemaCommand {
    CLI::App* check = nullptr;
    CLI::App* show = nullptr;
    CLI::App* compile = nullptr;
    std::string file;
    std::string output;
    std::string namespace_name;
    std::string lang = "cpp";
    bool json = false;
};

// A schema file, or the name of a built-in schema when no such file exists.
Result<Schema> load(const std::string& file) {
    struct stat st;
    if (::stat(file.c_str(), &st) != 0) {
        for (const auto& b : builtin_schemas())
            if (b.name == file) return builtin_schema(file);
    }
    return Schema::parse_file(file);
}

// Whether `file` starts like an event source (a ring file, a zstd snapshot or
// a recording) rather than schema text.
bool looks_like_source(const std::string& file) {
    // Non-blocking and regular files only: a FIFO is no source, and
    // Schema::parse_file then refuses it by name instead of waiting on it.
    const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st {};
    unsigned char head[8] = {};
    ssize_t n = 0;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) n = ::read(fd, head, sizeof head);
    ::close(fd);
    static constexpr unsigned char kZstd[4] = {0x28, 0xb5, 0x2f, 0xfd};
    return (n >= 4 && std::memcmp(head, kZstd, 4) == 0) || (n >= 6 && std::memcmp(head, kRingMagic.data(), 6) == 0) ||
           (n >= 8 && std::memcmp(head, "EVRECORD", 8) == 0);
}

// What `schema show ARG` shows: the schema in use for a source (ring name or
// path, snapshot, recording), or a schema file, or a built-in schema by name.
Result<ResolvedSchema> find_for_show(const std::string& arg) {
    struct stat st;
    const bool is_file = ::stat(arg.c_str(), &st) == 0;
    if (is_file ? !looks_like_source(arg) : std::any_of(builtin_schemas().begin(), builtin_schemas().end(),
                                                         [&](const auto& b) { return b.name == arg; })) {
        auto schema = load(arg);
        if (!schema) return std::move(schema).error();
        ResolvedSchema found;
        found.origin = is_file ? SchemaOrigin::File : SchemaOrigin::Builtin;
        found.from = is_file ? fmt::format("schema file '{}'", arg) : fmt::format("built-in schema {}", arg);
        found.schema = std::move(*schema);
        return found;
    }
    SourceOptions options;
    options.recording_series = false;
    auto source = open_for_command(arg, options);
    if (!source) return std::move(source).error();
    auto found = resolve_schema(**source);
    if (!found) return std::move(found).error();
    if (!found->warning.empty()) report_error(found->warning);
    if (!found->schema) {
        const SourceIdentity& id = (*source)->identity();
        return Error(ENOENT, fmt::format("{} {} carries no schema, and no built-in schema describes content type {} "
                                         "with schema hash {}: its events show as raw bytes (give one with watch "
                                         "--schema FILE)", describe(id.kind), printable(id.path), id.content_type,
                                         schema_hash_hex(id.schema_hash)));
    }
    return found;
}

std::string flow_tags_text(const Schema& schema) {
    std::string out;
    for (std::size_t i = 0; i < 4; ++i)
        if (!schema.flow_tags()[i].empty()) out += fmt::format(" content_ext[{}]={}", i, schema.flow_tags()[i]);
    return out.empty() ? " (none named)" : out;
}

void print_struct(const Schema& schema, const SchemaStruct& s) {
    std::printf("  %s: %u bytes, align %u%s%s\n", s.name.c_str(), s.size, s.align, s.doc.empty() ? "" : " -- ",
                printable(s.doc).c_str());
    std::uint32_t end = 0;
    for (const auto& f : s.fields) {
        if (f.offset > end) std::printf("    %5u %4u  (padding)\n", end, f.offset - end);
        const std::uint32_t size = schema.type(f.type).size;
        std::printf("    %5u %4u  %-28s %s%s%s\n", f.offset, size, f.name.c_str(), schema.type_name(f.type).c_str(),
                    f.doc.empty() ? "" : "  -- ", printable(f.doc).c_str());
        end = f.offset + size;
    }
    if (s.size > end) std::printf("    %5u %4u  (padding)\n", end, s.size - end);
    for (const auto& t : s.trailing)
        std::printf("    then  %-33s %s[%s]%s%s\n", t.name.c_str(),
                    t.bytes ? "bytes" : schema.type_name(t.element).c_str(), t.count_path.c_str(),
                    t.doc.empty() ? "" : "  -- ", printable(t.doc).c_str());
}

// Names are identifiers; descriptions and file names are shown through
// printable(), so a schema cannot send escape sequences to the terminal.
void print_schema(const Schema& schema) {
    std::printf("schema %s (content type %u) from %s\n", schema.content_name().c_str(), schema.content_type(),
                printable(schema.source_name()).c_str());
    if (!schema.description().empty()) std::printf("  %s\n", printable(schema.description()).c_str());
    std::printf("  hash              %s\n", schema.hash_hex().c_str());
    for (const auto& h : schema.describes()) std::printf("  describes         %s\n", schema_hash_hex(h).c_str());
    std::printf("  payload alignment %u\n  flow tags        %s\n\nevents\n", schema.payload_alignment(),
                flow_tags_text(schema).c_str());
    for (const auto& e : schema.events()) {
        const SchemaStruct* s = schema.payload_of(e);
        const std::string size = s == nullptr ? "empty"
                                              : fmt::format("{} {}{}", s->name, s->size, s->trailing.empty() ? "" : "+");
        std::printf("  %5u %-28s %-30s %s\n", e.number, e.name.c_str(), size.c_str(),
                    printable(e.description).c_str());
    }
    std::printf("\nstructs (offset, size, field, type)\n");
    for (const auto& s : schema.structs()) print_struct(schema, s);
    if (!schema.enums().empty()) std::printf("\nenums\n");
    for (const auto& e : schema.enums()) {
        std::string values;
        for (const auto& v : e.values)
            values += fmt::format(" {}={}", v.name,
                                  e.is_signed() ? std::to_string(static_cast<std::int64_t>(v.bits)) : std::to_string(v.bits));
        std::printf("  %s (%s):%s\n", e.name.c_str(), std::string(scalar_name(e.underlying)).c_str(), values.c_str());
    }
    if (!schema.spans().empty()) std::printf("\nspans\n");
    for (const auto& s : schema.spans()) {
        auto names = [&schema](const std::vector<std::uint16_t>& numbers) {
            std::string out;
            for (auto n : numbers) out += (out.empty() ? "" : "|") + schema.event(n)->name;
            return out;
        };
        std::string key;
        for (auto k : s.key) key += (key.empty() ? "" : ",") + schema.flow_tags()[k];
        std::printf("  %s: %s .. %s, matched by %s\n", s.name.c_str(), names(s.begin).c_str(), names(s.end).c_str(),
                    key.empty() ? "(nothing)" : key.c_str());
    }
}

int run_check(const SchemaCommand& c) {
    auto schema = load(c.file);
    if (!schema) {
        report_error(schema.error().message());
        return kExitRuntime;
    }
    std::printf("%s: ok: schema %s, content type %u, %zu event types, hash %s\n", printable(c.file).c_str(),
                schema->content_name().c_str(), schema->content_type(), schema->events().size(),
                schema->hash_hex().c_str());
    for (const auto& warning : schema_warnings(*schema))  // legal, but probably a mistake
        std::printf("%s: warning: %s\n", c.file.c_str(), warning.c_str());
    return kExitOk;
}

int run_show(const SchemaCommand& c) {
    auto found = find_for_show(c.file);
    if (!found) {
        report_error(found.error().message());
        return kExitRuntime;
    }
    if (c.json) {
        // The schema's own object with the origin first: {"origin":...,"from":...,<schema keys>}.
        const std::string schema = schema_to_json(*found->schema);
        std::string from;
        append_json_string(from, found->from);
        std::printf("{\"origin\":\"%s\",\"from\":%s,%s\n", to_string(found->origin), from.c_str(),
                    schema.c_str() + 1);
    } else {
        std::printf("in use: %s\n", printable(found->from).c_str());
        print_schema(*found->schema);
    }
    return kExitOk;
}

int run_compile(const SchemaCommand& c) {
    auto schema = load(c.file);
    if (!schema) {
        report_error(schema.error().message());
        return kExitRuntime;
    }
    auto header = c.lang == "c" ? generate_c_header(*schema, {c.namespace_name, c.file})
                                : generate_cpp_header(*schema, {c.namespace_name, c.file});
    if (!header) {
        report_error(fmt::format("{}: {}", c.file, header.error().message()));
        return kExitRuntime;
    }
    // Through a temporary renamed into place, so a build never sees half a
    // header; never over the schema itself (`compile F -o F`).
    OutputFileOptions output;
    output.what = "the header";
    output.keep.push_back({c.file, "the schema it compiles"});
    if (auto s = write_output_file(c.output, *header, output); !s) {
        report_error(s.error().message());
        return kExitRuntime;
    }
    return kExitOk;
}

}  // namespace

Command add_schema(CLI::App& app) {
    auto c = std::make_shared<SchemaCommand>();
    auto* schema = app.add_subcommand("schema", "Check, show or compile an event schema (docs/schema.md)");
    schema->require_subcommand(1);
    c->check = schema->add_subcommand("check", "Validate a schema file");
    c->check->add_option("FILE", c->file, "Schema file")->required();
    c->show = schema->add_subcommand("show", "Print a schema (events, layouts, hash) and where it came from");
    c->show->add_option("SOURCE", c->file,
                        "Ring name or path, snapshot or recording (the schema in use), schema file, or a built-in "
                        "schema's name (monad-exec-v1)")
        ->required();
    c->show->add_flag("--json", c->json, "Print one JSON object");
    c->compile = schema->add_subcommand("compile", "Generate a C++ or C header from a schema file");
    c->compile->add_option("FILE", c->file, "Schema file")->required();
    c->compile->add_option("-o,--output", c->output, "Header to write")->required();
    c->compile->add_option("--lang", c->lang, "cpp (C++20, the default) or c (C11 over the C ABI)")
        ->check(CLI::IsMember({"cpp", "c"}));
    c->compile->add_option("--namespace", c->namespace_name,
                           "C++ namespace, or with --lang c the prefix of every name (default: the schema's "
                           "content_name)");
    return {schema, [c] {
                if (c->check->parsed()) return run_check(*c);
                if (c->show->parsed()) return run_show(*c);
                if (c->compile->parsed()) return run_compile(*c);
                return kExitUsage;
            }};
}

}  // namespace evring::cli
