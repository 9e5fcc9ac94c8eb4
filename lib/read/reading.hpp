// lib/read/reading.hpp — the one read pipeline: a source opened with its
// schema, a selection resolved against them, the interest the reader
// registers, a named reader resumed, and the follow loop run through the
// reader's registration and the named reader's commits. Every reading
// command of the CLI goes through it, and the C ABI and Python open their
// sources and resolve their interest with the same functions.
//
//     Selection selection("oldest");
//     selection.types = {"TRADE"};
//     FollowOptions follow;
//     if (auto s = selection.check(follow); !s) ...                 // usage, before any I/O
//     ReadRequest request;
//     request.location = "feed";
//     request.selection = &selection;
//     request.reader = ReaderInfo{"me", 0, ""};                      // listed in the registry
//     auto reading = Reading::open(std::move(request), follow);
//     if (!reading) ...                                             // the source
//     if (auto s = (*reading)->find_schema(); !s) ...               // its schema
//     if (auto s = (*reading)->select(); !s) ...                    // names, --where, interest
//     if (auto s = (*reading)->resume_named(notices); !s) ...       // a named reader's start
//     auto result = (*reading)->run(my_sink);
//
// Contract:
// - open() opens the location (open_source: ring, set, snapshot, recording,
//   stream); find_schema() finds its schema (schema_resolve.hpp, the one
//   resolver) as request.schema says. They are two steps so that a command's
//   own refusal of a kind of source comes between them, and so that a caller
//   tells a failure to open or decode (a runtime error) from a usage error.
// - select() resolves the selection (selection.hpp; the whole of it, or its
//   filters alone for a command whose loop is its own: relay) into the
//   follow options, then the interest (interest_request.hpp), narrowing the
//   types to it when none were asked for. Errors with errno EINVAL are usage
//   errors.
// - resume_named() locks a named reader's name and moves the start to where
//   it resumes, with what it says about that in `notices`.
// - run() follows the source (follow.hpp) into `sink` through the
//   registration (RegisteringSink: listed in the ring's reader registry with
//   its interest, unless request.reader is empty) and, for a named reader,
//   its commits (CommitSink: after `flush` says the output is written).
//   The caller commits once more at the end (NamedReader::commit).
//
// Thread safety: one thread; follow().stop_flag may be set from any thread
// or a signal handler.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cursor/named_reader.hpp"
#include "evring/error.hpp"
#include "evring/schema/schema_resolve.hpp"
#include "evring/source/follow.hpp"
#include "evring/source/source_open.hpp"
#include "read/interest_request.hpp"
#include "read/selection.hpp"
#include "registry/reader_registration.hpp"
#include "sink/registering_sink.hpp"

namespace evring {

// Whether a reading needs its source's schema.
enum class SchemaNeed : std::uint8_t {
    Always,     // found, or the resolver's error is the reading's (watch, stats, export)
    Quiet,      // tried; without one, only what needs it fails (record)
    WhenAsked,  // only looked for when the selection or interest names something (mirror, relay)
};

// Which part of the selection select() resolves.
enum class SelectionScope : std::uint8_t {
    Whole,      // names, span labels, --until SPAN:N, --where, members
    Filters,    // type and flow names and --where, no span labels (Selection::resolve_filters: relay, mirror)
};

struct ReadRequest {
    std::string location;                    // as the user named it
    SourceOptions source;                    // how to open it
    std::optional<std::string> schema_file;  // decode with this when the source carries none
    SchemaNeed schema = SchemaNeed::Always;
    const Selection* selection = nullptr;    // null: everything
    SelectionScope scope = SelectionScope::Whole;
    InterestRequest interest;
    InterestNames interest_names;
    bool narrow_to_interest = true;          // without types asked for, read only the interest's
    std::optional<ReaderInfo> reader;        // registered as; nullopt: not registered
};

class Reading {
public:
    // `follow`: the options the selection's check() filled in (start, stop,
    // count, numeric filters) and the command's own (payloads, stop flag).
    static Result<std::unique_ptr<Reading>> open(ReadRequest request, FollowOptions follow = {});
    Status find_schema();

    // The selection and interest, into follow().
    Status select();
    Status resume_named(std::vector<std::string>& notices);
    // Follows into `sink` (see the contract); `flush` writes the output out
    // before a named reader commits (null: nothing to flush), and
    // `commit_every` is CommitSink's interval (kAtEnd: only at the end).
    Result<FollowResult> run(FollowSink& sink, std::function<bool()> flush = {},
                             std::chrono::nanoseconds commit_every = std::chrono::milliseconds(100));

    std::unique_ptr<EventSource>& source() noexcept { return source_; }
    const Schema* schema() const noexcept { return found_.schema ? &*found_.schema : nullptr; }
    const ResolvedSchema& found_schema() const noexcept { return found_; }
    // The schema moved out, for a caller that keeps the source and not the
    // reading (the C ABI's handle, lib/bindings/source_handle.hpp).
    ResolvedSchema take_schema() noexcept { return std::move(found_); }
    FollowOptions& follow() noexcept { return follow_; }
    std::optional<std::uint64_t> interest() const noexcept { return interest_; }
    NamedReader* named() noexcept { return named_.get(); }
    // The registration run() made (null before, or unregistered).
    RegisteringSink* registration() noexcept { return registration_ ? &*registration_ : nullptr; }
    // The named reader's commit failure during run(), if any.
    const std::optional<Error>& commit_error() const noexcept;
    // A schema the source carried and that was ignored (schema_resolve.hpp): one line to print, or "".
    const std::string& schema_warning() const noexcept { return found_.warning; }

private:
    Reading() = default;

    ReadRequest request_;
    std::unique_ptr<EventSource> source_;
    ResolvedSchema found_;
    FollowOptions follow_;
    SelectionKept kept_;
    std::optional<std::uint64_t> interest_;
    std::unique_ptr<NamedReader> named_;
    std::optional<RegisteringSink> registration_;
    std::optional<CommitSink> committing_;
};

}  // namespace evring
