// tools/evring/output/json.hpp — a small JSON object writer for `info` and `ls`.
//
// Keys are written in call order; values are numbers, strings, booleans,
// arrays of numbers or nested objects. Thread safety: plain value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace evring::cli {

class JsonObject {
public:
    JsonObject& number(std::string_view key, std::uint64_t value);
    JsonObject& string(std::string_view key, std::string_view value);
    JsonObject& boolean(std::string_view key, bool value);
    JsonObject& numbers(std::string_view key, const std::vector<std::uint64_t>& values);
    JsonObject& object(std::string_view key, const JsonObject& value);
    JsonObject& null(std::string_view key);
    std::string text() const { return "{" + body_ + "}"; }

private:
    void key(std::string_view name);
    std::string body_;
};

std::string json_quote(std::string_view text);

}  // namespace evring::cli
