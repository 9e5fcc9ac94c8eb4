// lib/ring/snapshot.hpp — a ring frozen in a file: writing and loading snapshots.
//
// A snapshot is the whole ring file compressed as one zstd frame (the format
// real RING01 tools use; see docs/cli.md). Loading one, from a file or from a
// buffer in memory, gives a read-only MappedRing backed by an anonymous memfd,
// so the ordinary Iterator and payload functions read it exactly like a live
// ring.
//
// Contract:
// - write_snapshot copies a live ring into private memory, then fixes up the
//   copy so it holds only committed events read consistently (seqlock reads):
//   every other descriptor slot is zeroed. The kept events are the newest
//   unbroken run read intact: an event overwritten by the writers during the
//   copy ends the run (events older than it are dropped too), a reservation
//   still in flight stays a hole, so the kept events form one range as in a
//   real ring. last_seqno is the newest kept
//   event, next_payload_byte the end of the newest kept payload and
//   buffer_window_start the window as seen after the payload bytes were
//   copied, so a kept event whose payload was overwritten during the copy
//   reads as expired, never as valid. The seqnos a writer lapped during the
//   copy are recorded (RingExtension::snapshot_lapped), and those of the
//   copy's window (the last descriptor_capacity seqnos) get a placeholder
//   in their slot: a RECORD_ERROR event with that seqno and no payload, so a
//   RING01 reader that starts at the window's oldest slot reads on to the
//   kept events instead of stopping at a zero slot (docs/format.md,
//   "Snapshots"). Writers are never blocked. A ring whose
//   control words no ring reaches (damaged) is reported as an error; every
//   loop over its sequence numbers is bounded (kMaxSeqno), so a damaged ring
//   cannot keep the copy running.
// - load_snapshot clears those placeholders again (a slot holding its own
//   seqno at or below snapshot_lapped), so evring's readers report the
//   lapped seqnos as lost to lapping, as before placeholders were written.
// - load_snapshot opens only regular files (without blocking: a FIFO is
//   refused, never waited on). It refuses snapshots whose ring (as described
//   by the decompressed header, or by the frame's declared content size)
//   exceeds `max_decompressed_size`, whose header is invalid or inconsistent
//   (validate_header; a window beyond next_payload_byte), and that decompress
//   to more bytes than their header describes. A snapshot that decompresses
//   short is accepted only when every missing byte lies in the never-written
//   part of the payload buffer (beyond next_payload_byte, before the buffer
//   wrapped, no context area after it); those bytes read as zeros.
// - Memory: loading writes only the bytes the frame really holds into a
//   sparse memfd, and the ring is mapped without pre-faulting, so a small
//   file that claims a large ring costs what it decompresses to, never more
//   than `max_decompressed_size`; zstd's window is capped by the same limit.
//   Both forms share one implementation.
//
// Thread safety: plain functions; the returned ring is immutable.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "evring/error.hpp"
#include "evring/format.hpp"
#include "evring/ring/ring.hpp"

namespace evring {

// True when the file starts with the zstd frame magic (28 b5 2f fd). Only
// regular files are opened (without blocking).
Result<bool> is_zstd_file(const std::string& path);

struct SnapshotLoadOptions {
    std::uint64_t max_decompressed_size = kDefaultMaxSnapshotSize;
};

struct LoadedSnapshot {
    MappedRing ring;
    std::uint64_t compressed_size = 0;
    std::uint64_t decompressed_size = 0;  // bytes the frame held
    std::uint64_t padded_bytes = 0;       // zero bytes added after them
};

Result<LoadedSnapshot> load_snapshot(const std::string& path, const SnapshotLoadOptions& options = {});

// Loads a snapshot from `compressed`, the bytes of a snapshot file, which
// need only live during the call. `name` is used in errors and becomes the
// ring's path() (say where the bytes came from).
Result<LoadedSnapshot> load_snapshot(std::span<const std::byte> compressed, std::string name,
                                     const SnapshotLoadOptions& options = {});

// True when `bytes` start with the zstd frame magic.
bool is_zstd_frame(std::span<const std::byte> bytes) noexcept;

// Whether a ring file cut short to `actual_size` bytes can be padded with
// zeros without losing anything: the error says which section the missing
// bytes belong to. `header` is the (decompressed) header of the file.
Status check_missing_tail(const RingHeader& header, std::uint64_t actual_size);

struct SnapshotStats {
    std::uint64_t kept_events = 0;          // consistent committed descriptors
    std::uint64_t dropped_descriptors = 0;  // in range but not committed, torn or overwritten
    std::uint64_t expired_payloads = 0;     // kept events whose payload was overwritten
    std::uint64_t oldest_seqno = 0;         // 0 when nothing was kept
    std::uint64_t newest_seqno = 0;
    std::uint64_t ring_bytes = 0;           // uncompressed size (the ring file's size)
    std::uint64_t compressed_bytes = 0;
};

struct SnapshotWriteOptions {
    int compression_level = 3;
    // When set and it becomes true (a signal handler's flag), writing stops
    // between two 1 MiB chunks with an ECANCELED error: a long copy ends promptly.
    const std::atomic<bool>* stop = nullptr;
};

// Writes a snapshot of `ring` (see the contract) to the open file `out_fd`;
// `out_path` is used in error messages.
Result<SnapshotStats> write_snapshot(const MappedRing& ring, int out_fd, std::string_view out_path,
                                     const SnapshotWriteOptions& options = {});

}  // namespace evring
