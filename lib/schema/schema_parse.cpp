// Schema::parse: the top level of a schema file (docs/schema.md, "The language").
#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>

#include "util/regular_file.hpp"

#include "schema/schema_parse_types.hpp"

namespace evring {

namespace detail {
namespace {

constexpr std::size_t kMaxSchemaBytes = std::size_t{1} << 20;

}  // namespace

namespace {

class SchemaParser {
public:
    SchemaParser(const ParseContext& context, SchemaData& data) : ctx_(context), data_(data), types_(context, data) {}

    void parse(const toml::table& root) {
        ctx_.check_keys(root, {"content_type", "content_name", "description", "payload_alignment", "flow_tags",
                               "describes", "enum", "struct", "event", "span"},
                        "the schema");
        parse_header(root);
        if (const toml::node* enums = root.get("enum")) types_.add_enums(ctx_.as_table(*enums, "[enum]"));
        if (const toml::node* structs = root.get("struct")) declare_structs(ctx_.as_table(*structs, "[struct]"));
        std::vector<const toml::table*> events;
        if (const toml::node* list = root.get("event"))
            for (const auto& node : ctx_.as_array(*list, "[[event]]")) events.push_back(&declare_event(node));
        types_.build_structs();
        for (std::size_t i = 0; i < events.size(); ++i) resolve_payload(*events[i], data_.events[i]);
        if (const toml::node* spans = root.get("span")) parse_spans(ctx_.as_table(*spans, "[span]"));
    }

private:
    void parse_header(const toml::table& root) {
        data_.content_type = static_cast<std::uint16_t>(
            ctx_.integer_in(ctx_.required(root, "content_type", "the schema"), "content_type", 1, UINT16_MAX));
        data_.content_name = ctx_.identifier(ctx_.required(root, "content_name", "the schema"), "content_name");
        data_.description = ctx_.optional_text(root, "description", "description");
        if (const toml::node* a = root.get("payload_alignment")) {
            const std::int64_t v = ctx_.integer_in(*a, "payload_alignment", 1, 4096);
            if ((v & (v - 1)) != 0) ctx_.fail(*a, fmt::format("payload_alignment {} is not a power of two", v));
            data_.payload_alignment = static_cast<std::uint32_t>(v);
        }
        if (const toml::node* tags = root.get("flow_tags")) parse_flow_tags(ctx_.as_array(*tags, "flow_tags"));
        if (const toml::node* list = root.get("describes")) {
            for (const auto& node : ctx_.as_array(*list, "describes")) {
                auto hash = parse_schema_hash(ctx_.string(node, "a described hash"));
                if (!hash) ctx_.fail(node, "a described hash must be 64 hex digits (a RING01 schema_hash)");
                if (std::find(data_.describes.begin(), data_.describes.end(), *hash) != data_.describes.end())
                    ctx_.fail(node, "duplicate hash in describes");
                data_.describes.push_back(*hash);
            }
        }
    }

    void parse_flow_tags(const toml::array& tags) {
        if (tags.size() > 4) ctx_.fail(*tags.get(4), "there are only four flow tags (content_ext[0..3])");
        for (std::size_t i = 0; i < tags.size(); ++i) {
            const toml::node& node = *tags.get(i);
            if (ctx_.string(node, "a flow tag name").empty()) continue;  // an unnamed slot
            std::string name = ctx_.identifier(node, "flow tag name");
            for (std::size_t j = 0; j < i; ++j)
                if (data_.flow_tags[j] == name) ctx_.fail(node, fmt::format("duplicate flow tag name '{}'", name));
            data_.flow_tags[i] = std::move(name);
        }
    }

    void declare_structs(const toml::table& structs) {
        for (auto&& [key, node] : structs) {
            StructDecl decl;
            decl.name = ctx_.identifier_key(key, "struct name");
            const std::string what = fmt::format("struct '{}'", decl.name);
            decl.table = &ctx_.as_table(node, what);
            decl.where = &node;
            ctx_.check_keys(*decl.table, {"fields", "description", "size", "align"}, what);
            decl.description = ctx_.optional_text(*decl.table, "description", "description");
            types_.declare_struct(std::move(decl));
        }
    }

