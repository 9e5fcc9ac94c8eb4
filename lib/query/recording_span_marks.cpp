// span_marker (recording_span_marks.hpp): the span index entries of an event, from
// a schema's [span.NAME] labels, for the recording writer. The fields are
// found once per event type; each event then costs a table lookup and a
// bounds-checked read of at most 8 bytes per mark.
#include "query/recording_span_marks.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "recording/recording_index.hpp"
#include "evring/schema/schema.hpp"

namespace evring {
namespace {

struct LabelField {
    std::uint32_t key = 0;
    std::uint32_t offset = 0;
    std::uint32_t size = 0;     // at most 8
    std::uint32_t id_offset = 0;
    std::uint32_t id_size = 0;  // 0: no id
};

using MarkTable = std::vector<std::vector<LabelField>>;  // by event type

// A mark for every event of `type` carrying the label field `path`, with the
// first bytes of the id field `id_path` (span_seek's 0xID), when it has one.
void add(const Schema& schema, MarkTable& table, std::uint16_t type, std::uint32_t key, const std::string& path,
         const std::string& id_path) {
    const SchemaEvent* event = schema.event(type);
    if (event == nullptr || path.empty()) return;
    auto field = schema.find_field(*event, path);
    if (!field) return;
    const std::uint32_t size = static_cast<std::uint32_t>(std::min<std::size_t>(schema.type(field->type).size, 8));
    if (size == 0) return;
    LabelField mark{key, field->offset, size, 0, 0};
    if (auto id = id_path.empty() ? std::nullopt : schema.find_field(*event, id_path)) {
        mark.id_offset = id->offset;
        mark.id_size = static_cast<std::uint32_t>(std::min<std::size_t>(schema.type(id->type).size, 64));
    }
    if (table.size() <= type) table.resize(std::size_t{type} + 1);
    table[type].push_back(mark);
}

MarkTable mark_table(const Schema& schema) {
    MarkTable table;
    for (const SchemaSpan& span : schema.spans()) {
        const std::uint32_t key = span_index_key(span.name);
        for (const std::uint16_t type : span.begin) add(schema, table, type, key, span.label, span.id);
        for (const SchemaSpanStage& stage : span.stages)
            add(schema, table, stage.event, span_index_key(span.name, stage.name), stage.label, stage.id);
    }
    return table;
}

}  // namespace

// One table makes both: the types span_marked_types gives are exactly those
// the marker has fields for.
std::vector<std::uint16_t> span_marked_types(const Schema& schema) {
    const MarkTable table = mark_table(schema);
    std::vector<std::uint16_t> types;
    for (std::size_t type = 0; type < table.size(); ++type)
        if (!table[type].empty()) types.push_back(static_cast<std::uint16_t>(type));
    return types;
}

SpanMarker span_marker(const Schema& schema) {
    auto table = std::make_shared<MarkTable>(mark_table(schema));
    if (table->empty()) return {};
    return [table](const EventDescriptor& event, std::span<const std::byte> payload, std::span<SpanMark> out) {
        if (event.event_type >= table->size()) return std::size_t{0};
        std::size_t n = 0;
        for (const LabelField& f : (*table)[event.event_type]) {
            if (n == out.size() || std::size_t{f.offset} + f.size > payload.size()) continue;
            std::uint64_t label = 0;
            std::memcpy(&label, payload.data() + f.offset, f.size);  // little-endian
            std::uint32_t id = 0;
            if (f.id_size > 0 && std::size_t{f.id_offset} + f.id_size <= payload.size())
                id = span_id_digest({reinterpret_cast<const std::uint8_t*>(payload.data()) + f.id_offset, f.id_size});
            out[n++] = SpanMark{f.key, id, label, event.seqno};
        }
        return n;
    };
}

}  // namespace evring
