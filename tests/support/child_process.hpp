// Test support for tests with child processes: a pipe to hold children at a
// barrier and hear from them, running a body in a forked child, and its exit
// code (128 + the signal for a child killed by one).
//
//     test::Pipe start, report;
//     const pid_t child = test::spawn([&] {
//         start.close_write();
//         start.wait_for_close();          // released when the parent closes its end
//         report.send(42);
//         return 0;
//     });
//     start.close_write();
//     ...
//     EXPECT_EQ(test::exit_code_of(child), 0);
//
// A child forked from a test runs no test code after its body: it leaves with
// ::_exit, so neither GoogleTest nor destructors of the parent's objects run
// twice.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

namespace evring::test {

// A pipe; each end closed on destruction. The writing calls are for
// children: a failed write ends the child with exit code 99.
struct Pipe {
    int read_end = -1;
    int write_end = -1;

    Pipe() {
        int fds[2];
        if (::pipe(fds) != 0) std::abort();
        read_end = fds[0];
        write_end = fds[1];
    }
    ~Pipe() {
        close_read();
        close_write();
    }
    Pipe(const Pipe&) = delete;
    Pipe& operator=(const Pipe&) = delete;

    void close_read() {
        if (read_end >= 0) ::close(read_end);
        read_end = -1;
    }
    void close_write() {
        if (write_end >= 0) ::close(write_end);
        write_end = -1;
    }

    void send(const std::string& text) const {
        if (::write(write_end, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
            ::_exit(99);
    }
    void send(std::uint64_t value) const {
        if (::write(write_end, &value, sizeof value) != sizeof value) ::_exit(99);
    }
    // Everything until every write end is closed.
    std::string receive_all() const {
        std::string text;
        char buf[1024];
        for (ssize_t n; (n = ::read(read_end, buf, sizeof buf)) > 0;)
            text.append(buf, static_cast<std::size_t>(n));
        return text;
    }
    // False at end of file.
    bool receive(std::uint64_t& value) const {
        return ::read(read_end, &value, sizeof value) == sizeof value;
    }
    // Blocks until every write end is closed: a barrier.
    void wait_for_close() const {
        char c;
        while (::read(read_end, &c, 1) > 0) {}
    }
};

// Runs `body` in a child process, whose exit code is what `body` returns.
// Whether every other thread of this process sleeps (state S or D): none is
// then inside an allocator or holding a lock a child would inherit taken.
inline bool other_threads_asleep() {
    const pid_t self = static_cast<pid_t>(::gettid());
    DIR* tasks = ::opendir("/proc/self/task");
    if (tasks == nullptr) return true;
    bool asleep = true;
    while (const dirent* entry = ::readdir(tasks)) {
        if (entry->d_name[0] == '.' || std::atoi(entry->d_name) == self) continue;
        // A thread may end while it is read: then it neither runs nor holds a lock.
        const int fd = ::open((std::string("/proc/self/task/") + entry->d_name + "/stat").c_str(), O_RDONLY);
        if (fd < 0) continue;
        char text[512];
        const ssize_t n = ::read(fd, text, sizeof text - 1);
        ::close(fd);
        if (n <= 0) continue;
        text[n] = '\0';
        const char* end_of_name = std::strrchr(text, ')');
        if (end_of_name == nullptr || end_of_name[1] != ' ' || end_of_name[2] == '\0') continue;
        const char state = end_of_name[2];
        if (state != 'S' && state != 'D') asleep = false;
    }
    ::closedir(tasks);
    return asleep;
}

// Forks once every other thread of the test sleeps (up to 2 s): a library
// thread (a writer's interest keeper) busy in the allocator at the fork would
// leave its lock taken in the child for good, and GCC 12's AddressSanitizer
// runtime does not take its allocator's locks around fork as glibc's malloc
// does: a child of WriterRace hung so, with the keeper of the round before
// exiting in the parent. A thread that stays busy past the bound is forked
// over, as before.
inline pid_t spawn(const std::function<int()>& body) {
    for (int i = 0; i < 2000 && !other_threads_asleep(); ++i) ::usleep(1000);
    const pid_t pid = ::fork();
    if (pid < 0) std::abort();
    if (pid == 0) ::_exit(body());
    return pid;
}

// Waits for the child: its exit code, 128 + the signal that killed it, or -1.
inline int exit_code_of(pid_t pid) {
    int status = 0;
    if (::waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace evring::test
