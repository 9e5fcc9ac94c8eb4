// tools/evring/output/escape.hpp — the CLI's names for the library's text escaping.
//
// Everything the CLI shows that it did not write itself goes through
// evring/text_escape.hpp (printable() for messages and terminals,
// append_json_string() for JSON, the one JSON escaper, shortened() for long
// values echoed in errors); this header only brings those names into
// evring::cli.
#pragma once

#include "util/text_escape.hpp"

namespace evring::cli {

using evring::append_json_string;
using evring::is_valid_utf8;
using evring::printable;
using evring::shortened;
using evring::utf8_sequence_length;
using evring::valid_utf8;

}  // namespace evring::cli
