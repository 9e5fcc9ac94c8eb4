#include "output/json.hpp"

#include "output/escape.hpp"

namespace evring::cli {

std::string json_quote(std::string_view text) {
    std::string out;
    append_json_string(out, text);
    return out;
}

void JsonObject::key(std::string_view name) {
    if (!body_.empty()) body_ += ',';
    body_ += json_quote(name);
    body_ += ':';
}

JsonObject& JsonObject::number(std::string_view name, std::uint64_t value) {
    key(name);
    body_ += std::to_string(value);
    return *this;
}

JsonObject& JsonObject::string(std::string_view name, std::string_view value) {
    key(name);
    body_ += json_quote(value);
    return *this;
}

JsonObject& JsonObject::boolean(std::string_view name, bool value) {
    key(name);
    body_ += value ? "true" : "false";
    return *this;
}

JsonObject& JsonObject::numbers(std::string_view name, const std::vector<std::uint64_t>& values) {
    key(name);
    body_ += '[';
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (i > 0) body_ += ',';
        body_ += std::to_string(values[i]);
    }
    body_ += ']';
    return *this;
}

JsonObject& JsonObject::object(std::string_view name, const JsonObject& value) {
    key(name);
    body_ += value.text();
    return *this;
}

JsonObject& JsonObject::null(std::string_view name) {
    key(name);
    body_ += "null";
    return *this;
}

}  // namespace evring::cli
