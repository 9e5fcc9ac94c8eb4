// The walk of a field path through one event type's layout (schema_field_path.hpp).
#include "schema/schema_field_path.hpp"

namespace evring::detail {

std::optional<FieldPlace> find_field_path(const Schema& schema, const SchemaEvent& event,
                                          std::span<const FieldPathStep> path) {
    const SchemaStruct* payload = schema.payload_of(event);
    if (payload == nullptr || path.empty() || path[0].index) return std::nullopt;
    FieldPlace place;
    std::size_t i = 0;
    for (std::size_t k = 0; k < payload->trailing.size(); ++k) {
        const SchemaTrailing& t = payload->trailing[k];
        if (t.name != path[0].name) continue;
        place.trailing = static_cast<int>(k);
        place.type = t.element;
        if (path.size() < 2 || !path[1].index) {  // the whole array; the caller decides what more steps mean
            place.steps = 1;
            return place;
        }
        place.element = true;
        place.index = path[1].i;
        i = 2;
        break;
    }
    if (place.trailing < 0) {
        const SchemaField* f = payload->field(path[0].name);
        if (f == nullptr) return std::nullopt;
        place.offset = f->offset;
        place.type = f->type;
        i = 1;
    }
    for (; i < path.size(); ++i) {
        const SchemaType& t = schema.type(place.type);
        if (path[i].index) {
            if (t.kind != TypeKind::Array || path[i].i >= t.count) return std::nullopt;
            place.offset += static_cast<std::uint32_t>(path[i].i) * schema.type(t.element).size;
            place.type = t.element;
            continue;
        }
        if (t.kind != TypeKind::Struct) return std::nullopt;
        const SchemaField* f = schema.structs()[t.index].field(path[i].name);
        if (f == nullptr) return std::nullopt;
        place.offset += f->offset;
        place.type = f->type;
    }
    place.steps = path.size();
    return place;
}

}  // namespace evring::detail
