// The macros of the C and C++ standard libraries (and the few that glibc and
// GCC's gnu++ modes add) that a schema name must not be spelled as in a
// generated header: `EOF = 1` as an enumerator, or a field named `errno`,
// would be rewritten by the preprocessor. Only object-like macros: a
// function-like one (assert, offsetof, major) expands only before '(', which
// a generated header never writes after a schema name. Used by the code generator (which
// renames them with a trailing '_') and by `evring schema check` (which
// warns). Not exhaustive of every header ever written; it covers the headers
// a generated header and its users pull in (<cstdint>, <cstring>, <array>,
// <span>, <cerrno>, <cstdio>, <cstdlib>, <climits>, <cmath>, <csignal>, ...).
#include <algorithm>
#include <string_view>

#include "schema/schema_std_macros.hpp"

namespace evring::detail {

namespace {

// Sorted (checked by schema_codegen's test through is_standard_macro).
constexpr std::string_view kMacros[] = {
    "BUFSIZ", "CHAR_BIT", "CHAR_MAX", "CHAR_MIN", "CLOCKS_PER_SEC", "DBL_EPSILON", "DBL_MAX", "DBL_MIN",
    "E2BIG", "EACCES", "EAGAIN", "EBADF", "EBUSY", "ECHILD", "EDEADLK", "EDOM", "EEXIST", "EFAULT", "EFBIG",
    "EILSEQ", "EINTR", "EINVAL", "EIO", "EISDIR", "EMFILE", "EMLINK", "ENAMETOOLONG", "ENFILE", "ENODEV",
    "ENOENT", "ENOEXEC", "ENOMEM", "ENOSPC", "ENOSYS", "ENOTDIR", "ENOTEMPTY", "ENOTTY", "ENXIO", "EOF",
    "EOVERFLOW", "EPERM", "EPIPE", "ERANGE", "EROFS", "ESPIPE", "ESRCH", "ETIMEDOUT", "EWOULDBLOCK", "EXDEV",
    "EXIT_FAILURE", "EXIT_SUCCESS", "FILENAME_MAX", "FLT_EPSILON", "FLT_MAX", "FLT_MIN", "FOPEN_MAX",
    "FP_INFINITE", "FP_NAN", "FP_NORMAL", "FP_SUBNORMAL", "FP_ZERO", "HUGE_VAL", "HUGE_VALF", "HUGE_VALL",
    "INFINITY", "INT16_MAX", "INT16_MIN", "INT32_MAX", "INT32_MIN", "INT64_MAX", "INT64_MIN", "INT8_MAX",
    "INT8_MIN", "INTMAX_MAX", "INTMAX_MIN", "INTPTR_MAX", "INTPTR_MIN", "INT_MAX", "INT_MIN", "LC_ALL",
    "LC_COLLATE", "LC_CTYPE", "LC_MONETARY", "LC_NUMERIC", "LC_TIME", "LLONG_MAX", "LLONG_MIN", "LONG_MAX",
    "LONG_MIN", "L_tmpnam", "MB_CUR_MAX", "MB_LEN_MAX", "NAN", "NDEBUG", "NULL", "PTRDIFF_MAX", "PTRDIFF_MIN",
    "RAND_MAX", "SCHAR_MAX", "SCHAR_MIN", "SEEK_CUR", "SEEK_END", "SEEK_SET", "SHRT_MAX", "SHRT_MIN",
    "SIGABRT", "SIGALRM", "SIGBUS", "SIGCHLD", "SIGFPE", "SIGHUP", "SIGILL", "SIGINT", "SIGKILL", "SIGPIPE",
    "SIGQUIT", "SIGSEGV", "SIGSTOP", "SIGTERM", "SIGUSR1", "SIGUSR2", "SIG_DFL", "SIG_ERR", "SIG_IGN",
    "SIZE_MAX", "TIME_UTC", "TMP_MAX", "UCHAR_MAX", "UINT16_MAX", "UINT32_MAX", "UINT64_MAX", "UINT8_MAX",
    "UINTMAX_MAX", "UINTPTR_MAX", "UINT_MAX", "ULLONG_MAX", "ULONG_MAX", "USHRT_MAX", "WCHAR_MAX", "WCHAR_MIN",
    "WEOF", "_IOFBF", "_IOLBF", "_IONBF", "__DATE__", "__FILE__", "__LINE__", "__STDC__", "__TIME__",
    "__cplusplus", "errno", "linux",
    "stderr", "stdin", "stdout", "unix",
   
};

}  // namespace

bool is_standard_macro(std::string_view name) noexcept {
    return std::binary_search(std::begin(kMacros), std::end(kMacros), name);
}

bool standard_macros_are_sorted() noexcept { return std::is_sorted(std::begin(kMacros), std::end(kMacros)); }

}  // namespace evring::detail
