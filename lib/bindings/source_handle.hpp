// lib/bindings/source_handle.hpp — opening a source with its schema, for the C
// ABI and the Python package alike.
//
// Thread safety: free functions; the handle as evring.h says.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "evring/error.hpp"
#include "evring/source/source_open.hpp"
#include "handles.hpp"

namespace evring::bindings {

struct OpenSettings {
    SourceOptions source;
    std::string schema_path;  // empty: the source's own schema, else a built-in one
};

// The read pipeline's open and schema (Reading::open, find_schema), named as
// source_schema_of says; errors say what was given.
Result<std::unique_ptr<evring_source>> open_source_handle(const std::string& location, const OpenSettings& settings);

// Positions the handle's source at a start position as a user writes it,
// through the one resolver (position.hpp: the CLI's --from); errors name
// `option` ("bad position '...': ..."). Keeps the notice in handle.notice.
Status seek_source(evring_source& handle, const std::string& position, std::string_view option = "position");

}  // namespace evring::bindings
