// The writer's part of the reader registry (writer_registry.hpp).
#include "files/writer_registry.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "evring/ring/ring_writer.hpp"
#include "registry/registry_file.hpp"
#include "registry/registry_identity.hpp"
#include "registry/registry_open.hpp"

namespace evring {
namespace {

// The writer's ring file, reopened by its path (the writer owns the name,
// so the file there is its own), with the identity of that instance.
struct WriterRing {
    detail::UniqueFd fd;
    RingIdentity identity{};
    mode_t mode = 0;
};

Result<WriterRing> writer_ring(const RingWriter& writer) {
    WriterRing ring;
    ring.fd.reset(::open(writer.path().c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (ring.fd.get() < 0)
        return Error::from_errno(errno, fmt::format("opening ring '{}'", writer.path()));
    const RingHeader& mapped = writer.ring().header();
    RingHeader on_disk{};
    if (::pread(ring.fd.get(), &on_disk, sizeof on_disk, 0) !=
            static_cast<ssize_t>(sizeof on_disk) ||
        on_disk.content_type != mapped.content_type || on_disk.schema_hash != mapped.schema_hash ||
        on_disk.size.descriptor_capacity != mapped.size.descriptor_capacity ||
        on_disk.size.payload_buf_size != mapped.size.payload_buf_size)
        return Error(
            ESTALE, fmt::format("the file at '{}' is no longer this writer's ring", writer.path()));
    auto identity = detail::ring_identity_of(ring.fd.get(), mapped);
    if (!identity) return std::move(identity).error();
    ring.identity = *identity;
    struct stat st {};
    if (::fstat(ring.fd.get(), &st) != 0)
        return Error::from_errno(errno, "examining the ring file");
    ring.mode = static_cast<mode_t>(st.st_mode & 0666);
    return ring;
}

}  // namespace

Status create_reader_registry(const RingWriter& writer, const RegistryFileOptions& options) {
    if (options.capacity == 0 || options.capacity > kRegistryMaxCapacity)
        return Error(EINVAL, fmt::format("reader registry capacity {} is outside 1 to {}",
                                         options.capacity, kRegistryMaxCapacity));
    auto ring = writer_ring(writer);
    if (!ring) return std::move(ring).context("creating the reader registry").error();
    const std::string path =
        options.path.empty() ? reader_registry_path(writer.path()) : options.path;
    const mode_t mode = options.file_mode != 0 ? options.file_mode & 07777 : ring->mode;
    std::string notice;
    auto file = detail::attach_registry(path, ring->identity, {options.capacity, mode}, notice);
    if (!file) return std::move(file).error();
    return {};
}

Status remove_reader_registry(const RingWriter& writer, std::string_view registry_path) {
    auto ring = writer_ring(writer);
    if (!ring) return std::move(ring).context("removing the reader registry").error();
    const std::string path =
        registry_path.empty() ? reader_registry_path(writer.path()) : std::string(registry_path);
    return detail::remove_registry(path, ring->identity);
}

}  // namespace evring
