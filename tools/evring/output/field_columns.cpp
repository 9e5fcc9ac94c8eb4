// Chosen columns of events (field_columns.hpp).
#include "output/field_columns.hpp"

#include <fmt/format.h>

#include <cstring>

#include "output/escape.hpp"
#include "query/field_path.hpp"

namespace evring::cli {
namespace {

Error bad_fields(std::string_view list, std::string_view why) {
    return Error(EINVAL, fmt::format("bad --fields '{}': {}", printable(list), why));
}

}  // namespace

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
            auto path = detail::parse_field_path(name, "--fields");
            if (!path) return std::move(path).error();  // "bad --fields 'a.b[': at 5: ..."
            std::string problem;
            for (const SchemaEvent& e : schema->events()) {
                auto ref = detail::locate_field(*schema, e, *path, problem);
                if (!ref) continue;
                c.places.add(e.number, std::move(*ref));
            }
            if (c.places.empty())
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
    const detail::FieldAccess* ref = c.places.in(e.event_type);
    const SchemaType* t = ref ? &schema_->type(ref->type) : nullptr;
    const std::byte* at = ref != nullptr && p.state == PayloadView::State::Ok ? detail::field_at(*ref, p.bytes) : nullptr;
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
