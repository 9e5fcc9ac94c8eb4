// lib/registry/recorder_output.hpp — the recording a running `evring record`
// writes, from its reader registry entry (healer.hpp's --heal).
//
// A recorder registers "-> /ABSOLUTE/PATH" as its detail, and the registry
// keeps kReaderDetailBytes - 1 (79) characters of it, so a longer path comes
// back cut. The path is then found again among the recorder's open files
// (/proc/PID/fd): the recording whose path starts with what the registry
// kept. A rotated series' open file is FILE.N (its header's file_index N),
// and the series is read from FILE, so the ".N" is taken off.
//
// Finding a cut path needs the recorder in this process's pid namespace and
// its open files readable to this user (the same user, or root); without
// them the answer is what the registry kept (opening it then fails, naming
// it). An entry whose detail is not "-> /..." gives an empty answer.
#pragma once

#include <string>

namespace evring {
struct ReaderEntry;
}

namespace evring::detail {

std::string recorder_output(const ReaderEntry& recorder);

}  // namespace evring::detail
