// Private to lib/: the records inside a version 2 block.
//
// A block's records are checked as a whole before any is handed out
// (check_block_records), so a reader returns either every record of a block
// or none and a Damage report; parse_record then only reads them.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "recording/recording_reader.hpp"

namespace evring::detail {

// "" when `content` is exactly header.record_count well-formed records whose
// sequence numbers span exactly header.first_seqno..last_seqno and which hold
// an End record iff the header says so; otherwise what is wrong, naming the
// record and its offset in the content.
std::string check_block_records(std::span<const std::byte> content, const RecordingBlockHeader& header);

// Reads the record at `pos` (checked) into `record`, returns the offset of the
// next one. Unknown kinds come back with their kind value and nothing else.
std::size_t parse_record(std::span<const std::byte> content, std::size_t pos, Record& record);

}  // namespace evring::detail
