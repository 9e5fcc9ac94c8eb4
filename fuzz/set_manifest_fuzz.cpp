// Fuzz target: a ring set's manifest (ring_set_manifest.hpp). Any bytes must
// be refused with a message or parsed into at most kMaxSetMembers members
// whose names passed check_member_name and whose paths stay in the set's
// directory; the parse never allocates more than the input holds.
#include <cstdint>
#include <span>

#include "set/ring_set_manifest.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
    auto manifest = evring::parse_set_manifest(bytes, "/set");
    if (!manifest) {
        if (manifest.error().message().empty()) __builtin_trap();
        return 0;
    }
    if (manifest->members.size() > evring::kMaxSetMembers || manifest->schema_blob.size() > size) __builtin_trap();
    for (const auto& member : manifest->members) {
        if (!evring::check_member_name(member.name).ok()) __builtin_trap();
        if (member.path != "/set/" + member.name) __builtin_trap();
    }
    return 0;
}
