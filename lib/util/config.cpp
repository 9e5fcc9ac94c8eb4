#include "evring/config.hpp"

#include <fmt/format.h>

#include <bit>
#include <charconv>

namespace evring {
namespace {

std::string quoted(std::string_view text) {
    std::string out = "'";
    out += text;
    out += "'";
    return out;
}

Result<unsigned> parse_shift(std::string_view field, const char* name, unsigned default_value) {
    if (field.empty()) return default_value;
    unsigned value = 0;
    auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (ec != std::errc() || end != field.data() + field.size()) {
        return Error(EINVAL, std::string(name) + " " + quoted(field) + " is not a whole number");
    }
    return value;
}

bool is_power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

std::string range_error(const char* name, unsigned value, unsigned lo, unsigned hi) {
    return fmt::format("{} {} is out of range: allowed {} to {}", name, value, lo, hi);
}

}  // namespace

Status validate_descriptor_shift(unsigned shift) {
    if (shift < kMinDescriptorShift || shift > kMaxDescriptorShift)
        return Error(EINVAL, range_error("descriptor shift", shift, kMinDescriptorShift,
                                         kMaxDescriptorShift));
    return {};
}

Status validate_payload_buf_shift(unsigned shift) {
    if (shift < kMinPayloadBufShift || shift > kMaxPayloadBufShift)
        return Error(EINVAL, range_error("payload buffer shift", shift, kMinPayloadBufShift,
                                         kMaxPayloadBufShift));
    return {};
}

Result<RingConfig> parse_ring_config(std::string_view text) {
    RingConfig config;
    auto first = text.find(':');
    config.name_or_path = std::string(text.substr(0, first));
    if (config.name_or_path.empty())
        return Error(EINVAL, "ring configuration " + quoted(text) + ": the ring name is empty");
    if (first == std::string_view::npos) return config;

    std::string_view rest = text.substr(first + 1);
    auto second = rest.find(':');
    if (second == std::string_view::npos)
        return Error(EINVAL, "ring configuration " + quoted(text) +
                                 ": expected <name>:<descriptor-shift>:<payload-buffer-shift>");
    std::string_view descriptor_field = rest.substr(0, second);
    std::string_view payload_field = rest.substr(second + 1);
    if (payload_field.find(':') != std::string_view::npos)
        return Error(EINVAL, "ring configuration " + quoted(text) + ": too many ':' fields");

    auto descriptor = parse_shift(descriptor_field, "descriptor shift", kDefaultDescriptorShift);
    if (!descriptor) return std::move(descriptor).context("ring configuration " + quoted(text)).error();
    auto payload = parse_shift(payload_field, "payload buffer shift", kDefaultPayloadBufShift);
    if (!payload) return std::move(payload).context("ring configuration " + quoted(text)).error();
    if (auto s = validate_descriptor_shift(*descriptor); !s)
        return std::move(s).context("ring configuration " + quoted(text)).error();
    if (auto s = validate_payload_buf_shift(*payload); !s)
        return std::move(s).context("ring configuration " + quoted(text)).error();
    config.descriptor_shift = *descriptor;
    config.payload_buf_shift = *payload;
    return config;
}

Status validate_ring_size(const RingSize& size, std::uint64_t page_size) {
    if (!is_power_of_two(size.descriptor_capacity))
        return Error(EINVAL, fmt::format("descriptor capacity {} is not a power of two",
                                         size.descriptor_capacity));
    if (!is_power_of_two(size.payload_buf_size))
        return Error(EINVAL, fmt::format("payload buffer size {} is not a power of two",
                                         size.payload_buf_size));
    const unsigned descriptor_shift = static_cast<unsigned>(std::countr_zero(size.descriptor_capacity));
    const unsigned payload_shift = static_cast<unsigned>(std::countr_zero(size.payload_buf_size));
    if (auto s = validate_descriptor_shift(descriptor_shift); !s) return s;
    if (auto s = validate_payload_buf_shift(payload_shift); !s) return s;
    if (size.context_area_size % kSectionAlignment != 0)
        return Error(EINVAL, fmt::format("context area size {} is not a whole number of 2 MiB pages",
                                         size.context_area_size));
    // With the shifts in range, this bound is what keeps the sections (and
    // the twice-mapped payload buffer) from adding up past 2^64.
    if (size.context_area_size > kMaxContextAreaSize)
        return Error(EINVAL, fmt::format("context area size {} is larger than the {} bytes (1 TiB) "
                                         "evring maps; the ring's sections would not fit in memory",
                                         size.context_area_size, kMaxContextAreaSize));
    if (!is_power_of_two(page_size))
        return Error(EINVAL, fmt::format("page size {} is not a power of two", page_size));
    // Sections follow each other unpadded (RingLayout), so each must be a
    // whole number of pages for the next one to start on a page.
    if (kHeaderSectionSize % page_size != 0)
        return Error(EINVAL, fmt::format("the 2 MiB header section of a RING01 ring is not a whole "
                                         "number of the backing file system's {}-byte pages; use a "
                                         "file system with pages of 2 MiB or less",
                                         page_size));
    const std::uint64_t descriptor_bytes = size.descriptor_capacity * sizeof(EventDescriptor);
    if (descriptor_bytes % page_size != 0)
        return Error(EINVAL, fmt::format("descriptor array of {} bytes (shift {}) is not a whole number "
                                         "of {}-byte pages of the backing file system; use a "
                                         "descriptor shift of at least {}",
                                         descriptor_bytes, descriptor_shift, page_size,
                                         std::countr_zero(page_size / sizeof(EventDescriptor))));
    if (size.payload_buf_size % page_size != 0)
        return Error(EINVAL, fmt::format("payload buffer of {} bytes (shift {}) is not a whole number "
                                         "of {}-byte pages of the backing file system; use a payload "
                                         "buffer shift of at least {}",
                                         size.payload_buf_size, payload_shift, page_size,
                                         std::countr_zero(page_size)));
    if (size.context_area_size % page_size != 0)
        return Error(EINVAL, fmt::format("context area of {} bytes is not a whole number of {}-byte pages",
                                         size.context_area_size, page_size));
    return {};
}

}  // namespace evring
