// span_marker (recording_index.hpp): the span index entries of an event, from
// a schema's [span.NAME] labels, for the recording writer. The fields are
// found once per event type; each event then costs a table lookup and a
// bounds-checked read of at most 8 bytes per mark.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "recording/recording_index.hpp"
#include "evring/schema/schema.hpp"

namespace evring {
namespace {

struct LabelField {
    std::uint32_t key = 0;
    std::uint32_t offset = 0;
    std::uint32_t size = 0;  // at most 8
};

using MarkTable = std::vector<std::vector<LabelField>>;  // by event type

void add(const Schema& schema, MarkTable& table, std::uint16_t type, std::uint32_t key, const std::string& path) {
    const SchemaEvent* event = schema.event(type);
    if (event == nullptr || path.empty()) return;
    auto field = schema.find_field(*event, path);
    if (!field) return;
    const std::uint32_t size = static_cast<std::uint32_t>(std::min<std::size_t>(schema.type(field->type).size, 8));
    if (size == 0) return;
    if (table.size() <= type) table.resize(std::size_t{type} + 1);
    table[type].push_back(LabelField{key, field->offset, size});
}

}  // namespace

SpanMarker span_marker(const Schema& schema) {
    auto table = std::make_shared<MarkTable>();
    for (const SchemaSpan& span : schema.spans()) {
        const std::uint32_t key = span_index_key(span.name);
        for (const std::uint16_t type : span.begin) add(schema, *table, type, key, span.label);
        for (const SchemaSpanStage& stage : span.stages)
            add(schema, *table, stage.event, span_index_key(span.name, stage.name), stage.label);
    }
    if (table->empty()) return {};
    return [table](const EventDescriptor& event, std::span<const std::byte> payload, std::span<SpanMark> out) {
        if (event.event_type >= table->size()) return std::size_t{0};
        std::size_t n = 0;
        for (const LabelField& f : (*table)[event.event_type]) {
            if (n == out.size() || std::size_t{f.offset} + f.size > payload.size()) continue;
            std::uint64_t label = 0;
            std::memcpy(&label, payload.data() + f.offset, f.size);  // little-endian
            out[n++] = SpanMark{f.key, 0, label, event.seqno};
        }
        return n;
    };
}

}  // namespace evring
