#include "ipc/scenarios.hpp"

#include <fcntl.h>
#include <mqueue.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include <boost/interprocess/ipc/message_queue.hpp>

#include "evring/ring/ring_extension.hpp"
#include "support/bench_ring.hpp"

namespace evring::ipc {

namespace {

std::vector<std::string> spec_words(const RunSpec& spec) {
    return {"size=" + std::to_string(spec.payload_size), "events=" + std::to_string(spec.events),
            "rate=" + std::to_string(spec.rate), std::string("latency=") + (spec.latency ? "1" : "0")};
}

std::vector<std::string> with(std::vector<std::string> words, const std::vector<std::string>& more) {
    words.insert(words.end(), more.begin(), more.end());
    return words;
}

// Readers first (each waits until it can receive), then the writer.
RunResult run_peers(const std::vector<std::vector<std::string>>& reader_args,
                    const std::vector<std::string>& writer_args, const std::vector<int>& inherit) {
    // Two spinning SCHED_FIFO readers on one core would not share it (FIFO
    // does not time-slice): such runs use ordinary scheduling.
    const bool fifo = Peer::fifo();
    if (reader_args.size() > 1) Peer::set_fifo(false);
    std::vector<Peer> readers;
    for (const auto& args : reader_args) {
        readers.push_back(Peer::start(args, 1, inherit));
        readers.back().wait_ready();
    }
    Peer writer = Peer::start(writer_args, 0, inherit);
    for (int fd : inherit) ::close(fd);
    RunResult result;
    result.writer = writer.finish();
    for (auto& reader : readers) result.readers.push_back(reader.finish());
    Peer::set_fifo(fifo);
    return result;
}

// Writer first, for every ring peer alike: the writer maps (or, owning it,
// creates) the ring, says "ready" and waits on `gate` (a pipe it inherits)
// until the readers, started once the ring exists, are ready too. One order
// for all peers matters on this machine: other tasks that wake during the
// set-up stay on the core that was idle then, and preempt whichever peer
// runs there (docs/performance.md, "The latency tail", item 8).
RunResult run_gated_peers(const std::vector<std::vector<std::string>>& reader_args,
                          std::vector<std::string> writer_args) {
    int gate[2];
    if (::pipe2(gate, O_CLOEXEC) != 0) bench::die(std::string("pipe: ") + std::strerror(errno));
    writer_args.push_back("gate=" + std::to_string(gate[0]));
    const bool fifo = Peer::fifo();
    if (reader_args.size() > 1) Peer::set_fifo(false);
    Peer writer = Peer::start(writer_args, 0, {gate[0]});
    ::close(gate[0]);
    writer.wait_ready();
    std::vector<Peer> readers;
    for (const auto& args : reader_args) {
        readers.push_back(Peer::start(args, 1));
        readers.back().wait_ready();
    }
    if (::write(gate[1], "g", 1) != 1) bench::die(std::string("gate: ") + std::strerror(errno));
    ::close(gate[1]);
    RunResult result;
    result.writer = writer.finish();
    for (auto& reader : readers) result.readers.push_back(reader.finish());
    Peer::set_fifo(fifo);
    return result;
}

long mq_message_limit() {
    std::ifstream in("/proc/sys/fs/mqueue/msg_max");
    long value = 10;
    in >> value;
    return value > 0 ? value : 10;
}

}  // namespace

RunResult run_evring(const std::string& dir, const RunSpec& spec) {
    const std::string path = dir + "/evring-ipc-" + std::to_string(::getpid());
    if (spec.owned) {
        const auto words = with(spec_words(spec), {"path=" + path, "sharing=auto", "owned=1",
                                                   spec.streaming_copy ? "copy=stream" : "copy=memcpy",
                                                   std::string("doorbell=") + (spec.doorbell ? "1" : "0"),
                                                   "backoff=" + std::to_string(spec.backoff),
                                                   "batch=" + std::to_string(spec.batch)});
        std::vector<std::vector<std::string>> readers(static_cast<std::size_t>(spec.readers),
                                                      with({"evring-reader"}, words));
        RunResult result = run_gated_peers(readers, with({"evring-writer", "batches=10"}, words));
        ::unlink(path.c_str());  // the writer removed it on exit; in case it did not
        return result;
    }
    bench::create_ring(path, bench::bench_params(20, 28));
    if (!spec.doorbell) {
        const MappedRing ring = bench::map_ring(path, Access::ReadWrite);
        write_ring_extension(&ring.header(), 0);
    }
    const auto words = with(spec_words(spec), {"path=" + path, spec.exclusive ? "sharing=exclusive" : "sharing=shared",
                                               spec.streaming_copy ? "copy=stream" : "copy=memcpy",
                                               "backoff=" + std::to_string(spec.backoff)});
    const std::string reader = spec.reader_peer.empty() ? "evring-reader" : spec.reader_peer;
    const std::string writer = spec.writer_peer.empty() ? "evring-writer" : spec.writer_peer;
    std::vector<std::vector<std::string>> readers(static_cast<std::size_t>(spec.readers), with({reader}, words));
    RunResult result = run_gated_peers(readers, with({writer, "batches=10"}, words));
    ::unlink(path.c_str());
    return result;
}

RunResult run_floor(const std::string& dir, const RunSpec& spec) {
    const std::string path = dir + "/evring-ipc-floor-" + std::to_string(::getpid());
    bench::create_ring(path, bench::bench_params(20, 28));
    const auto words = with(spec_words(spec), {"path=" + path});
    std::vector<std::vector<std::string>> readers;
    if (spec.readers > 0) readers.push_back(with({"floor-reader"}, words));
    RunResult result = run_gated_peers(
        readers, with({"floor-writer", "batches=10", spec.floor_clock ? "clock=1" : "clock=0"}, words));
    ::unlink(path.c_str());
    return result;
}

RunResult run_classic(const std::string& dir, const RunSpec& spec) {
    const std::string path = dir + "/evring-ipc-classic-" + std::to_string(::getpid());
    bench::create_ring(path, bench::bench_params(20, 28));
    const auto words = with(spec_words(spec), {"path=" + path});
    std::vector<std::vector<std::string>> readers;
    if (spec.readers > 0)
        readers.push_back(with({"classic-reader", spec.classic_double_map ? "double_map=1" : "double_map=0"}, words));
    RunResult result = run_gated_peers(readers, with({"classic-writer", "batches=10"}, words));
    ::unlink(path.c_str());
    return result;
}

RunResult run_baseline(const std::string& transport, const RunSpec& spec) {
    const auto words = with(spec_words(spec), {"transport=" + transport});
    const std::string name = "/evring-ipc-" + std::to_string(::getpid());
    if (transport == "pipe" || transport == "unix") {
        int fds[2];
        const int rc = transport == "pipe" ? ::pipe2(fds, O_CLOEXEC)
                                           : ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds);
        if (rc != 0) bench::die(transport + ": " + std::strerror(errno));
        // A pipe reads from fds[0]; a socket pair is symmetric.
        return run_peers({with({"baseline", "role=reader", "fd=" + std::to_string(fds[0])}, words)},
                         with({"baseline", "role=writer", "fd=" + std::to_string(fds[1])}, words),
                         {fds[0], fds[1]});
    }
    if (transport == "posixmq") {
        mq_attr attr{};
        attr.mq_maxmsg = mq_message_limit();
        attr.mq_msgsize = static_cast<long>(spec.payload_size);
        ::mq_unlink(name.c_str());
        const mqd_t mq = ::mq_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600, &attr);
        if (mq == static_cast<mqd_t>(-1)) bench::die("mq_open " + name + ": " + std::strerror(errno));
        ::mq_close(mq);
        RunResult result = run_peers({with({"baseline", "role=reader", "name=" + name}, words)},
                                     with({"baseline", "role=writer", "name=" + name}, words), {});
        ::mq_unlink(name.c_str());
        return result;
    }
    if (transport == "boostmq") {
        namespace bip = boost::interprocess;
        const std::string bname = name.substr(1);
        bip::message_queue::remove(bname.c_str());
        { bip::message_queue queue(bip::create_only, bname.c_str(), 1024, spec.payload_size); }
        RunResult result = run_peers({with({"baseline", "role=reader", "name=" + bname}, words)},
                                     with({"baseline", "role=writer", "name=" + bname}, words), {});
        bip::message_queue::remove(bname.c_str());
        return result;
    }
    bench::die("unknown transport " + transport);
}

}  // namespace evring::ipc
