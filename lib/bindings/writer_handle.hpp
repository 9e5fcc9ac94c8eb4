// lib/bindings/writer_handle.hpp — creating a ring writer with its schema, for
// the C ABI and the Python package alike.
//
// A writer given a schema gets the schema's content type and hash in the
// ring header and the schema embedded in the ring (schema_blob.hpp), written
// before the ring's magic so no reader ever sees the ring without it.
//
// Thread safety: free functions.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "evring/config.hpp"
#include "evring/error.hpp"
#include "handles.hpp"

namespace evring::bindings {

struct WriterSettings {
    std::string name;
    unsigned descriptor_shift = kDefaultDescriptorShift;
    unsigned payload_shift = kDefaultPayloadBufShift;
    std::optional<std::uint16_t> content_type;  // default: the schema's, else Test (1)
    std::string schema;  // a schema file, or schema text (with a newline); empty: none
    bool shared = false;
    bool keep = false;
    mode_t file_mode = 0664;
    bool check_raw = false;  // check raw commits against the schema too
};

Result<std::unique_ptr<evring_writer>> create_writer_handle(const WriterSettings& settings);

// Checks an event against the writer's schema (schema_write_check.hpp):
// empty when it may be published (or the writer has no schema), else the
// refusal in words.
std::string refusal(const evring_writer& writer, std::uint16_t event_type, const void* payload,
                    std::uint64_t payload_size);

// Interest (docs/interest.md): whether some registered reader wants events
// of `event_type` by the writer's schema (its keywords and level; always for
// an always_recorded type). True without a schema, for a type the schema
// lacks (the typed write refuses it), and while no reader narrows the ring's
// word: one relaxed load then, no lookup.
bool wanted(const evring_writer& writer, std::uint16_t event_type) noexcept;

}  // namespace evring::bindings
