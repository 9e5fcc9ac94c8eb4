// The content of a ring of assembled instances (assembled_schema.hpp).
#include "record/assembled_schema.hpp"

#include <cstdlib>

namespace evring {

std::string_view assembled_schema_text() {
    return R"toml(# Assembled span instances as JSON, one event each (evring mirror --assemble;
# lib/record/assembled_schema.hpp).
content_type = 16723                       # 0x4153, "AS"
content_name = "evring_assembled"
description = "whole span instances (blocks) as the JSON that evring watch --assemble prints"

[[event]]
number = 2
name = "ASSEMBLED_SPAN"
description = "one instance: its label, then its JSON object"
fields = [
  { name = "label",       type = "u64", doc = "the instance's label (a block number)" },
  { name = "json_length", type = "u64", doc = "bytes of JSON that follow" },
  { name = "json",        type = "char[json_length]", doc = "the object of watch --assemble --format jsonl" },
]
)toml";
}

const Schema& assembled_schema() {
    // Parsed once; the text is this file's, so a failure is a bug caught by the tests.
    static const Schema schema = [] {
        auto parsed = Schema::parse(assembled_schema_text(), "evring_assembled");
        if (!parsed) std::abort();
        return std::move(parsed).value();
    }();
    return schema;
}

}  // namespace evring
