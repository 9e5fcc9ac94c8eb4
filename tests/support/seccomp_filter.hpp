// Test support: installs a seccomp filter program on the calling process,
// for tests that prove what a path does or cannot do without a system call.
// The process (and its children) keep the filter for good: install it only
// in a child or a death test's fresh process.
#pragma once

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <span>

namespace evring::test {

// True once `program` filters every later system call of this process.
inline bool install_seccomp_filter(std::span<sock_filter> program) {
    sock_fprog fprog{static_cast<unsigned short>(program.size()), program.data()};
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
    return ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) == 0;
}

}  // namespace evring::test
