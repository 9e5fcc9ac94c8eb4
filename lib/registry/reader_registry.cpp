// The reader registry's shared vocabulary. See reader_registry.hpp for the
// contract.
#include "registry/reader_registry.hpp"

namespace evring {

const char* to_string(RegistryState state) noexcept {
    switch (state) {
    case RegistryState::Missing:
        return "missing";
    case RegistryState::Valid:
        return "valid";
    case RegistryState::NotARegistry:
        return "not-a-registry";
    case RegistryState::UnsupportedVersion:
        return "unsupported-version";
    case RegistryState::Damaged:
        return "damaged";
    case RegistryState::OtherRing:
        return "other-ring";
    case RegistryState::Unreadable:
        return "unreadable";
    }
    return "damaged";
}

std::string reader_registry_path(std::string_view ring_path) {
    std::string path(ring_path);
    path += kRegistrySuffix;
    return path;
}

}  // namespace evring