    const toml::table& declare_event(const toml::node& node) {
        const toml::table& table = ctx_.as_table(node, "an [[event]]");
        ctx_.check_keys(table, {"number", "name", "description", "payload", "fields", "size", "align"}, "an event");
        SchemaEvent e;
        const toml::node& number = ctx_.required(table, "number", "an event");
        e.number = static_cast<std::uint16_t>(ctx_.integer_in(number, "event number", 1, UINT16_MAX));
        const toml::node& name = ctx_.required(table, "name", "an event");
        e.name = ctx_.identifier(name, "event name");
        e.description = ctx_.optional_text(table, "description", "description");
        if (auto [it, fresh] = numbers_.emplace(e.number, &number); !fresh)
            ctx_.fail(number, fmt::format("duplicate event number {} (also at {})", e.number, ctx_.line_of(*it->second)));
        if (auto [it, fresh] = names_.emplace(e.name, &name); !fresh)
            ctx_.fail(name, fmt::format("duplicate event name '{}' (also at {})", e.name, ctx_.line_of(*it->second)));
        const bool named = table.contains("payload"), inline_fields = table.contains("fields");
        if (named && inline_fields)
            ctx_.fail(table, fmt::format("event '{}' has both 'payload' and 'fields'; give one", e.name));
        if (!inline_fields && (table.contains("size") || table.contains("align")))
            ctx_.fail(table, fmt::format("event '{}': 'size' and 'align' belong with inline 'fields'", e.name));
        if (inline_fields) {
            StructDecl decl;
            decl.name = inline_struct_name(e.name);
            decl.table = &table;
            decl.where = &node;
            decl.description = e.description;
            types_.declare_struct(std::move(decl));
        }
        data_.events.push_back(std::move(e));
        return table;
    }

    // An event's inline fields form a struct named after the event in lower case.
    static std::string inline_struct_name(const std::string& event_name) {
        std::string name = event_name;
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return name;
    }

    void resolve_payload(const toml::table& table, SchemaEvent& e) {
        std::string struct_name;
        const toml::node* where = &table;
        if (const toml::node* payload = table.get("payload")) {
            struct_name = ctx_.identifier(*payload, "payload");
            where = payload;
        } else if (table.contains("fields")) {
            struct_name = inline_struct_name(e.name);
        } else {
            return;  // an empty payload
        }
        const auto index = types_.struct_index(struct_name);
        if (!index) ctx_.fail(*where, fmt::format("event '{}' has payload '{}', which is not a struct", e.name, struct_name));
        const SchemaStruct& s = data_.structs[*index];
        if (s.align > data_.payload_alignment)
            ctx_.fail(*where, fmt::format("the payload of event '{}' (struct '{}') is aligned to {}, more than "
                                          "payload_alignment {}",
                                          e.name, s.name, s.align, data_.payload_alignment));
        e.payload = *index;
    }

    std::vector<std::uint16_t> event_list(const toml::node& node, std::string_view what) {
        std::vector<const toml::node*> items;
        if (node.is_string()) items.push_back(&node);
        else for (const auto& item : ctx_.as_array(node, what)) items.push_back(&item);
        if (items.empty()) ctx_.fail(node, fmt::format("{} names no event", what));
        std::vector<std::uint16_t> numbers;
        for (const toml::node* item : items) {
            const std::string name = ctx_.string(*item, "an event name");
            auto it = std::find_if(data_.events.begin(), data_.events.end(),
                                   [&name](const SchemaEvent& e) { return e.name == name; });
            if (it == data_.events.end()) ctx_.fail(*item, fmt::format("unknown event '{}'", name));
            if (std::find(numbers.begin(), numbers.end(), it->number) != numbers.end())
                ctx_.fail(*item, fmt::format("event '{}' is listed twice", name));
            numbers.push_back(it->number);
        }
        std::sort(numbers.begin(), numbers.end());
        return numbers;
    }

