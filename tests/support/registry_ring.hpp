// Test support for the reader registry: a ring file in a private directory,
// a writer mapping with a publisher, and a RingReader on it (which the
// registry binds to), plus quiet registration options, registering a reader
// and listing the ring's readers.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evring/ring/publisher.hpp"
#include "registry/reader_kinds.hpp"
#include "registry/reader_listing.hpp"
#include "registry/reader_registration.hpp"
#include "evring/ring/ring_reader.hpp"
#include "support/temp_ring.hpp"

namespace evring::test {

class RegistryRing {
public:
    explicit RegistryRing(const RingParams& params = small_params(8, 16))
        : path(dir.file("ring")), params_(params) {
        create();
    }

    // Removes the ring and creates a new one under the same path: a new
    // ring instance with the same name, sizes and content.
    void recreate() {
        publisher.reset();
        reader.reset();
        writer.reset();
        ::unlink(path.c_str());
        create();
    }

    // Publishes `count` events of 8 bytes; returns the last seqno. With a
    // non-zero `first_ns`, event i is stamped first_ns + i * step_ns.
    std::uint64_t publish(std::uint64_t count, std::uint64_t first_ns = 0,
                          std::uint64_t step_ns = 0) {
        std::uint64_t last = 0;
        for (std::uint64_t i = 0; i < count; ++i) {
            Reservation r = publisher->reserve(8);
            r.descriptor().event_type = 3;
            if (first_ns != 0) r.descriptor().record_epoch_nanos = first_ns + i * step_ns;
            std::memcpy(r.payload(), &i, 8);
            publisher->commit(r);
            last = r.seqno();
        }
        return last;
    }

    std::string registry_path() const { return path + ".readers"; }

    TempDir dir;
    std::string path;
    std::optional<MappedRing> writer;
    std::optional<Publisher> publisher;
    std::optional<RingReader> reader;

private:
    void create() {
        const int fd = create_ring_file(path, params_);
        ::close(fd);
        writer.emplace(map_path(path, Access::ReadWrite));
        publisher.emplace(*writer);
        auto opened = RingReader::open(path);
        if (!opened) {
            ADD_FAILURE() << opened.error().message();
            std::abort();
        }
        reader.emplace(std::move(opened).value());
    }

    RingParams params_;
};

inline RegistrationOptions quiet(std::uint32_t capacity = kRegistryDefaultCapacity) {
    RegistrationOptions options;
    options.registry.capacity = capacity;
    options.print_warning = false;
    return options;
}

// Quiet options publishing every `every_events` events, or when an event's
// timestamp is `every` past the last publication's (and heartbeats while idle).
inline RegistrationOptions paced(std::uint32_t every_events, std::chrono::nanoseconds every) {
    RegistrationOptions options = quiet();
    options.update_every_events = every_events;
    options.update_every = every;
    return options;
}

inline ReaderInfo reader_info(const std::string& name, std::uint32_t kind = reader_kinds::kApplication,
                              const std::string& detail = {}) {
    return ReaderInfo{name, kind, detail};
}

// Registers a reader of `ring` named `name`, as `evring watch` would be
// (kind Watch, detail "to the terminal"), quietly by default.
inline ReaderRegistration attach(const RegistryRing& ring, const std::string& name,
                                 const RegistrationOptions& options = quiet()) {
    return ReaderRegistration::attach(
        *ring.reader, reader_info(name, reader_kinds::kWatch, "to the terminal"), options);
}

// The names of the readers a listing shows, by slot.
inline std::vector<std::string> names_of(const ReaderListing& listing) {
    std::vector<std::string> names;
    for (const ReaderEntry& entry : listing.readers) names.push_back(entry.name);
    return names;
}

inline std::string file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Overwrites `size` bytes at `offset` of the file at `path`.
inline void poke(const std::string& path, std::uint64_t offset, const void* bytes,
                 std::size_t size) {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(offset));
    file.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(size));
    ASSERT_TRUE(file.good()) << "poking " << path;
}

template <class T>
void poke_value(const std::string& path, std::uint64_t offset, const T& value) {
    poke(path, offset, &value, sizeof value);
}

inline ReaderListing listing_of(const RegistryRing& ring, const ListingOptions& options = {}) {
    auto listing = list_readers(*ring.reader, options);
    if (!listing) {
        ADD_FAILURE() << listing.error().message();
        return {};
    }
    return std::move(listing).value();
}

}  // namespace evring::test
