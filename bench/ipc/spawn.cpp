#include "ipc/spawn.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <sstream>

#include "support/bench_ring.hpp"

namespace evring::ipc {

namespace {
bool g_fifo = false;

std::string self_path() {
    char path[4096];
    const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0) bench::die(std::string("readlink /proc/self/exe: ") + std::strerror(errno));
    return std::string(path, static_cast<std::size_t>(n));
}
}  // namespace

void Peer::set_fifo(bool on) { g_fifo = on; }
bool Peer::fifo() { return g_fifo; }

Peer Peer::start(const std::vector<std::string>& args, int cpu, const std::vector<int>& inherit) {
    static const std::string self = self_path();
    std::vector<std::string> words{"peer"};
    words.insert(words.end(), args.begin(), args.end());
    return start_program(self, words, cpu, inherit);
}

Peer Peer::start_program(const std::string& program, const std::vector<std::string>& args, int cpu,
                         const std::vector<int>& inherit, bool quiet) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) bench::die(std::string("pipe2: ") + std::strerror(errno));
    std::string what = program;
    for (const auto& a : args) what += " " + a;

    const pid_t pid = ::fork();
    if (pid < 0) bench::die(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        ::dup2(out[1], STDOUT_FILENO);
        if (quiet) {
            const int null = ::open("/dev/null", O_WRONLY);
            ::dup2(null, STDOUT_FILENO);
            ::dup2(null, STDERR_FILENO);
        }
        if (cpu >= 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(cpu, &set);
            if (::sched_setaffinity(0, sizeof set, &set) != 0) ::perror("sched_setaffinity");
            if (g_fifo) {
                sched_param param{};
                param.sched_priority = 1;
                (void)::sched_setscheduler(0, SCHED_FIFO, &param);
            }
        }
        for (int fd : inherit) ::fcntl(fd, F_SETFD, 0);
        std::vector<char*> argv;
        argv.push_back(const_cast<char*>(program.c_str()));
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        ::execvp(program.c_str(), argv.data());
        ::perror("execv");
        ::_exit(127);
    }
    ::close(out[1]);
    return Peer(pid, out[0], what);
}

Peer::Peer(Peer&& other) noexcept
    : pid_(other.pid_), out_fd_(other.out_fd_), what_(std::move(other.what_)),
      buffered_(std::move(other.buffered_)) {
    other.pid_ = -1;
    other.out_fd_ = -1;
}

Peer::~Peer() {
    if (out_fd_ >= 0) ::close(out_fd_);
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
}

void Peer::terminate() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
}

std::string Peer::read_line() {
    for (;;) {
        const auto nl = buffered_.find('\n');
        if (nl != std::string::npos) {
            std::string line = buffered_.substr(0, nl);
            buffered_.erase(0, nl + 1);
            return line;
        }
        char chunk[512];
        const ssize_t n = ::read(out_fd_, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) bench::die(what_ + ": exited without a result");
        buffered_.append(chunk, static_cast<std::size_t>(n));
    }
}

void Peer::wait_ready() {
    const std::string line = read_line();
    if (line != "ready") bench::die(what_ + ": expected 'ready', got '" + line + "'");
}

Results Peer::finish() {
    std::string line;
    do line = read_line();
    while (line.rfind("result", 0) != 0);
    Results results;
    std::istringstream words(line.substr(6));
    std::string word;
    while (words >> word) {
        const auto eq = word.find('=');
        if (eq != std::string::npos) results[word.substr(0, eq)] = std::strtod(word.c_str() + eq + 1, nullptr);
    }
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) bench::die(what_ + ": failed");
    return results;
}

}  // namespace evring::ipc
