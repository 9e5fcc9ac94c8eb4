// evring/schema/schema.hpp — what the events of a content type mean: the Schema value.
//
// How to load a schema and look things up:
//
//     auto schema = evring::Schema::parse_file("schemas/orders.toml");
//     if (!schema) fail(schema.error().message());      // "orders.toml:12:5: unknown type 'u9'"
//     const evring::SchemaEvent* order = schema->event("ORDER");
//     const evring::SchemaStruct* payload = schema->payload_of(*order);
//     auto qty = schema->find_field(*order, "fill.quantity");   // offset and type
//     std::string hex = schema->hash_hex();                       // goes into the ring header
//
// A schema file (docs/schema.md has the language) declares one content type:
// its event types (number, name, description), each payload's layout (structs,
// enums, fixed arrays, trailing arrays whose element count is an earlier
// field), the names of the four flow tags, the payload alignment, the foreign
// schema hashes it describes and begin/end spans. Layouts follow the C rules of
// x86-64 (natural alignment, padding, sizes rounded up to the alignment), so a
// schema reproduces the byte layout of C structs exactly.
//
// Contract:
// - parse/parse_file either return a complete, validated Schema or an Error
//   whose message is "SOURCE:LINE:COLUMN: reason". Nothing in a Schema is
//   left unchecked: every type resolves, every offset is aligned and inside
//   its struct, every size fits 32 bits, every count field is an unsigned
//   integer of the fixed part.
// - hash() is SHA-256 over canonical_form() (docs/schema.md, "Canonical form"):
//   numbers, names, types, offsets, sizes, flow tag names, described hashes,
//   spans, keywords, levels and always_recorded marks change it (the last
//   three only when a schema uses them, so schemas without keep their hash); comments, descriptions, whitespace, key order and the
//   order of events in the file do not.
// - A Schema is an immutable value; copies share one parsed representation.
//
// Thread safety: a Schema may be used from any number of threads at once.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"
#include "evring/ring/interest.hpp"

namespace evring {

using SchemaHash = std::array<std::uint8_t, 32>;

// The primitive types of the language. U128 is 16 bytes aligned to 16 (like
// unsigned __int128); U256 is four 64-bit limbs, 32 bytes aligned to 8. Both
// are little-endian.
enum class Scalar : std::uint8_t { U8, U16, U32, U64, I8, I16, I32, I64, F32, F64, Bool, U128, U256 };

enum class TypeKind : std::uint8_t {
    Scalar,  // a primitive (SchemaType::scalar)
    Bytes,   // a fixed byte array (bytesN, address): shown as one "0x..." string
    Enum,    // an integer with named values (SchemaType::index into enums())
    Struct,  // a nested struct (SchemaType::index into structs())
    Array,   // SchemaType::count elements of SchemaType::element
    String,  // char[N]: N bytes of text, NUL-padded (SchemaType::count = N); shown as a string
};

using TypeId = std::uint32_t;

struct SchemaType {
    TypeKind kind = TypeKind::Scalar;
    Scalar scalar = Scalar::U8;  // Scalar: the primitive; Enum: the underlying integer
    std::uint32_t size = 0;
    std::uint32_t align = 1;
    std::uint32_t count = 0;   // Bytes: byte length; Array: element count
    TypeId element = 0;        // Array: the element type
    std::uint32_t index = 0;   // Enum, Struct: position in enums() / structs()
};

struct SchemaField {
    std::string name;
    TypeId type = 0;
    std::uint32_t offset = 0;
    std::string doc;
};

// A variable-length array after the fixed part of a payload. Its element count
// is the unsigned integer at `count_offset` of the fixed part (`count_path`
// names it, "txn_header.data_length"). Arrays follow each other directly, in
// order, with no padding.
struct SchemaTrailing {
    std::string name;
    TypeId element = 0;
    bool bytes = false;  // bytes[...]: shown as one "0x..." string
    bool text = false;   // char[...]: a string of `count` bytes (up to the first NUL), as char[N] is shown
    std::string count_path;
    std::uint32_t count_offset = 0;
    Scalar count_scalar = Scalar::U32;  // U8..U64
    std::string doc;
};

struct SchemaStruct {
    std::string name;
    std::vector<SchemaField> fields;       // in offset order
    std::vector<SchemaTrailing> trailing;  // only in payload structs
    std::uint32_t size = 0;                // the fixed part
    std::uint32_t align = 1;
    std::string doc;

    const SchemaField* field(std::string_view name) const noexcept;
};

struct SchemaEnumValue {
    std::string name;
    // The value's bits, sign-extended to 64 bits when the underlying type is signed.
    std::uint64_t bits = 0;
};

struct SchemaEnum {
    std::string name;
    Scalar underlying = Scalar::U8;
    std::vector<SchemaEnumValue> values;  // by numeric value
    std::string doc;

    bool is_signed() const noexcept;
    // The name of a value (bits as in SchemaEnumValue), or empty when unnamed.
    std::string_view name_of(std::uint64_t bits) const noexcept;
    const SchemaEnumValue* value(std::string_view name) const noexcept;
};

inline constexpr std::uint32_t kNoPayload = UINT32_MAX;

struct SchemaEvent {
    std::uint16_t number = 0;
    std::string name;
    std::string description;
    std::uint32_t payload = kNoPayload;  // index in structs(), or kNoPayload: empty payload
    // Interest (interest.hpp, docs/interest.md): bit i = the schema's keywords()[i].
    std::uint64_t keywords = 0;
    std::uint8_t level = 0;        // 0..15
    bool always_recorded = false;  // no reader's interest skips it

