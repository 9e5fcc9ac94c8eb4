// Chosen columns of events (field_columns.hpp).
#include "output/field_columns.hpp"

#include <fmt/format.h>

#include <cstring>

#include "output/escape.hpp"

namespace evring::cli {
namespace {

Error bad_fields(std::string_view list, std::string_view why) {
    return Error(EINVAL, fmt::format("bad --fields '{}': {}", printable(list), why));
}

// "a.b[2].c" into steps: names, and indexes (nullopt on a malformed one).
struct Step {
    std::string_view name;  // empty: an index
    std::uint64_t index = 0;
};
std::optional<std::vector<Step>> steps_of(std::string_view path) {
    std::vector<Step> steps;
    std::size_t i = 0;
    while (i < path.size()) {
        if (path[i] == '[') {
            const std::size_t close = path.find(']', i);
            if (close == std::string_view::npos || close == i + 1 || close - i > 12) return std::nullopt;
            Step s;
            for (std::size_t k = i + 1; k < close; ++k) {
                if (path[k] < '0' || path[k] > '9') return std::nullopt;
                s.index = s.index * 10 + static_cast<std::uint64_t>(path[k] - '0');
            }
            steps.push_back(s);
            i = close + 1;
            if (i < path.size() && path[i] == '.') ++i;
            continue;
        }
        const std::size_t end = std::min(path.find_first_of(".[", i), path.size());
        if (end == i) return std::nullopt;
        steps.push_back({path.substr(i, end - i), 0});
        i = end;
        if (i < path.size() && path[i] == '.') ++i;
    }
    return steps;
}

}  // namespace

std::optional<FieldColumns::Access> FieldColumns::locate(const Schema& schema, const SchemaEvent& event,
                                                         std::string_view path, std::string& problem) {
    const SchemaStruct* payload = schema.payload_of(event);
    auto steps = steps_of(path);
    if (payload == nullptr || !steps || steps->empty() || (*steps)[0].name.empty()) return std::nullopt;
    Access a;
    std::size_t i = 1;
    bool found = false;
    for (std::size_t k = 0; k < payload->trailing.size() && !found; ++k) {
        const SchemaTrailing& t = payload->trailing[k];
        if (t.name != (*steps)[0].name) continue;
        if (t.bytes || steps->size() < 2 || !(*steps)[1].name.empty()) {
            problem = fmt::format("'{}' is a variable-length array; name an element: {}[0]", t.name, t.name);
            return std::nullopt;
        }
        a.trailing = static_cast<int>(k);
        a.element = (*steps)[1].index;
        a.fixed = payload->size;
        for (std::size_t j = 0; j <= k; ++j) {
            const SchemaTrailing& tj = payload->trailing[j];
            a.arrays.push_back({tj.count_offset, scalar_size(tj.count_scalar), schema.type(tj.element).size});
        }
        a.type = t.element;
        i = 2;
        found = true;
    }
    if (!found) {
        const SchemaField* f = payload->field((*steps)[0].name);
        if (f == nullptr) return std::nullopt;
        a.offset = f->offset;
        a.type = f->type;
    }
    for (; i < steps->size(); ++i) {
        const Step& s = (*steps)[i];
        const SchemaType& t = schema.type(a.type);
        if (s.name.empty()) {
            if (t.kind != TypeKind::Array) return std::nullopt;
            if (s.index >= t.count) {
                problem = fmt::format("'{}': index {} is past the array's length {}", path, s.index, t.count);
                return std::nullopt;
            }
            a.offset += static_cast<std::uint32_t>(s.index) * schema.type(t.element).size;
            a.type = t.element;
            continue;
        }
        if (t.kind != TypeKind::Struct) return std::nullopt;
        const SchemaField* f = schema.structs()[t.index].field(s.name);
        if (f == nullptr) return std::nullopt;
        a.offset += f->offset;
        a.type = f->type;
    }
    return a;
}

// Every step checked against the payload's size; the counts are the event's.
const std::byte* FieldColumns::field_at(const Access& a, std::uint32_t size, std::span<const std::byte> p) {
    std::uint64_t at = a.offset;
    if (a.trailing >= 0) {
        at = a.fixed;
        std::uint64_t count = 0;
        for (std::size_t j = 0; j < a.arrays.size(); ++j) {
            const Access::Array& arr = a.arrays[j];
            if (std::uint64_t{arr.count_offset} + arr.count_size > p.size()) return nullptr;
            count = 0;
            std::memcpy(&count, p.data() + arr.count_offset, std::min<std::uint32_t>(arr.count_size, 8));
            if (j + 1 == a.arrays.size()) break;
            if (arr.element_size != 0 && count > (p.size() - std::min<std::uint64_t>(at, p.size())) / arr.element_size)
                return nullptr;
            at += count * arr.element_size;
        }
        if (a.element >= count) return nullptr;  // past the event's count
        const std::uint64_t element = std::max<std::uint64_t>(a.arrays.back().element_size, 1);
        if (at > p.size() || a.element > (p.size() - at) / element) return nullptr;
        at += a.element * element + a.offset;
    }
    if (at > p.size() || size > p.size() - at) return nullptr;
    return p.data() + at;
}

Result<FieldColumns> FieldColumns::parse(std::string_view list, const Schema* schema, Style style) {
    FieldColumns f;
    f.schema_ = schema;
    f.style_ = style;
    std::vector<std::string> names;
    if (list.empty()) {
        names = {"seqno", "type", "time", "payload_size"};
        if (schema)
            for (const auto& t : schema->flow_tags())
                if (!t.empty()) names.push_back(t);
    } else {
        std::size_t start = 0;
        while (start <= list.size()) {
            const std::size_t comma = std::min(list.find(',', start), list.size());
            names.emplace_back(list.substr(start, comma - start));
            start = comma + 1;
        }
    }
    if (names.size() > 256) return bad_fields(list, "at most 256 columns");
    for (const auto& name : names) {
        Column c;
        c.name = name;
        if (name.empty()) return bad_fields(list, "an empty column name");
        if (name == "seqno") c.kind = Kind::Seqno;
        else if (name == "type") c.kind = Kind::Type;
        else if (name == "time") c.kind = Kind::Time;
        else if (name == "nanos") c.kind = Kind::Nanos;
        else if (name == "payload_size") c.kind = Kind::PayloadSize;
        else if (name.size() == 6 && name.rfind("ext[", 0) == 0 && name[4] >= '0' && name[4] <= '3' && name[5] == ']') {
            c.kind = Kind::Ext;
            c.ext = static_cast<std::uint8_t>(name[4] - '0');
        } else if (schema && schema->flow_tag(name)) {
            c.ext = static_cast<std::uint8_t>(*schema->flow_tag(name));
            c.kind = Kind::Ext;
            for (const SchemaSpan& span : schema->spans())
                if (span.opener == c.ext && !span.label.empty()) c.kind = Kind::Label;
        } else if (schema && name.rfind("flow.", 0) == 0 && schema->flow_tag(name.substr(5))) {
            c.kind = Kind::Ext;  // the raw tag
            c.ext = static_cast<std::uint8_t>(*schema->flow_tag(name.substr(5)));
        } else {
            if (schema == nullptr)
                return bad_fields(list, fmt::format("'{}' is a payload field, and the source has no schema", name));
            c.kind = Kind::Field;
            std::string problem;
            for (const SchemaEvent& e : schema->events()) {
                auto ref = locate(*schema, e, name, problem);
                if (!ref) continue;
                const TypeKind k = schema->type(ref->type).kind;
                if (k == TypeKind::Struct || k == TypeKind::Array) {
                    problem = fmt::format("'{}' is a {}; name one of its fields", name,
                                          k == TypeKind::Struct ? "struct" : "fixed array");
                    continue;
                }
                if (c.ref.size() <= e.number) c.ref.resize(e.number + 1u, -1);
                c.ref[e.number] = static_cast<std::int32_t>(c.refs.size());
                c.refs.push_back(*ref);
            }
            if (c.refs.empty())
                return bad_fields(list, problem.empty()
                                            ? fmt::format("no event of schema {} has a field '{}' (columns: seqno, "
                                                          "type, time, nanos, payload_size, flow tags, ext[I], "
                                                          "payload fields by dotted path, [i] into arrays)",
                                                          schema->content_name(), name)
                                            : problem);
        }
        f.columns_.push_back(std::move(c));
    }
    return f;
}

void FieldColumns::value(OutputBuffer& out, const Column& c, const EventDescriptor& e, const PayloadView& p) const {
    const bool json = style_ == Style::Jsonl;
    switch (c.kind) {
    case Kind::Seqno: out.put_uint(e.seqno); return;
    case Kind::Nanos: out.put_uint(e.record_epoch_nanos); return;
    case Kind::PayloadSize: out.put_uint(e.payload_size); return;
    case Kind::Ext: out.put_uint(e.content_ext[c.ext]); return;
    case Kind::Label:
        if (auto label = labels_ != nullptr ? labels_->label_of(e, c.ext) : std::nullopt) out.put_uint(*label);
        else out.put(json ? "null" : style_ == Style::Text ? "-" : "");
        return;
    case Kind::Time:
        if (json) out.put('"');
        put_utc_time(out, e.record_epoch_nanos);
        if (json) out.put('"');
        return;
    case Kind::Type: {
        const SchemaEvent* t = schema_ ? schema_->event(e.event_type) : nullptr;
        if (t == nullptr) { out.put_uint(e.event_type); return; }
        if (json) out.put('"');
        out.put(t->name);
        if (json) out.put('"');
        return;
    }
    case Kind::Field: break;
    }
    const std::int32_t slot = e.event_type < c.ref.size() ? c.ref[e.event_type] : -1;
    const Access* ref = slot >= 0 ? &c.refs[static_cast<std::size_t>(slot)] : nullptr;
    const SchemaType* t = ref ? &schema_->type(ref->type) : nullptr;
    const std::byte* at = ref != nullptr && p.state == PayloadView::State::Ok ? field_at(*ref, t->size, p.bytes) : nullptr;
    if (at == nullptr) {
        out.put(json ? "null" : style_ == Style::Text ? "-" : "");
        return;
    }
    const bool wide = t->kind == TypeKind::Bytes || t->size > 8 ||
                      (t->kind == TypeKind::Scalar && (t->scalar == Scalar::U128 || t->scalar == Scalar::U256));
    if (wide) {  // 0x and the bytes: byte arrays as stored, wide integers most significant first
        if (json) out.put('"');
        out.put("0x");
        if (t->kind == TypeKind::Bytes) {
            out.put_hex({at, t->size});
        } else {
            for (std::uint32_t i = t->size; i-- > 0;) out.put_hex({at + i, 1});
        }
        if (json) out.put('"');
        return;
    }
    std::uint64_t bits = 0;
    std::memcpy(&bits, at, t->size);
    const Scalar s = t->scalar;
    if (t->kind == TypeKind::Enum) {
        const SchemaEnum& en = schema_->enums()[t->index];
        std::uint64_t key = bits;
        if (en.is_signed() && t->size < 8 && (bits >> (t->size * 8 - 1)) & 1) key |= ~std::uint64_t{0} << (t->size * 8);
        if (std::string_view n = en.name_of(key); !n.empty()) {
            if (json) out.put('"');
            out.put(n);
            if (json) out.put('"');
            return;
        }
    }
    if (s == Scalar::Bool) { out.put(bits ? "true" : "false"); return; }
    if (s == Scalar::F32 || s == Scalar::F64) {
        double d = 0;
        if (s == Scalar::F32) { float x; std::memcpy(&x, at, 4); d = x; } else std::memcpy(&d, at, 8);
        out.put(fmt::format("{}", d));
        return;
    }
    if ((s == Scalar::I8 || s == Scalar::I16 || s == Scalar::I32 || s == Scalar::I64) && t->size < 8 &&
        (bits >> (t->size * 8 - 1)) & 1)
        bits |= ~std::uint64_t{0} << (t->size * 8);
    if ((s == Scalar::I8 || s == Scalar::I16 || s == Scalar::I32 || s == Scalar::I64) &&
        static_cast<std::int64_t>(bits) < 0) {
        out.put('-');
        out.put_uint(~bits + 1);
        return;
    }
    out.put_uint(bits);
}

void FieldColumns::header(OutputBuffer& out) {
    if (style_ != Style::Csv || header_done_) return;
    for (std::size_t i = 0; i < columns_.size(); ++i) {
        if (i > 0) out.put(',');
        out.put(columns_[i].name);
    }
    out.put('\n');
    header_done_ = true;
}

void FieldColumns::finish(OutputBuffer& out) { header(out); }

void FieldColumns::print(OutputBuffer& out, const EventDescriptor& event, const PayloadView& payload) {
    header(out);
    if (style_ == Style::Jsonl) out.put('{');
    for (std::size_t i = 0; i < columns_.size(); ++i) {
        const Column& c = columns_[i];
        switch (style_) {
        case Style::Text:
            if (i > 0) out.put(' ');
            out.put(c.name);
            out.put('=');
            break;
        case Style::Jsonl:
            if (i > 0) out.put(',');
            out.put('"');
            out.put(c.name);  // names are checked: identifiers, dots, ext[I]
            out.put("\":");
            break;
        case Style::Csv:
            if (i > 0) out.put(',');
            break;
        }
        value(out, c, event, payload);
    }
    out.put(style_ == Style::Jsonl ? "}\n" : "\n");
    out.maybe_flush();
}

}  // namespace evring::cli
