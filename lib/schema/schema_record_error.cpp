// RECORD_ERROR, implied: event type 1 of every ring evring writes, added to a
// schema that does not declare it (docs/schema.md, "Event types").
//
// A publisher records RECORD_ERROR in place of an event too large for the
// ring (format.hpp), so every schema for evring's own rings needs the same
// fifteen lines. They are added here, as TOML, before the schema is parsed,
// so an implied RECORD_ERROR is exactly a declared one: same canonical form,
// same hash. A schema keeps control: nothing is implied when it declares an
// event type 1 of its own, uses any of the three names, or describes foreign
// hashes (another implementation's rings, like the older Monad schema whose
// event type 1 is BLOCK_START).
#include <cctype>
#include <optional>
#include <string>
#include <string_view>

#include "schema/schema_parse_support.hpp"

namespace evring::detail {

namespace {

constexpr std::string_view kRecordError = R"(
[[event]]
number = 1
name = "RECORD_ERROR"
description = "an event that could not be published"
payload = "record_error"

[enum.record_error_type]
type = "u16"
values = { NONE = 0, OVERFLOW_4GB = 1, OVERFLOW_EXPIRE = 2, MISSING_EVENT = 3 }

[struct.record_error]
size = 16
fields = [
  { name = "error_type",             type = "record_error_type" },
  { name = "dropped_event_type",     type = "u16" },
  { name = "truncated_payload_size", type = "u32" },
  { name = "requested_payload_size", type = "u64" },
  { name = "truncated_payload",      type = "bytes[truncated_payload_size]" },
]
)";

std::string lower(std::optional<std::string> text) {
    std::string out = text.value_or("");
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

bool declares_its_own(const toml::table& root) {
    if (root.contains("describes")) return true;
    for (std::string_view table : {"enum", "struct"}) {
        const toml::node* node = root.get(table);
        if (node == nullptr) continue;
        const toml::table* t = node->as_table();
        if (t == nullptr) return true;  // malformed: the parser says so
        if (t->contains(table == "enum" ? "record_error_type" : "record_error")) return true;
    }
    if (const toml::node* events = root.get("event")) {
        const toml::array* list = events->as_array();
        if (list == nullptr) return true;
        for (const auto& e : *list) {
            const toml::table* t = e.as_table();
            if (t == nullptr) return true;
            if (const toml::node* n = t->get("number"); n != nullptr && n->value<std::int64_t>() == 1) return true;
            // Any spelling: an event's inline struct is its name in lower case.
            if (const toml::node* n = t->get("name"); n != nullptr && lower(n->value<std::string>()) == "record_error")
                return true;
        }
    }
    return false;
}

toml::table& table_at(toml::table& root, std::string_view key) {
    if (!root.contains(key)) root.insert(key, toml::table{});
    return *root.get(key)->as_table();
}

}  // namespace

void imply_record_error(toml::table& root) {
    if (declares_its_own(root)) return;
    toml::table implied = toml::parse(kRecordError, std::string_view("<implied RECORD_ERROR>"));
    if (!root.contains("event")) root.insert("event", toml::array{});
    root.get("event")->as_array()->push_back(std::move(*implied.get("event")->as_array()->get(0)->as_table()));
    table_at(root, "enum").insert("record_error_type", std::move(*implied["enum"]["record_error_type"].as_table()));
    table_at(root, "struct").insert("record_error", std::move(*implied["struct"]["record_error"].as_table()));
}

}  // namespace evring::detail
