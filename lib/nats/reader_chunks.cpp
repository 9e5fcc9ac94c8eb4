// Reassembling what the relay sent in chunks: a schema too large for one
// message, and an event larger than the stream's message limit. A chunk that
// goes missing loses its copy of the schema, or is a gap for its event.
// Part of StreamReader::Impl::process (reader.cpp).
#include <fmt/format.h>

#include <cerrno>

#include "reader_impl.hpp"

namespace evring::nats {

void StreamReader::Impl::take_schema_chunk() {
    have_current = false;
    if (decoded.chunk == 0) {
        schema_assembly.clear();
        schema_chunks_seen = 0;
    } else if (decoded.chunk != schema_chunks_seen) {
        schema_assembly.clear();  // a chunk went missing: this copy of the schema is lost
        schema_chunks_seen = 0;
        return;
    }
    schema_assembly.insert(schema_assembly.end(), decoded.part.begin(), decoded.part.end());
    if (++schema_chunks_seen == decoded.chunk_count && schema_assembly.size() == decoded.schema_size) {
        schema = std::move(schema_assembly);
        schema_assembly = {};
        schema_chunks_seen = 0;
    }
}

// One chunk of a large event; the event once its last chunk is in.
SourceStep StreamReader::Impl::chunk_item(SourceItem& item) {
    if (decoded.chunk == 0) {
        chunked_event = decoded.event;
        chunk_count = decoded.chunk_count;
        chunks_seen = 0;
        assembly.clear();
    } else if (chunks_seen == 0 || decoded.chunk != chunks_seen || decoded.event.seqno != chunked_event.seqno) {
        have_current = false;
        chunks_seen = 0;
        return SourceStep::NotReady;  // a chunk without its start: the start said nothing was lost yet
    }
    if (assembly.size() + decoded.part.size() > options.max_chunked_event)
        return fail(Error(EFBIG, fmt::format("event {} of stream '{}' is larger than {} bytes", decoded.event.seqno,
                                             options.stream, options.max_chunked_event)));
    assembly.insert(assembly.end(), decoded.part.begin(), decoded.part.end());
    have_current = false;
    if (++chunks_seen < chunk_count) return SourceStep::NotReady;
    chunks_seen = 0;
    return assembled_item(item);
}

// The chunks' event, unless they do not add up to its size.
SourceStep StreamReader::Impl::assembled_item(SourceItem& item) {
    if (assembly.size() != chunked_event.payload_size)
        return hole(chunked_event.seqno, 1,
                    fmt::format("event {} arrived in chunks of {} bytes in all, not {}", chunked_event.seqno,
                                assembly.size(), chunked_event.payload_size),
                    item);
    bool consumed = true;
    SourceStep step = event_item(chunked_event, assembly, item, consumed);
    if (!consumed) {
        // The hole goes first; the whole event next time, from the assembly.
        have_current = true;
        decoded.kind = MessageKind::Event;
        decoded.chunk_count = 1;
        decoded.event = chunked_event;
        decoded.part = assembly;
    }
    return step;
}

}  // namespace evring::nats
