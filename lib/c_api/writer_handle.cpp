// Creating a ring writer with its schema (writer_handle.hpp).
#include "writer_handle.hpp"

#include <fmt/format.h>

#include "evring/schema_embed.hpp"
#include "source_schema.hpp"

namespace evring::bindings {
namespace {

struct Content {
    RingContent content;
    std::vector<std::byte> schema_blob;
};

Result<Content> content_for(const WriterSettings& settings) {
    Content c;
    RingContent& content = c.content;
    if (settings.schema.empty()) {
        if (settings.content_type) content.content_type = *settings.content_type;
        return c;
    }
    auto schema = load_schema(settings.schema);
    if (!schema) return std::move(schema).error();
    if (settings.content_type && *settings.content_type != schema->content_type())
        return Error(EINVAL, fmt::format("content type {} differs from the schema's, {} ({})",
                                         *settings.content_type, schema->content_type(), schema->source_name()));
    content.content_type = schema->content_type();
    content.schema_hash = schema->hash();
    c.schema_blob = serialize_schema_blob(*schema);
    return c;
}

}  // namespace

Result<std::unique_ptr<evring_writer>> create_writer_handle(const WriterSettings& settings) {
    if (settings.name.empty()) return Error(EINVAL, "creating a ring: no name given");
    auto content = content_for(settings);
    if (!content) return std::move(content).error().context(fmt::format("creating ring '{}'", settings.name));
    RingConfig config;
    config.name_or_path = settings.name;
    config.descriptor_shift = settings.descriptor_shift;
    config.payload_buf_shift = settings.payload_shift;
    CreateOptions options;
    options.mode = settings.shared ? WriterMode::Shared : WriterMode::Exclusive;
    options.keep_on_close = settings.keep;
    options.file_mode = settings.file_mode;
    RingSpec spec(std::move(config), content->content);
    spec.schema_blob = std::move(content->schema_blob);
    auto writer = RingWriter::create(spec, options);
    if (!writer) return std::move(writer).error();
    return std::make_unique<evring_writer>(std::move(*writer),
                                           settings.shared ? WriterSharing::Shared : WriterSharing::Exclusive);
}

}  // namespace evring::bindings
