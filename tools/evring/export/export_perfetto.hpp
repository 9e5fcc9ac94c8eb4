// tools/evring/export/export_perfetto.hpp — the Perfetto trace writer of `evring
// export --perfetto`: Perfetto's native protobuf trace (a Trace message whose
// packets are TracePackets), encoded by proto_writer.hpp and streamed to the
// file packet by packet. proto/perfetto_trace_subset.proto lists every
// message and field it writes, with Perfetto's field numbers.
//
// What it writes: one TrackDescriptor packet per track (the root carries a
// ProcessDescriptor so viewers group the tracks under it; counter tracks a
// CounterDescriptor with their unit), one TrackEvent packet per instant,
// slice begin, slice end and counter sample, with the event's name, the
// category "evring", and its arguments as DebugAnnotations (nested structs as
// dict_entries, arrays as array_values). Every packet is on trusted packet
// sequence 1; the first one sets SEQ_INCREMENTAL_STATE_CLEARED. Names are not
// interned, so no packet depends on incremental state and a reader may start
// anywhere. Timestamps are the ring's nanoseconds, on Perfetto's default
// trace clock.
//
// Thread safety: one thread.
#pragma once

#include <memory>

#include "export/export_trace.hpp"

namespace evring::cli {

// Writes to `fd` (not closed); `path` names it in errors.
std::unique_ptr<TraceWriter> make_perfetto_writer(int fd, std::string path);

// Field numbers of Perfetto's published protos (perfetto/trace/...), the
// subset written here.
namespace perfetto_field {
inline constexpr std::uint32_t kTracePacket = 1;                 // Trace.packet
inline constexpr std::uint32_t kTimestamp = 8;                   // TracePacket
inline constexpr std::uint32_t kTrustedPacketSequenceId = 10;
inline constexpr std::uint32_t kTrackEvent = 11;
inline constexpr std::uint32_t kSequenceFlags = 13;
inline constexpr std::uint32_t kTrackDescriptor = 60;
inline constexpr std::uint32_t kTrackUuid = 1;                   // TrackDescriptor
inline constexpr std::uint32_t kTrackName = 2;
inline constexpr std::uint32_t kTrackProcess = 3;
inline constexpr std::uint32_t kTrackParentUuid = 5;
inline constexpr std::uint32_t kTrackCounter = 8;
inline constexpr std::uint32_t kProcessPid = 1;                  // ProcessDescriptor
inline constexpr std::uint32_t kProcessName = 6;
inline constexpr std::uint32_t kCounterUnit = 3;                 // CounterDescriptor
inline constexpr std::uint32_t kCounterUnitName = 6;
inline constexpr std::uint32_t kEventDebugAnnotations = 4;       // TrackEvent
inline constexpr std::uint32_t kEventType = 9;
inline constexpr std::uint32_t kEventTrackUuid = 11;
inline constexpr std::uint32_t kEventCategories = 22;
inline constexpr std::uint32_t kEventName = 23;
inline constexpr std::uint32_t kEventDoubleCounterValue = 44;
inline constexpr std::uint32_t kAnnotationBool = 2;              // DebugAnnotation
inline constexpr std::uint32_t kAnnotationUint = 3;
inline constexpr std::uint32_t kAnnotationInt = 4;
inline constexpr std::uint32_t kAnnotationDouble = 5;
inline constexpr std::uint32_t kAnnotationString = 6;
inline constexpr std::uint32_t kAnnotationName = 10;
inline constexpr std::uint32_t kAnnotationDictEntries = 11;
inline constexpr std::uint32_t kAnnotationArrayValues = 12;
// TrackEvent.Type, TracePacket.SequenceFlags, CounterDescriptor.Unit.
inline constexpr std::uint64_t kTypeSliceBegin = 1;
inline constexpr std::uint64_t kTypeSliceEnd = 2;
inline constexpr std::uint64_t kTypeInstant = 3;
inline constexpr std::uint64_t kTypeCounter = 4;
inline constexpr std::uint64_t kSeqIncrementalStateCleared = 1;
inline constexpr std::uint64_t kUnitCount = 2;
}  // namespace perfetto_field

}  // namespace evring::cli
