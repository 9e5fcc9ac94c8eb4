// Test support: rings in private temporary files, created and mapped directly
// (without the ring-directory logic of ring_writer.hpp).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "evring/ring/ring.hpp"

namespace evring::test {

// A directory removed (with its files) when the object goes away. Lives in
// /dev/shm when present so tests exercise tmpfs like a fallback ring would.
class TempDir {
public:
    TempDir() {
        std::string base = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        std::string templ = base + "/evring-test-XXXXXX";
        char* made = ::mkdtemp(templ.data());
        if (made == nullptr) std::abort();
        path_ = made;
    }
    ~TempDir() {
        std::string command = "rm -rf '" + path_ + "'";
        if (std::system(command.c_str()) != 0) {
        }
    }
    const std::string& path() const { return path_; }
    std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

// The content of every test ring: the test content type, hash bytes 0..31.
inline RingContent test_content() {
    RingContent content;
    content.content_type = static_cast<std::uint16_t>(ContentType::Test);
    for (unsigned i = 0; i < 32; ++i) content.schema_hash[i] = static_cast<std::uint8_t>(i);
    return content;
}

inline RingParams small_params(unsigned descriptor_shift = 8, unsigned payload_shift = 16) {
    RingParams params;
    params.content = test_content();
    params.descriptor_shift = descriptor_shift;
    params.payload_buf_shift = payload_shift;
    return params;
}

// What RingWriter::create takes for a small test ring at `name_or_path`.
inline RingSpec small_spec(const std::string& name_or_path, unsigned descriptor_shift = 8,
                           unsigned payload_shift = 16) {
    RingConfig config;
    config.name_or_path = name_or_path;
    config.descriptor_shift = descriptor_shift;
    config.payload_buf_shift = payload_shift;
    return RingSpec(config, test_content());
}

// Creates a ring file at `path` and returns its descriptor (caller closes).
inline int create_ring_file(const std::string& path, const RingParams& params) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    EXPECT_GE(fd, 0) << path;
    auto status = initialize_ring_file(fd, params, path);
    EXPECT_TRUE(status.ok()) << status.error().message();
    return fd;
}

inline MappedRing map_path(const std::string& path, Access access) {
    int fd = ::open(path.c_str(), (access == Access::ReadWrite ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    EXPECT_GE(fd, 0) << path;
    auto ring = MappedRing::map(fd, access, path);
    ::close(fd);
    if (!ring) {
        ADD_FAILURE() << ring.error().message();
        std::abort();
    }
    return std::move(ring).value();
}

// A writable ring and a read-only view of the same file.
struct RingPair {
    explicit RingPair(const RingParams& params = small_params())
        : path(dir.file("ring")) {
        int fd = create_ring_file(path, params);
        ::close(fd);
        writer.emplace(map_path(path, Access::ReadWrite));
        reader.emplace(map_path(path, Access::ReadOnly));
    }
    TempDir dir;
    std::string path;
    std::optional<MappedRing> writer;
    std::optional<MappedRing> reader;
};

}  // namespace evring::test
