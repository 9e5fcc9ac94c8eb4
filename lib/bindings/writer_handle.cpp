// Creating a ring writer with its schema (writer_handle.hpp).
#include "writer_handle.hpp"

#include <fmt/format.h>

#include "evring/schema/schema_embed.hpp"
#include "schema/schema_write_check.hpp"
#include "source_schema.hpp"

namespace evring::bindings {
namespace {

Result<RingContent> content_for(const WriterSettings& settings, std::optional<Schema>& schema_out) {
    if (settings.schema.empty()) {
        RingContent content;
        if (settings.content_type) content.content_type = *settings.content_type;
        return content;
    }
    auto schema = load_schema(settings.schema);
    if (!schema) return std::move(schema).error();
    if (settings.content_type && *settings.content_type != schema->content_type())
        return Error(EINVAL, fmt::format("content type {} differs from the schema's, {} ({})",
                                         *settings.content_type, schema->content_type(), schema->source_name()));
    schema_out = *schema;
    return ring_content(*schema);  // type, hash and blob from one schema: they cannot disagree
}

}  // namespace

Result<std::unique_ptr<evring_writer>> create_writer_handle(const WriterSettings& settings) {
    if (settings.name.empty()) return Error(EINVAL, "creating a ring: no name given");
    std::optional<Schema> schema;
    auto content = content_for(settings, schema);
    if (!content) return std::move(content).error().context(fmt::format("creating ring '{}'", settings.name));
    RingConfig config;
    config.name_or_path = settings.name;
    config.descriptor_shift = settings.descriptor_shift;
    config.payload_buf_shift = settings.payload_shift;
    CreateOptions options;
    options.mode = settings.shared ? WriterProcesses::Many : WriterProcesses::One;
    options.keep_on_close = settings.keep;
    options.file_mode = settings.file_mode;
    RingSpec spec(std::move(config), std::move(*content));
    auto writer = RingWriter::create(spec, options);
    if (!writer) return std::move(writer).error();
    // Not Exclusive: a handle is used by any number of threads at once
    // (evring.h), and an Exclusive publisher's plain stores from two threads
    // hand out the same seqno twice (issue 32). Auto takes the plain path
    // as long as one thread reserves, so a single-threaded writer pays
    // nothing; the first other thread revokes it once (writer_claim.hpp).
    auto handle = std::make_unique<evring_writer>(std::move(*writer),
                                                  settings.shared ? WriterSharing::Shared : WriterSharing::Auto);
    handle->schema = std::move(schema);
    if (handle->schema) handle->rules = WriteRules(*handle->schema);
    handle->check_raw = settings.check_raw;
    return handle;
}

std::string refusal(const evring_writer& writer, std::uint16_t event_type, const void* payload,
                    std::uint64_t payload_size) {
    if (!writer.schema) return {};
    const std::span<const std::byte> bytes{static_cast<const std::byte*>(payload),
                                           static_cast<std::size_t>(payload_size)};
    if (writer.rules.admits(event_type, bytes)) return {};  // the common case, without the schema walk
    const DecodeError e = check_payload(*writer.schema, event_type, bytes);
    return e.ok() ? std::string() : describe_write_refusal(*writer.schema, e);
}

bool wanted(const evring_writer& writer, std::uint16_t event_type) noexcept {
    const std::uint64_t word = writer.publisher.interest();
    if (!interest_narrows(word) || !writer.schema) return true;
    const SchemaEvent* event = writer.schema->event(event_type);
    return event == nullptr || interest_admits(word, event->interest());
}

}  // namespace evring::bindings
