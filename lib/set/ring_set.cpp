// Creating, joining and closing a ring set; binding threads to members.
// See ring_set.hpp for the contract.
//
// Invariants:
// - A directory appears at the set's name only by rename of a directory
//   whose manifest is complete and whose creator already holds LOCK_SH on it.
// - Every live set writer holds LOCK_SH on the manifest; a writer removes the
//   set only while holding LOCK_EX, i.e. when no other writer is left, and a
//   joiner re-checks after locking that the manifest is still the one at the
//   name (so it never joins a set being removed).
// - Member entry i is written only by the holder of member i's ring lock
//   (RingWriter, Exclusive); the generation word is advanced after each entry
//   change (fetch-add, release; readers load it with acquire semantics or
//   re-read it with pread after the entries).
#include "evring/set/ring_set.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "set/ring_set_format.hpp"
#include "set/ring_set_manifest.hpp"
#include "evring/ring/ring_writer.hpp"
#include "ring/schema_blob.hpp"
#include "evring/ring/shared_word.hpp"
#include "set/ring_set_files.hpp"

namespace evring {
namespace detail {

struct SetMember {
    std::uint32_t index = 0;
    std::optional<RingWriter> writer;
    std::unique_ptr<Publisher> publisher;  // while a thread is bound
    bool bound = false;
};

struct SetShared {
    std::mutex mutex;
    std::uint64_t serial = 0;
    std::string path;
    int dirfd = -1;
    int manifest_fd = -1;
    void* manifest = nullptr;
    std::size_t manifest_size = 0;
    RingSetSpec spec{RingConfig{}, RingContent{}, 1};
    SetCreateOptions options;
    bool created = false;
    std::vector<std::unique_ptr<SetMember>> members;

    ~SetShared();
    SetManifestHeader& header() const { return *static_cast<SetManifestHeader*>(manifest); }
    SetMemberEntry& entry(std::uint32_t i) const {
        return *reinterpret_cast<SetMemberEntry*>(static_cast<std::byte*>(manifest) + kSetHeaderSize +
                                                  std::uint64_t{i} * kSetMemberEntrySize);
    }
    void publish_entry(std::uint32_t i, bool present);
    Result<SetMember*> take_member();
    void unbind(std::uint32_t index);
};

}  // namespace detail

namespace {

using detail::SetMember;
using detail::SetShared;

std::atomic<std::uint64_t> g_next_serial{1};

struct ThreadBinding {
    std::uint64_t serial;
    std::weak_ptr<SetShared> set;
    Publisher* publisher;
    std::uint32_t index;
};

// The sets this thread is bound to; at thread exit each binding's member is
// released for reuse (ring_set.hpp, "Thread exit").
struct ThreadBindings {
    std::vector<ThreadBinding> list;
    ~ThreadBindings() {
        for (auto& binding : list)
            if (auto set = binding.set.lock()) set->unbind(binding.index);
    }
};
thread_local ThreadBindings t_bindings;

std::uint64_t wall_nanos() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
}

}  // namespace

void detail::SetShared::publish_entry(std::uint32_t i, bool present) {
    SetMemberEntry& e = entry(i);
    // The entry's owner (the member ring's lock holder) is its only writer.
    e.index = i;
    e.pid = static_cast<std::uint32_t>(::getpid());
    e.ring_created_nanos = wall_nanos();
    e.name = {};
    const std::string name = fmt::format("m{}", i);
    std::memcpy(e.name.data(), name.data(), name.size());
    // Release: a reader that sees the state sees the fields above.
    shared::store_release(e.state, static_cast<std::uint32_t>(present ? SetMemberState::Present
                                                                      : SetMemberState::Empty));
    // Release fence + RMW: a reader whose generation load (acquire) sees this
    // change sees the entry.
    shared::fence_release();
    shared::fetch_add_relaxed(header().generation, std::uint64_t{1});
}

