// Test support for the schema suites: payload bytes built field by field, and
// the schema files of tests/schemas (EVRING_SCHEMA_TEST_DIR, set by meson).
#pragma once

#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "evring/schema/schema.hpp"

namespace evring::test {

struct PayloadBytes {
    std::vector<std::byte> bytes;

    explicit PayloadBytes(std::size_t size) : bytes(size) {}

    template <class T>
    void put(std::size_t offset, T value) {
        if (bytes.size() < offset + sizeof value) bytes.resize(offset + sizeof value);
        std::memcpy(bytes.data() + offset, &value, sizeof value);
    }
    void append(std::string_view text) {
        for (char c : text) bytes.push_back(static_cast<std::byte>(c));
    }
    void append(const PayloadBytes& other) { bytes.insert(bytes.end(), other.bytes.begin(), other.bytes.end()); }
    std::span<const std::byte> span() const { return bytes; }
};

inline std::string schema_test_dir() {
    const char* dir = std::getenv("EVRING_SCHEMA_TEST_DIR");
    return dir != nullptr ? dir : "tests/schemas";
}

inline Schema load_test_schema(const std::string& name) {
    auto schema = Schema::parse_file(schema_test_dir() + "/" + name);
    if (!schema) {
        ADD_FAILURE() << schema.error().message();
        std::abort();
    }
    return std::move(schema).value();
}

}  // namespace evring::test