    EventInterest interest() const noexcept { return {keywords, level, always_recorded}; }
};

// A named moment in a span instance's life that a later event marks (Monad's
// FINALIZED and VERIFIED of block N): the `event` whose payload field `label`
// (and `id`, when given) carries the label (and id) of the instance.
struct SchemaSpanStage {
    std::string name;
    std::uint16_t event = 0;
    std::string label;  // dotted path of an unsigned integer field of `event`
    std::string id;     // dotted path of a bytes field of `event`; empty: none
};

// A begin/end pair (for timelines): an instance opens with any `begin` event
// and closes with the next `end` event that has the same values in the flow
// tags listed in `key`. For positions (`--from block:N`, span_seek.hpp) a span
// may also say which payload field of its begin events labels an instance
// (`label`, an unsigned integer: the block number), which one identifies it
// (`id`, bytes: the block id), which flow tag of the events inside holds the
// sequence number of the opening event (`opener`), and its stages.
struct SchemaSpan {
    std::string name;
    std::vector<std::uint16_t> begin;  // event numbers
    std::vector<std::uint16_t> end;
    std::vector<std::uint8_t> key;     // flow tag indices (0..3)
    std::string description;
    std::string label;                 // empty: instances have no label
    std::string id;                    // empty: instances have no id
    std::optional<std::uint8_t> opener;  // flow tag index
    std::vector<SchemaSpanStage> stages;  // by name

    const SchemaSpanStage* stage(std::string_view stage_name) const noexcept {
        for (const auto& s : stages)
            if (s.name == stage_name) return &s;
        return nullptr;
    }
};

// A field found by path inside a payload's fixed part.
struct SchemaFieldRef {
    std::uint32_t offset = 0;
    TypeId type = 0;
};

namespace detail {
struct SchemaData;
}

class Schema {
public:
    // Parses schema text; `source_name` prefixes error messages ("orders.toml").
    static Result<Schema> parse(std::string_view text, std::string_view source_name = "<schema>");
    static Result<Schema> parse_file(const std::string& path);

    std::uint16_t content_type() const noexcept;
    const std::string& content_name() const noexcept;
    const std::string& description() const noexcept;
    std::uint32_t payload_alignment() const noexcept;

    // content_ext[i] names; an empty string when the slot is unnamed.
    const std::array<std::string, 4>& flow_tags() const noexcept;
    std::optional<std::size_t> flow_tag(std::string_view name) const noexcept;

    // Foreign schema hashes (of other implementations' rings) this file describes.
    const std::vector<SchemaHash>& describes() const noexcept;
    // True when `ring_hash` is this schema's own hash or one it describes.
    bool matches(const SchemaHash& ring_hash) const noexcept;

    const SchemaHash& hash() const noexcept;
    std::string hash_hex() const;
    const std::string& canonical_form() const noexcept;
    // The text it was parsed from, and the name given for it.
    const std::string& source() const noexcept;
    const std::string& source_name() const noexcept;

    // The keywords event types may carry, in bit order (bit i is keywords()[i]).
    const std::vector<std::string>& keywords() const noexcept;
    std::optional<unsigned> keyword(std::string_view name) const noexcept;

    std::span<const SchemaEvent> events() const noexcept;  // by number
    const SchemaEvent* event(std::uint16_t number) const noexcept;
    // By name: exactly, else the one name equal ignoring ASCII case (null
    // when two are, or none): the rule --type, --where, the C ABI and Python share.
    const SchemaEvent* event(std::string_view name) const noexcept;

    std::span<const SchemaStruct> structs() const noexcept;  // by name
    std::span<const SchemaEnum> enums() const noexcept;      // by name
    std::span<const SchemaSpan> spans() const noexcept;      // by name
    const SchemaStruct* find_struct(std::string_view name) const noexcept;
    const SchemaEnum* find_enum(std::string_view name) const noexcept;
    const SchemaType& type(TypeId id) const noexcept;
    const SchemaSpan* span(std::string_view name) const noexcept;

    // The payload struct of an event, or nullptr for an empty payload.
    const SchemaStruct* payload_of(const SchemaEvent& event) const noexcept;
    // The size of an event's fixed part (0 for an empty payload).
    std::uint32_t fixed_size(const SchemaEvent& event) const noexcept;
    // A field of an event's fixed part by dotted path through nested structs.
    std::optional<SchemaFieldRef> find_field(const SchemaEvent& event, std::string_view path) const;

    // How the type is written in a schema file: "u64", "bytes32", "block_tag", "u64[4]".
    std::string type_name(TypeId id) const;

private:
    explicit Schema(std::shared_ptr<const detail::SchemaData> data) : data_(std::move(data)) {}
    friend struct detail::SchemaData;
    std::shared_ptr<const detail::SchemaData> data_;
};

// The spelling of a primitive in schema files ("u64", "bool", "u256").
std::string_view scalar_name(Scalar scalar) noexcept;
// Size in bytes of a primitive.
std::uint32_t scalar_size(Scalar scalar) noexcept;

// 64 lowercase hex digits; parse_schema_hash accepts either case.
std::string schema_hash_hex(const SchemaHash& hash);
std::optional<SchemaHash> parse_schema_hash(std::string_view hex) noexcept;

}  // namespace evring