    void parse_spans(const toml::table& spans) {
        for (auto&& [key, node] : spans) {
            SchemaSpan span;
            span.name = ctx_.identifier_key(key, "span name");
            const std::string what = fmt::format("span '{}'", span.name);
            const toml::table& table = ctx_.as_table(node, what);
            ctx_.check_keys(table, {"begin", "end", "key", "description", "label", "id", "opener", "stages"}, what);
            span.description = ctx_.optional_text(table, "description", "description");
            span.begin = event_list(ctx_.required(table, "begin", what), "begin");
            span.end = event_list(ctx_.required(table, "end", what), "end");
            for (auto b : span.begin)
                if (std::find(span.end.begin(), span.end.end(), b) != span.end.end())
                    ctx_.fail(table, fmt::format("{}: event {} both begins and ends it", what, b));
            if (const toml::node* keys = table.get("key")) {
                for (const auto& k : ctx_.as_array(*keys, "key")) {
                    const std::string tag = ctx_.string(k, "a flow tag name");
                    auto it = std::find(data_.flow_tags.begin(), data_.flow_tags.end(), tag);
                    if (tag.empty() || it == data_.flow_tags.end())
                        ctx_.fail(k, fmt::format("'{}' is not one of the schema's flow_tags", tag));
                    const auto index = static_cast<std::uint8_t>(it - data_.flow_tags.begin());
                    if (std::find(span.key.begin(), span.key.end(), index) != span.key.end())
                        ctx_.fail(k, fmt::format("flow tag '{}' is listed twice", tag));
                    span.key.push_back(index);
                }
            }
            parse_span_positions(table, span);
            data_.spans.push_back(std::move(span));
        }
    }

    const SchemaEvent& event_named(const toml::node& node, const std::string& name) const {
        for (const auto& e : data_.events)
            if (e.name == name) return e;
        ctx_.fail(node, fmt::format("unknown event '{}'", name));
    }

    // A dotted path of `event`'s fixed part that must be an unsigned integer
    // (`label`) or a byte array (`id`).
    std::string span_field(const toml::node& node, const SchemaEvent& event, bool bytes) const {
        const std::string path = ctx_.string(node, bytes ? "an id field path" : "a label field path");
        const std::uint32_t* payload = event.payload == kNoPayload ? nullptr : &event.payload;
        const SchemaType* type = nullptr;
        std::string_view rest = path;
        for (const SchemaStruct* current = payload ? &data_.structs[*payload] : nullptr; current != nullptr;) {
            const std::size_t dot = rest.find('.');
            const SchemaField* f = current->field(rest.substr(0, dot));
            if (f == nullptr) break;
            type = &data_.types[f->type];
            current = nullptr;
            if (dot != std::string_view::npos) {
                if (type->kind == TypeKind::Struct) current = &data_.structs[type->index];
                type = nullptr;
                rest.remove_prefix(dot + 1);
            }
        }
        if (type == nullptr) ctx_.fail(node, fmt::format("event '{}' has no field '{}'", event.name, path));
        const bool ok = bytes ? type->kind == TypeKind::Bytes
                              : type->kind == TypeKind::Scalar && (type->scalar == Scalar::U8 || type->scalar == Scalar::U16 ||
                                                                    type->scalar == Scalar::U32 || type->scalar == Scalar::U64);
        if (!ok)
            ctx_.fail(node, fmt::format("field '{}' of event '{}' is not {}", path, event.name,
                                        bytes ? "a byte array (bytesN)" : "an unsigned integer (u8 to u64)"));
        return path;
    }

