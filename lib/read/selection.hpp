// lib/read/selection.hpp — which events a reader takes from its source: the
// range (from, until, count) and the filters (types, flows, where, members),
// and a named reader's resume. Every command, the C ABI and Python resolve
// what they were asked through Selection (through Reading, reading.hpp), so
// each value is spelled, checked and refused alike everywhere (docs/cli.md,
// "Positions" and "Filters"). The CLI registers the options over it
// (tools/evring/event_selection.hpp); messages name them as the CLI spells
// them (--from, --type, ...).
//
// Resolution runs in two steps. check() runs before the source is opened:
// positions, counts and the numbers in types and flows, so a mistyped value
// is a usage error before any I/O. resolve() runs once the source and its
// schema are known: event type names, flow tag names (NAME=VALUE), a span's
// label (block=N: the tag holds the opening event's seqno, found with
// span_seek.hpp) and where. Both return an error whose errno is EINVAL for a
// usage error; other errors are runtime errors (a label no event carries).
//
// Thread safety: one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "evring/error.hpp"
#include "evring/source/event_source.hpp"
#include "evring/source/flow_filter.hpp"
#include "evring/source/follow.hpp"
#include "evring/schema/schema.hpp"
#include "cursor/named_reader.hpp"
#include "source/event_predicate.hpp"
#include "source/span_labels.hpp"

namespace evring {

// What a resolved selection's follow options point to, for one source: the
// compiled --where and the span-label table (a second source read with the
// same selection needs its own: diff).
struct SelectionKept {
    std::unique_ptr<EventPredicate> where;
    std::unique_ptr<SpanLabels> span_labels;
};

struct Selection {
    explicit Selection(std::string default_from) : from(std::move(default_from)) {}

    // The values as typed.
    std::string from;
    std::optional<std::string> until;
    std::optional<std::string> count;
    std::vector<std::string> types;
    std::vector<std::string> flows;
    std::optional<std::string> where;
    const char* where_option = "--where";  // how errors name it (`record --trigger` compiles its EXPR here)
    std::vector<std::uint32_t> members;  // --member: only these ring set members (empty: all)
    std::optional<std::string> name;     // --name: a named reader (docs/named-readers.md)
    bool reset = false;                  // --reset: forget its position
    bool span_labels = false;            // the command shows span labels (watch): keep a table
    bool from_given = false;             // `from` was asked for, not the default (a named reader resumes otherwise)

    // Before the source is opened: the range into follow.start/stop/count,
    // the numeric --type and --flow values into a filter.
    Status check_range(FollowOptions& follow) const;
    Status check_filters(FlowFilter& filter) const;
    Status check(FollowOptions& follow) const;  // both, into follow.filter
    // Whether resolve() has names to look up in a schema.
    bool has_names() const;
    // Once the source and its schema (null: none) are known: the names in
    // --type and --flow into `filter`.
    Status resolve_names(FlowFilter& filter, const Schema* schema, EventSource& source) const;
    // resolve_names into follow.filter, then --where compiled into
    // follow.where (kept alive by this selection) and follow.schema set.
    // With a schema whose spans have labels, and --where, --until SPAN:N or
    // `span_labels` asked for, follow.span_labels is a table this selection
    // keeps (span_labels.hpp: the follow loop reads labels into it), and
    // --until SPAN:N becomes follow.span_stop.
    Status resolve(FollowOptions& follow, const Schema* schema, EventSource& source);
    // The same with what the follow options point to kept in `kept` (a
    // command reading two sources with one selection: diff).
    Status resolve(FollowOptions& follow, const Schema* schema, EventSource& source, SelectionKept& kept) const;
    // --where alone (resolve() ends with it): compiled against `schema` into
    // follow.where, kept alive by kept.where; nothing without --where. Its
    // ordered span-label comparisons (`block >= N`) read follow.span_labels
    // and are refused when that is null.
    Status resolve_where(FollowOptions& follow, const Schema* schema, EventSource& source, SelectionKept& kept) const;
    // resolve_names into follow.filter, then resolve_where, with no span-label
    // table: for a command whose loop is its own and keeps none (relay: its
    // loop is the library's nats_relay.hpp; mirror has always compiled --where
    // without one), so ordered label comparisons are refused there.
    Status resolve_filters(FollowOptions& follow, const Schema* schema, EventSource& source, SelectionKept& kept) const;
    // --name, once the source is open: locks the name and moves follow.start
    // to where the reader resumes (named_reader.hpp), with what it says about
    // that in `notices`; null without --name.
    Result<std::unique_ptr<NamedReader>> resume_named(FollowOptions& follow, EventSource& source,
                                                      std::vector<std::string>& notices) const;

private:
    SelectionKept kept_;
};

}  // namespace evring
