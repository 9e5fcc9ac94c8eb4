// evring/ring/ring_writer.hpp — creating a ring file, owning it, removing it.
//
// Contract:
// - A pure name (no '/') lives in the default ring directory
//   (ring_directory.hpp: hugetlbfs when mounted, else /dev/shm with one
//   warning saying why); a name with '/' is used as written.
// - A writer creates its ring atomically: it builds the whole file under a
//   temporary name <name>.<pid>, takes its locks, then renames it into place
//   with renameat2(RENAME_NOREPLACE), so a file at a ring's name is always a
//   complete ring. Ring files are opened with O_NOFOLLOW and created with
//   CreateOptions::file_mode exactly (the umask does not apply).
// - Ownership is advisory, as in every RING01 implementation: the one writer
//   (WriterProcesses::One) holds flock LOCK_EX on the file for its lifetime,
//   each of many (WriterProcesses::Many) holds LOCK_SH; every evring writer also holds a "writer marker" (an OFD
//   record lock on byte 0) that readers can probe without taking anything
//   (docs/hugepages.md). Creating a ring held by a live writer fails with
//   EBUSY naming its pid. A ring file whose lock nobody holds is a zombie (its
//   writer died) and is reclaimed by the next writer; of two writers
//   reclaiming one zombie exactly one wins. A file at the name that is not a
//   ring, a directory or a symbolic link is refused, never replaced.
// - Shared writers join an existing ring only when its content type, schema
//   hash and sizes are the ones they asked for, and, when they were given a
//   schema to embed (RingContent::schema_blob), when the ring embeds that
//   schema (EPROTO otherwise). A ring's embedded schema is written once, by
//   its creator; a shared writer without one joins either kind.
// - A writer's destructor removes the file when the file at the path is still
//   the one it wrote (same device and inode), unless keep_on_close; among
//   shared writers the last one to close removes it. Removing the ring also
//   removes its reader registry (P.readers) unless a reader still uses it
//   (the last such reader removes it as it leaves; reader_registration.hpp).
// - A registered reader killed while its narrow interest (docs/interest.md)
//   holds the ring's interest word stops counting within 100 ms: every
//   process holding a RingWriter of a ring with the doorbell runs one keeper
//   thread (lib/registry/interest_keeper.hpp), asleep on a futex until some
//   reader narrows a word, exiting when the process holds no such ring; it
//   blocks asynchronous signals, and publishing never waits for it.
// - Every writer marks its ring "writers open" (lib/ring/writers_open.hpp)
//   and the last writer to close it keeping the file clears that, so
//   `evring gc` can tell a ring left by killed writers from one kept.
// - What a killed writer leaves is reclaimed: a later writer of the name
//   removes the name's debris (temporary files of dead processes, an unused
//   registry of an earlier instance; ring_debris.hpp) once it has created
//   its ring, and `evring gc` cleans a whole directory.
//
// Thread safety: a RingWriter is a movable value, not shared between threads
// while being moved or destroyed; its const members may be called from any
// thread (publishing goes through a Publisher, publisher.hpp). Creation is
// serialised within a process. Across processes, the locks above are the
// protocol.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "evring/config.hpp"
#include "evring/error.hpp"
#include "evring/ring/ring.hpp"
#include "evring/ring/ring_directory.hpp"

namespace evring {

// How many writer processes a ring file has: One, the creating process,
// which holds LOCK_EX (no other evring writer process opens the ring), or
// Many, each holding LOCK_SH (the first creates the ring, the others join).
// This is about processes and the file; how a Publisher advances the
// reservation words (threads, atomics) is WriterSharing in publisher.hpp.
// (Named WriterMode{Exclusive, Shared} before 0.2, which read like
// WriterSharing's values.)
enum class WriterProcesses { One, Many };

struct CreateOptions {
    WriterProcesses mode = WriterProcesses::One;
    mode_t file_mode = 0664;
    bool keep_on_close = false;  // leave the ring file when the writer closes it
    DirectoryOptions directory;  // how a pure name is resolved
};

// A ring this process writes. Holds the ring's locks while alive; removes the
// file on destruction unless keep_on_close (in shared mode, only the last
// writer to close removes it).
class RingWriter {
public:
    // Creates (or, in Shared mode, joins) the ring `spec` describes: its
    // name and sizes from spec.config, its content from spec.content.
    static Result<RingWriter> create(const RingSpec& spec, const CreateOptions& options = {});
    RingWriter(RingWriter&&) noexcept;
    RingWriter& operator=(RingWriter&&) noexcept;
    ~RingWriter();

    const MappedRing& ring() const noexcept { return *ring_; }
    const std::string& path() const noexcept { return path_; }
    WriterProcesses mode() const noexcept { return options_.mode; }
    // True when this writer made the file (rather than joining a shared ring).
    bool created() const noexcept { return created_; }
    // True when a zombie (a ring file nobody held) was replaced or joined.
    bool reclaimed_zombie() const noexcept { return reclaimed_zombie_; }

private:
    RingWriter() = default;
    void close() noexcept;
    void remove_unused_registry_of_ring() noexcept;

    std::optional<MappedRing> ring_;
    std::string path_;
    int fd_ = -1;
    CreateOptions options_;
    dev_t device_ = 0;
    ino_t inode_ = 0;
    bool created_ = false;
    bool reclaimed_zombie_ = false;
};

}  // namespace evring
