// Starting peer processes for the harness: fork, pin to one core with
// sched_setaffinity, exec this same executable in peer mode (or another
// program), and read the peer's "ready" and "result ..." lines from a pipe on
// its stdout.
//
// Single-threaded orchestrator use only.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace evring::ipc {

using Results = std::map<std::string, double>;

class Peer {
public:
    // Runs `<this executable> peer <args...>` pinned to `cpu`; the file
    // descriptors in `inherit` stay open across exec.
    static Peer start(const std::vector<std::string>& args, int cpu, const std::vector<int>& inherit = {});
    // Runs `program args...` pinned to `cpu` (cpu < 0: not pinned). A quiet
    // program's stdout and stderr go to /dev/null (for daemons).
    static Peer start_program(const std::string& program, const std::vector<std::string>& args, int cpu,
                              const std::vector<int>& inherit = {}, bool quiet = false);
    // When on, pinned peers run SCHED_FIFO (priority 1), so that other work on
    // a shared machine does not preempt them mid-run (needs CAP_SYS_NICE;
    // silently ordinary scheduling otherwise). The kernel's RT throttling
    // still leaves other processes 5 % of each core.
    static void set_fifo(bool on);
    static bool fifo();

    // Asks the process to stop (SIGTERM) and waits for it.
    void terminate();

    Peer(Peer&& other) noexcept;
    Peer& operator=(Peer&&) = delete;
    Peer(const Peer&) = delete;
    ~Peer();

    // Blocks until the peer printed "ready" (readers do, once they can receive).
    void wait_ready();
    // Blocks until the peer printed its result line and exited; dies if it failed.
    Results finish();

private:
    Peer(pid_t pid, int out_fd, std::string what) : pid_(pid), out_fd_(out_fd), what_(std::move(what)) {}
    std::string read_line();

    pid_t pid_ = -1;
    int out_fd_ = -1;
    std::string what_;
    std::string buffered_;
};

}  // namespace evring::ipc
