// lib/codegen/schema_codegen.hpp — a C++ header generated from a schema.
//
// `evring schema compile FILE -o HEADER` calls generate_cpp_header; the
// meson snippet in docs/schema.md runs it at build time. The header holds, in
// the namespace chosen (by default the schema's content_name):
// - kContentType, kSchemaHash, kPayloadAlignment, and a Flow struct with one
//   member per flow tag (content_ext[0..3]) and tags() for the descriptor;
// - kSchemaBlob, the schema as a ring embeds it (serialize_schema_blob's
//   bytes), and ring_content(): the evring::RingContent that creates a ring
//   embedding it (RingWriter::create({config, ring_content()})), with no
//   schema library needed at run time;
// - `enum class EventType : std::uint16_t` and event_name(EventType);
// - every enum as an `enum class`, every struct with the schema's layout, a
//   static_assert on each field's offset and on each struct's size and
//   alignment (so a compiler that lays them out differently refuses to build);
// - EventInfo<EventType::X> with the payload type and fixed size;
// - publish_<event>(publisher, payload, trailing spans..., flow) for each
//   event type, calling evring::publish (evring/schema/typed_publish.hpp) through
//   argument-dependent lookup: the helpers set each trailing array's count
//   field from its span and return 0 without publishing when a span is too
//   long for its count field (or two arrays sharing a count differ in length).
//
// Contract: the generated header depends on <array>, <cstdint>, <span>,
// <string_view>, evring/schema/schema_types.hpp, and includes evring/schema/typed_publish.hpp
// and evring/config.hpp when they exist (ring_content() only with the latter).
// Structs are standard-layout and trivially copyable.
// generate_cpp_header fails (Error) when a schema name cannot be a C++ name
// (two structs whose CamelCase names collide, a name the header itself uses).
//
// Thread safety: a pure function.
#pragma once

#include <string>

#include "evring/error.hpp"
#include "evring/schema/schema.hpp"

namespace evring {

struct CodegenOptions {
    std::string namespace_name;  // "a" or "a::b"; empty: the schema's content_name
    std::string source_label;    // named in the header's first comment (the schema file)
};

Result<std::string> generate_cpp_header(const Schema& schema, const CodegenOptions& options = {});

// The C header (`evring schema compile --lang c`, docs/schema.md "Generating
// a C header"): C11 over the C ABI (evring/evring.h). Every name it declares starts
// with a prefix, options.namespace_name or else the schema's content_name
// (`orders_fill`, `ORDERS_FILL`, `ORDERS_SIDE_BUY`): the constants and the
// schema's text (PREFIX_writer_options embeds it in a ring), each enum as
// its underlying integer type plus its values, each struct with the
// schema's layout and a _Static_assert on its size, alignment and every
// field's offset, the event types and their names, and one typed write
// helper per event type (schema_codegen_c_write.cpp). Fails (Error) when
// the prefix is not a C name or two schema names collide once spelled for C.
Result<std::string> generate_c_header(const Schema& schema, const CodegenOptions& options = {});

}  // namespace evring