    // label, id, opener and stages: what `--from SPAN:N` needs (docs/schema.md, "Spans").
    void parse_span_positions(const toml::table& table, SchemaSpan& span) {
        const std::string what = fmt::format("span '{}'", span.name);
        for (const auto* key : {"label", "id"}) {
            const toml::node* node = table.get(key);
            if (node == nullptr) continue;
            std::string path;
            for (auto number : span.begin) {
                const SchemaEvent& e = *std::find_if(data_.events.begin(), data_.events.end(),
                                                     [number](const SchemaEvent& x) { return x.number == number; });
                path = span_field(*node, e, std::string_view(key) == "id");
            }
            (std::string_view(key) == "id" ? span.id : span.label) = path;
        }
        if (const toml::node* opener = table.get("opener")) {
            const std::string tag = ctx_.string(*opener, "a flow tag name");
            auto it = std::find(data_.flow_tags.begin(), data_.flow_tags.end(), tag);
            if (tag.empty() || it == data_.flow_tags.end())
                ctx_.fail(*opener, fmt::format("'{}' is not one of the schema's flow_tags", tag));
            span.opener = static_cast<std::uint8_t>(it - data_.flow_tags.begin());
        }
        const toml::node* stages = table.get("stages");
        if (stages == nullptr) return;
        if (span.label.empty()) ctx_.fail(*stages, fmt::format("{}: stages need a label", what));
        for (const auto& node : ctx_.as_array(*stages, "stages")) {
            const toml::table& st = ctx_.as_table(node, "a stage");
            ctx_.check_keys(st, {"name", "event", "label", "id"}, "a stage");
            SchemaSpanStage stage;
            stage.name = ctx_.identifier(ctx_.required(st, "name", "a stage"), "a stage name");
            if (span.stage(stage.name) != nullptr) ctx_.fail(node, fmt::format("stage '{}' is listed twice", stage.name));
            const toml::node& event_node = ctx_.required(st, "event", "a stage");
            const SchemaEvent& event = event_named(event_node, ctx_.string(event_node, "an event name"));
            stage.event = event.number;
            stage.label = span_field(ctx_.required(st, "label", "a stage"), event, false);
            if (const toml::node* id = st.get("id")) stage.id = span_field(*id, event, true);
            span.stages.push_back(std::move(stage));
        }
        std::sort(span.stages.begin(), span.stages.end(),
                  [](const SchemaSpanStage& a, const SchemaSpanStage& b) { return a.name < b.name; });
    }

    const ParseContext& ctx_;
    SchemaData& data_;
    TypeBuilder types_;
    std::map<std::uint16_t, const toml::node*> numbers_;
    std::map<std::string, const toml::node*, std::less<>> names_;
};

}  // namespace
}  // namespace detail

Result<Schema> Schema::parse(std::string_view text, std::string_view source_name) {
    const std::string name(source_name);
    if (text.size() > detail::kMaxSchemaBytes)
        return Error(0, fmt::format("{}: a schema is at most {} bytes; this one is {}", name,
                                    detail::kMaxSchemaBytes, text.size()));
    auto data = std::make_unique<detail::SchemaData>();
    detail::ParseContext context(name);
    if (auto bad = detail::check_characters(text)) return Error(0, fmt::format("{}:{}", name, *bad));
    try {
        toml::table root = toml::parse(text, name);
        detail::imply_record_error(root);
        detail::SchemaParser(context, *data).parse(root);
    } catch (const toml::parse_error& e) {
        return Error(0, fmt::format("{}: {}", context.position(e.source()), e.description()));
    } catch (const detail::SchemaSyntaxError& e) {
        return Error(0, e.message);
    }
    data->source.assign(text);
    data->source_name = name;
    return detail::SchemaData::finish(std::move(data));
}

Result<Schema> Schema::parse_file(const std::string& path) {
    // Opened like every untrusted file (regular_file.hpp): a FIFO or a device
    // named as a schema is refused at once instead of blocking the read.
    auto fd = detail::open_regular_file(path, fmt::format("schema '{}'", path));
    if (!fd) return std::move(fd).error();
    std::string text;
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(*fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int err = errno;
            ::close(*fd);
            return Error::from_errno(err, fmt::format("reading schema '{}'", path));
        }
        if (n == 0) break;
        text.append(buffer, static_cast<std::size_t>(n));
        if (text.size() > detail::kMaxSchemaBytes) {
            ::close(*fd);
            return Error(0, fmt::format("{}: a schema is at most {} bytes", path, detail::kMaxSchemaBytes));
        }
    }
    ::close(*fd);
    return parse(text, path);
}

}  // namespace evring
