// lib/recording/recording.hpp — recordings: the events of a ring kept on disk.
//
// A recording is what `evring record` writes while following a ring: every
// event (descriptor and payload), every sequence number it did not capture
// (a gap record with its reason), every event whose payload was overwritten
// before it could be copied, and an end record with the file's totals when
// the recorder stopped cleanly. It may carry the ring's schema as an opaque
// blob. Version 2 files are made of independently decodable, checksummed
// blocks, so damage costs only the blocks it touches.
//
// One idea per header:
// - recording_format.hpp: the bytes (file header, block header, records);
// - recording_writer.hpp: RecordingWriter (staging, worker thread, rotation);
// - recording_reader.hpp: RecordingReader (v1 and v2, damage reports).
// docs/recording-format.md has the byte tables and the reasons.
#pragma once

#include "recording/recording_format.hpp"
#include "recording/recording_reader.hpp"
#include "recording/recording_writer.hpp"
