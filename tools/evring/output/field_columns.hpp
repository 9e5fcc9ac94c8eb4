// tools/evring/output/field_columns.hpp — `watch --fields a,b,c` and `--format csv`:
// chosen columns of each event, as text (name=value ...), jsonl
// ({"name":value,...}) or csv (a header line, then values).
//
// Columns: seqno, type (the name), time (ISO 8601), nanos
// (record_epoch_nanos), payload_size, a flow tag by name, or raw as
// flow.NAME or ext[0..3], or a
// payload field by dotted path through nested structs, with [i] into fixed
// arrays (an index past their length is no field, refused when parsed) and
// into the payload's trailing arrays (checked against the count the event
// carries and its payload's size: an element past them is shown as
// missing), placed by lib/query/field_access.hpp as --where places them. Names are
// checked against the schema once; a field an event does not have is shown
// as - (text), null (jsonl) or empty (csv). A flow tag by name that a span
// points back to its opening with (Monad's `block`) shows the span's label
// (15000009, from the span label table, span_labels.hpp), or nothing when the
// event carries no tag or its opening was not read; flow.block is the raw
// tag (the opening event's seqno). With csv the header line is printed even
// when no event is (finish()). Nothing is allocated per event.
//
// Thread safety: one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "output/event_format.hpp"
#include "evring/error.hpp"
#include "evring/schema/schema.hpp"
#include "query/field_access.hpp"
#include "output/output.hpp"

namespace evring::cli {

class FieldColumns {
public:
    enum class Style : std::uint8_t { Text, Jsonl, Csv };

    // `list` as given to --fields; empty: the default columns (seqno, type,
    // time, payload_size and the named flow tags).
    static Result<FieldColumns> parse(std::string_view list, const Schema* schema, Style style);
    void print(OutputBuffer& out, const EventDescriptor& event, const PayloadView& payload);
    // The table labels are read from (EventPrinter sets it); null: none, raw tags.
    void set_span_labels(const SpanLabels* labels) noexcept { labels_ = labels; }
    // At the end of the output: the csv header when no event printed it.
    void finish(OutputBuffer& out);

private:
    enum class Kind : std::uint8_t { Seqno, Type, Time, Nanos, PayloadSize, Ext, Label, Field };
    struct Column {
        std::string name;
        Kind kind = Kind::Seqno;
        std::uint8_t ext = 0;
        detail::FieldByType places;  // Field
    };
    void value(OutputBuffer& out, const Column& c, const EventDescriptor& e, const PayloadView& p) const;

    const Schema* schema_ = nullptr;
    Style style_ = Style::Text;
    std::vector<Column> columns_;
    bool header_done_ = false;
    const SpanLabels* labels_ = nullptr;
    void header(OutputBuffer& out);
};

}  // namespace evring::cli
