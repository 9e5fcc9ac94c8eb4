// Parsing nats:// URLs. See nats_connection.hpp for the grammar.
#include "evring/nats/nats_connection.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>

#include "util/text_escape.hpp"

namespace evring::nats {
namespace {

constexpr std::string_view kScheme = "nats://";

// The text with any credentials replaced by "***", so errors never show them.
std::string masked(std::string_view text) {
    if (!text.starts_with(kScheme)) return std::string(text);
    std::string_view rest = text.substr(kScheme.size());
    std::size_t at = rest.find('@');
    std::size_t slash = rest.find('/');
    if (at == std::string_view::npos || (slash != std::string_view::npos && slash < at))
        return std::string(text);
    return fmt::format("{}***{}", kScheme, rest.substr(at));
}

Error url_error(std::string_view text, std::string_view reason) {
    // A hostile URL (a megabyte of host name) is not echoed whole.
    return Error(EINVAL, fmt::format("malformed NATS URL '{}': {}", shortened(masked(text)), reason));
}

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.';
}

// A DNS name or IPv4 address: labels of name characters, no empty label.
bool valid_host_name(std::string_view host) {
    if (host.empty() || host.size() > 253 || host.front() == '.' || host.front() == '-') return false;
    for (std::size_t i = 0; i < host.size(); ++i) {
        if (!is_name_char(host[i])) return false;
        if (host[i] == '.' && i + 1 < host.size() && host[i + 1] == '.') return false;
    }
    return true;
}

// Splits "HOST[:PORT]" (HOST possibly "[v6]") into `url`.
Status parse_host_port(std::string_view text, std::string_view authority, ServerAddress& url) {
    std::string_view port_text;
    if (authority.starts_with('[')) {
        std::size_t close = authority.find(']');
        if (close == std::string_view::npos) return url_error(text, "'[' without a closing ']'");
        url.host = std::string(authority.substr(1, close - 1));
        if (url.host.empty() || url.host.find_first_not_of("0123456789abcdefABCDEF:.") != std::string::npos ||
            url.host.find(':') == std::string::npos)
            return url_error(text, fmt::format("'{}' is not an IPv6 address", shortened(url.host)));
        std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') return url_error(text, "expected ':PORT' after the IPv6 address");
            port_text = after.substr(1);
            if (port_text.empty()) return url_error(text, "empty port after ':'");
        }
    } else {
        std::size_t colon = authority.rfind(':');
        std::string_view host = authority.substr(0, colon);
        if (colon != std::string_view::npos) {
            port_text = authority.substr(colon + 1);
            if (port_text.empty()) return url_error(text, "empty port after ':'");
        }
        if (host.empty()) return url_error(text, "no host");
        if (host.find(':') != std::string_view::npos)
            return url_error(text, "an IPv6 address must be written in brackets, as in nats://[::1]:4222");
        if (!valid_host_name(host))
            return url_error(text, fmt::format("'{}' is not a host name or IPv4 address", shortened(host)));
        url.host = std::string(host);
    }
    if (!port_text.empty()) {
        unsigned port = 0;
        auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
        if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535)
            return url_error(text, fmt::format("port '{}' is not a number from 1 to 65535", shortened(port_text)));
        url.port = static_cast<std::uint16_t>(port);
    }
    return {};
}

}  // namespace

Status validate_stream_name(std::string_view name) {
    if (name.empty()) return Error(EINVAL, "empty stream name");
    if (name.size() > kMaxStreamNameSize)
        return Error(EINVAL, fmt::format("stream name of {} bytes is longer than {} bytes", name.size(),
                                         kMaxStreamNameSize));
    for (char c : name) {
        auto u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u >= 0x7f || c == '.' || c == '*' || c == '>' || c == '/' || c == '\\')
            return Error(EINVAL, fmt::format("stream name '{}' holds the character {:#04x} ('.', '*', '>', '/', "
                                             "'\\', spaces and control characters are not allowed)",
                                             name, u));
    }
    return {};
}

Result<Url> parse_url(std::string_view text) {
    if (!text.starts_with(kScheme)) {
        if (text.find("://") != std::string_view::npos)
            return url_error(text, "only the nats:// scheme is supported");
        return url_error(text, "expected nats://HOST:PORT");
    }
    Url url;
    std::string_view rest = text.substr(kScheme.size());
    std::size_t slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    if (slash != std::string_view::npos) {
        std::string_view stream = rest.substr(slash + 1);
        if (!stream.empty()) {
            if (auto s = validate_stream_name(stream); !s) return url_error(text, s.error().message());
            url.stream = std::string(stream);
        }
    }
    if (std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
        url.credentials = std::string(authority.substr(0, at));
        if (url.credentials.empty()) return url_error(text, "empty credentials before '@'");
        for (char c : url.credentials)
            if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f)
                return url_error(text, "credentials hold a space or a control character");
        authority = authority.substr(at + 1);
    }
    // SERVER[,SERVER]...: the first in host/port, the others after it.
    for (std::size_t count = 0;; ++count) {
        const std::size_t comma = authority.find(',');
        const std::string_view one = authority.substr(0, comma);
        if (one.empty()) return url_error(text, count == 0 ? "no host" : "an empty server in the list");
        if (count == kMaxServers) return url_error(text, fmt::format("more than {} servers", kMaxServers));
        ServerAddress address;
        if (auto s = parse_host_port(text, one, address); !s) return std::move(s).error();
        if (count == 0) {
            url.host = std::move(address.host);
            url.port = address.port;
        } else {
            url.more_servers.push_back(std::move(address));
        }
        if (comma == std::string_view::npos) break;
        authority = authority.substr(comma + 1);
    }
    return url;
}

namespace {

std::string host_port(std::string_view host, std::uint16_t port) {
    const bool v6 = host.find(':') != std::string_view::npos;
    return fmt::format("{}{}{}:{}", v6 ? "[" : "", host, v6 ? "]" : "", port);
}

}  // namespace

std::string Url::server_url() const {
    return fmt::format("nats://{}{}{}", credentials, credentials.empty() ? "" : "@", host_port(host, port));
}

std::vector<std::string> Url::server_urls() const {
    std::vector<std::string> urls{server_url()};
    for (const ServerAddress& other : more_servers)
        urls.push_back(fmt::format("nats://{}{}{}", credentials, credentials.empty() ? "" : "@",
                                   host_port(other.host, other.port)));
    return urls;
}

std::string Url::display() const {
    std::string servers = host_port(host, port);
    for (const ServerAddress& other : more_servers) servers += "," + host_port(other.host, other.port);
    return fmt::format("nats://{}{}{}", servers, stream.empty() ? "" : "/", stream);
}

}  // namespace evring::nats
