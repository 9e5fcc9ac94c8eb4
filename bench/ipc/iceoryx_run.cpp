// Running the optional iceoryx baseline: its peer executable lives beside
// evring-ipc; its daemon (iox-roudi) is started for the run and stopped after.
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "ipc/scenarios.hpp"
#include "support/bench_ring.hpp"

namespace evring::ipc {

namespace {

std::string beside_self(const std::string& name) {
    char path[4096];
    const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0) return {};
    std::string self(path, static_cast<std::size_t>(n));
    return self.substr(0, self.rfind('/') + 1) + name;
}

std::string find_in_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
    dirs += ":/usr/sbin:/sbin";
    std::size_t start = 0;
    while (start <= dirs.size()) {
        const std::size_t end = std::min(dirs.find(':', start), dirs.size());
        const std::string candidate = dirs.substr(start, end - start) + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
        start = end + 1;
    }
    return {};
}

}  // namespace

RunResult run_iceoryx(const RunSpec& spec, std::string& skipped) {
    const std::string peer = beside_self("evring-ipc-iceoryx");
    if (::access(peer.c_str(), X_OK) != 0) {
        skipped = "evring-ipc-iceoryx was not built (install libiceoryx-posh-dev and reconfigure)";
        return {};
    }
    const std::string roudi = find_in_path("iox-roudi");
    if (roudi.empty()) {
        skipped = "iox-roudi not found (Debian package iceoryx)";
        return {};
    }
    // RouDi is not pinned: it only brokers the connection, not the data.
    Peer daemon = Peer::start_program(roudi, {}, -1, {}, true);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const std::vector<std::string> words = {
        "size=" + std::to_string(spec.payload_size), "events=" + std::to_string(spec.events),
        "rate=" + std::to_string(spec.rate), std::string("latency=") + (spec.latency ? "1" : "0")};
    std::vector<std::string> reader_words = words, writer_words = words;
    reader_words.push_back("role=reader");
    writer_words.push_back("role=writer");
    RunResult result;
    // Ordinary scheduling: a SCHED_FIFO reader spinning on take() stalled
    // here (iceoryx's runtime needs RouDi and its own threads to run).
    const bool fifo = Peer::fifo();
    Peer::set_fifo(false);
    {
        Peer reader = Peer::start_program(peer, reader_words, 1);
        reader.wait_ready();
        Peer writer = Peer::start_program(peer, writer_words, 0);
        result.writer = writer.finish();
        result.readers.push_back(reader.finish());
    }
    Peer::set_fifo(fifo);
    daemon.terminate();
    return result;
}

}  // namespace evring::ipc
