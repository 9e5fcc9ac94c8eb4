// Fuzz target: decoding hostile payloads with real schemas. The input is
//   byte 0        which schema: the built-in monad-exec-v1 and -old, or the
//                 feature-rich schema below (every kind of type and count)
//   bytes 1..2    the event type (little-endian; unknown numbers included)
//   the rest      the payload
// Every decoder runs on it (schema_fuzz_decode.hpp checks their promises).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "schema/schema_builtin.hpp"
#include "schema_fuzz_decode.hpp"

namespace {

constexpr const char* kRichSchema = R"(content_type = 77
content_name = "rich"
flow_tags = ["a", "b"]
[[event]]
number = 1
name = "WIDE"
fields = [
  { name = "n8", type = "u8" }, { name = "i16", type = "i16" }, { name = "f", type = "f32" },
  { name = "d", type = "f64" }, { name = "big", type = "u128" }, { name = "huge", type = "u256" },
  { name = "ok", type = "bool" }, { name = "k", type = "kind" }, { name = "neg", type = "sign" },
  { name = "n64", type = "u64" },
  { name = "words", type = "bytes32[n8]" }, { name = "more", type = "pair[n64]" }, { name = "tail", type = "bytes[n8]" },
]
[[event]]
number = 2
name = "NESTED"
fields = [
  { name = "outer", type = "outer[2]" }, { name = "count", type = "u16" },
  { name = "items", type = "outer[count]" },
]
[[event]]
number = 3
name = "EMPTY"
[enum.kind]
type = "u8"
values = { A = 0, B = 1, C = 255 }
[enum.sign]
type = "i64"
values = { MIN = -9223372036854775808, ZERO = 0, MAX = 9223372036854775807 }
[struct.pair]
fields = [{ name = "x", type = "i8" }, { name = "y", type = "u32" }]
[struct.outer]
fields = [{ name = "p", type = "pair[3]" }, { name = "tag", type = "bytes3" }, { name = "v", type = "kind" }]
)";

const std::vector<evring::Schema>& schemas() {
    static const std::vector<evring::Schema> all = [] {
        std::vector<evring::Schema> out;
        for (const char* name : {"monad-exec-v1", "monad-exec-old"}) {
            auto s = evring::builtin_schema(name);
            if (!s) __builtin_trap();
            out.push_back(std::move(s).value());
        }
        auto rich = evring::Schema::parse(kRichSchema, "rich");
        if (!rich) __builtin_trap();
        out.push_back(std::move(rich).value());
        return out;
    }();
    return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 3) return 0;
    const evring::Schema& schema = schemas()[data[0] % schemas().size()];
    const auto type = static_cast<std::uint16_t>(data[1] | data[2] << 8);
    const std::span<const std::byte> payload(reinterpret_cast<const std::byte*>(data + 3), size - 3);
    if (evring::fuzz::decode_every_way(schema, type, payload)) {
        evring::fuzz::tally("schema_decode", nullptr);
    } else {
        const std::string reason = evring::describe_decode_error(schema, evring::check_payload(schema, type, payload));
        evring::fuzz::tally("schema_decode", &reason);
    }
    return 0;
}
