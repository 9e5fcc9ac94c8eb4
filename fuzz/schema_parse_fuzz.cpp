// Fuzz target: the schema parser. The input is schema text, optionally
// followed by a NUL byte and payload bytes. A text must be refused with a
// FILE:LINE:COLUMN message or give a schema that keeps every promise of
// schema.hpp: parsing it again gives the same hash, its blob round-trips, its
// JSON description and C++ header are produced (or the header refused with a
// reason), and the payload bytes decode against each of its event types with
// the decoder's promises kept (schema_fuzz_decode.hpp).
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "codegen/schema_codegen.hpp"
#include "evring/schema/schema_embed.hpp"
#include "schema_fuzz_decode.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const char* text = reinterpret_cast<const char*>(data);
    const void* nul = std::memchr(data, 0, size);
    const std::size_t text_size = nul ? static_cast<std::size_t>(static_cast<const std::uint8_t*>(nul) - data) : size;
    const std::span<const std::byte> payload =
        nul ? std::span<const std::byte>(reinterpret_cast<const std::byte*>(data) + text_size + 1, size - text_size - 1)
            : std::span<const std::byte>();
    auto schema = evring::Schema::parse(std::string_view(text, text_size), "fuzz.toml");
    if (!schema) {
        const std::string& message = schema.error().message();
        EVRING_FUZZ_CHECK(message.rfind("fuzz.toml:", 0) == 0);
        evring::fuzz::tally("schema_parse", &message);
        return 0;
    }
    evring::fuzz::tally("schema_parse", nullptr);
    auto again = evring::Schema::parse(schema->source(), "again");
    EVRING_FUZZ_CHECK(again.ok() && again->hash() == schema->hash() && again->canonical_form() == schema->canonical_form());
    auto blob = evring::parse_schema_blob(evring::serialize_schema_blob(*schema));
    EVRING_FUZZ_CHECK(blob.ok() && blob->hash() == schema->hash());
    EVRING_FUZZ_CHECK(!evring::schema_to_json(*schema).empty());
    auto header = evring::generate_cpp_header(*schema);
    EVRING_FUZZ_CHECK(header.ok() ? !header->empty() : !header.error().message().empty());
    for (const auto& event : schema->events()) {
        EVRING_FUZZ_CHECK(schema->event(event.number) == &event && schema->event(event.name) == &event);
        evring::fuzz::decode_every_way(*schema, event.number, payload);
    }
    return 0;
}