Result<SetMember*> detail::SetShared::take_member() {
    for (auto& member : members)
        if (!member->bound) return member.get();  // released by an exited thread: reuse
    const std::uint32_t max = header().max_members;
    for (std::uint32_t i = 0; i < max; ++i) {
        if (std::any_of(members.begin(), members.end(), [&](const auto& m) { return m->index == i; })) continue;
        RingConfig config = spec.config;
        config.name_or_path = fmt::format("{}/m{}", path, i);
        CreateOptions create;
        create.mode = WriterProcesses::One;
        create.keep_on_close = options.keep_on_close;
        auto writer = RingWriter::create({config, spec.content}, create);
        if (!writer) {
            if (writer.error().errno_value() == EBUSY) continue;  // another live writer's member
            return std::move(writer).context(fmt::format("ring set '{}': taking member m{}", path, i)).error();
        }
        auto member = std::make_unique<SetMember>();
        member->index = i;
        member->writer.emplace(std::move(writer).value());
        publish_entry(i, true);
        members.push_back(std::move(member));
        return members.back().get();
    }
    return Error(ENOSPC, fmt::format("ring set '{}': all {} members are held by live writers", path, max));
}

void detail::SetShared::unbind(std::uint32_t index) {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto& member : members)
        if (member->index == index) {
            member->publisher.reset();  // gives the writer claim back
            member->bound = false;
        }
}

detail::SetShared::~SetShared() {
    for (auto& member : members) {
        member->publisher.reset();
        // Emptied while we still hold the member's lock: the entry's only writer.
        if (!options.keep_on_close && manifest != nullptr) publish_entry(member->index, false);
        member->writer.reset();  // removes the member file unless keep_on_close
    }
    members.clear();
    if (manifest_fd >= 0 && !options.keep_on_close && ::flock(manifest_fd, LOCK_EX | LOCK_NB) == 0)
        detail::remove_set_directory(dirfd, path);  // the last writer
    if (manifest != nullptr) ::munmap(manifest, manifest_size);
    if (manifest_fd >= 0) ::close(manifest_fd);
    if (dirfd >= 0) ::close(dirfd);
}

Result<RingSetWriter> RingSetWriter::create(const RingSetSpec& spec, const SetCreateOptions& options) {
    if (spec.max_members == 0 || spec.max_members > kMaxSetMembers)
        return Error(EINVAL, fmt::format("ring set '{}': max_members {} is outside 1..{}", spec.config.name_or_path,
                                         spec.max_members, kMaxSetMembers));
    auto path = resolve_ring_path(spec.config.name_or_path, options.directory);
    if (!path) return std::move(path).error();
    auto opened = detail::create_or_join_set(*path, spec);
    if (!opened) return std::move(opened).context(fmt::format("creating ring set '{}'", spec.config.name_or_path)).error();

    RingSetWriter writer;
    writer.shared_ = std::make_shared<SetShared>();
    SetShared& s = *writer.shared_;
    s.serial = g_next_serial.fetch_add(1, std::memory_order_relaxed);
    s.path = std::move(path).value();
    s.dirfd = opened->dirfd;
    s.manifest_fd = opened->manifest_fd;
    s.manifest = opened->mapping;
    s.manifest_size = opened->mapping_size;
    s.created = opened->created;
    s.spec = spec;
    s.options = options;
    return writer;
}

RingSetWriter::RingSetWriter(RingSetWriter&&) noexcept = default;
RingSetWriter& RingSetWriter::operator=(RingSetWriter&&) noexcept = default;
RingSetWriter::~RingSetWriter() = default;

Result<Publisher*> RingSetWriter::publisher() {
    for (const auto& binding : t_bindings.list)
        if (binding.serial == shared_->serial) return binding.publisher;
    return bind_this_thread();
}

Result<Publisher*> RingSetWriter::bind_this_thread() {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    auto member = shared_->take_member();
    if (!member) return std::move(member).error();
    SetMember& m = **member;
    // Auto on a ring held exclusively: this thread's first reserve claims the
    // plain-store path (writer_claim.hpp).
    m.publisher = std::make_unique<Publisher>(m.writer->ring(), WriterSharing::Auto);
    m.bound = true;
    std::erase_if(t_bindings.list, [](const ThreadBinding& b) { return b.set.expired(); });
    t_bindings.list.push_back({shared_->serial, shared_, m.publisher.get(), m.index});
    return m.publisher.get();
}

const std::string& RingSetWriter::path() const noexcept { return shared_->path; }

std::uint32_t RingSetWriter::members_held() const {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    return static_cast<std::uint32_t>(shared_->members.size());
}

bool RingSetWriter::created() const noexcept { return shared_->created; }

}  // namespace evring
