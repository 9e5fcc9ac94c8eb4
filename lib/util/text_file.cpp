// Reading small text files. See text_file.hpp.
#include "util/text_file.hpp"

#include <fcntl.h>
#include <unistd.h>

namespace evring::detail {

Result<std::string> read_text_file(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Error::from_errno(errno, "opening '" + path + "'");
    std::string text;
    char buf[8192];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int err = errno;
            ::close(fd);
            return Error::from_errno(err, "reading '" + path + "'");
        }
        if (n == 0) break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return text;
}

}  // namespace evring::detail
