// tools/evring/output/field_columns.hpp — `watch --fields a,b,c` and `--format csv`:
// chosen columns of each event, as text (name=value ...), jsonl
// ({"name":value,...}) or csv (a header line, then values).
//
// Columns: seqno, type (the name), time (ISO 8601), nanos
// (record_epoch_nanos), payload_size, a flow tag by name or ext[0..3], or a
// payload field by dotted path through nested structs (fixed part). Names are
// checked against the schema once; a field an event does not have is shown
// as - (text), null (jsonl) or empty (csv). Nothing is allocated per event.
//
// Thread safety: one thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "output/event_format.hpp"
#include "evring/error.hpp"
#include "evring/schema/schema.hpp"
#include "output/output.hpp"

namespace evring::cli {

class FieldColumns {
public:
    enum class Style : std::uint8_t { Text, Jsonl, Csv };

    // `list` as given to --fields; empty: the default columns (seqno, type,
    // time, payload_size and the named flow tags).
    static Result<FieldColumns> parse(std::string_view list, const Schema* schema, Style style);
    void print(OutputBuffer& out, const EventDescriptor& event, const PayloadView& payload);

private:
    enum class Kind : std::uint8_t { Seqno, Type, Time, Nanos, PayloadSize, Ext, Field };
    struct Column {
        std::string name;
        Kind kind = Kind::Seqno;
        std::uint8_t ext = 0;
        std::vector<std::int32_t> ref;  // Field: event type -> index into refs, -1: none
        std::vector<SchemaFieldRef> refs;
    };
    void value(OutputBuffer& out, const Column& c, const EventDescriptor& e, const PayloadView& p) const;

    const Schema* schema_ = nullptr;
    Style style_ = Style::Text;
    std::vector<Column> columns_;
    bool header_done_ = false;
};

}  // namespace evring::cli
