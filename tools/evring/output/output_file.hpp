// tools/evring/output/output_file.hpp — the one way a command writes a file it was
// told to write (schema compile -o, snapshot -o, export --perfetto and
// --chrome-json).
//
// What PATH may be, and what happens to it:
// - missing, or a regular file: the data goes to a temporary file beside it
//   (PATH.tmp.PID, created exclusively) that commit() renames over PATH, so a
//   reader never sees half a file and a failure leaves the old one. An
//   existing file is replaced only when `replace` allows it, and keeps its
//   permission bits.
// - a symbolic link: followed, never replaced. The file it points to is
//   written as above (the link then points to the new file); a link to
//   nothing is refused, since following it would create a file elsewhere.
// - a character device or a FIFO (/dev/null, /dev/stdout, a named pipe):
//   written into directly. Nothing is created, renamed or removed, whatever
//   the user's privileges: `-o /dev/null` as root leaves /dev/null a device.
// - a directory, a block device or a socket: refused, naming what it is.
// - one of the `keep` files (the source being read, the schema being
//   compiled), through any name or link: refused before anything is written.
//
// Errors are one line naming the path and the reason. Thread safety: plain value.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "evring/error.hpp"

namespace evring::cli {

struct KeptFile {
    std::string path;         // a file that must never be written over
    std::string description;  // "the ring file it copies", "the schema it compiles"
};

struct OutputFileOptions {
    std::string what = "the output";  // in messages: "refusing to write the snapshot over ..."
    bool replace = true;  // false: an existing regular file is an error ("pass --force")
    std::vector<KeptFile> keep;
};

class OutputFile {
public:
    static Result<OutputFile> open(const std::string& path, const OutputFileOptions& options);

    OutputFile(OutputFile&& other) noexcept;
    OutputFile& operator=(OutputFile&& other) noexcept;
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;
    // Closes; a temporary that was never committed is removed.
    ~OutputFile();

    int fd() const noexcept { return fd_; }
    const std::string& path() const noexcept { return path_; }
    // Whether the data goes straight into a device or FIFO.
    bool direct() const noexcept { return temporary_.empty(); }

    // Closes the file and puts the temporary in place (nothing to move for a
    // device or FIFO). The error names the file.
    Status commit();

private:
    OutputFile() = default;
    void discard() noexcept;

    int fd_ = -1;
    std::string path_;       // as given
    std::string target_;     // the file replaced: path_, or where its link points
    std::string temporary_;  // empty when writing directly
    bool committed_ = false;
};

// Writes all of `text` to `path` through an OutputFile.
Status write_output_file(const std::string& path, std::string_view text, const OutputFileOptions& options);

}  // namespace evring::cli
