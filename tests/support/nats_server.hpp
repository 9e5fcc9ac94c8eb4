// Test support: a real `nats-server -js` for one test, on 127.0.0.1 with a
// random free port and a temporary store directory.
//
//     test::NatsServer server;
//     EVRING_START_NATS_SERVER(server);          // skips the test when nats-server is missing
//     connect(server.url()); ...
//     server.restart();                          // same port, same store
//
// The server's port is chosen by the server itself (`port: -1`, read back
// from its ports file), so two tests never race for one. Start-up waits at
// most kStartTimeout; stop() asks politely (SIGTERM) for kStopTimeout, then
// kills. The child dies with the test process (PR_SET_PDEATHSIG), and the
// destructor stops it and removes the directory, so nothing outlives a test.
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace evring::test {

// Starts `server` or skips the test (nats-server missing) or fails it.
#define EVRING_START_NATS_SERVER(server)                                             \
    do {                                                                             \
        if ((server).binary().empty())                                               \
            GTEST_SKIP() << "nats-server is not installed (Debian: apt-get install " \
                            "nats-server; scripts/test installs it)";                \
        std::string start_error_;                                                    \
        ASSERT_TRUE((server).start(start_error_)) << start_error_;                   \
    } while (0)

class NatsServer {
public:
    static constexpr std::chrono::seconds kStartTimeout{15};
    static constexpr std::chrono::seconds kStopTimeout{10};

    // `max_payload`: the server's limit per message (0: its default, 1 MiB).
    explicit NatsServer(unsigned max_payload = 0) : max_payload_(max_payload), binary_(find_binary()) {
        std::string templ = std::filesystem::temp_directory_path().string() + "/evring-nats-XXXXXX";
        if (::mkdtemp(templ.data()) == nullptr) std::abort();
        dir_ = templ;
    }
    ~NatsServer() {
        stop();
        std::error_code ignored;
        std::filesystem::remove_all(dir_, ignored);
    }
    NatsServer(const NatsServer&) = delete;
    NatsServer& operator=(const NatsServer&) = delete;

    // The nats-server executable: $EVRING_NATS_SERVER, else found on PATH or
    // in the sbin directories; "" when there is none.
    static std::string find_binary() {
        if (const char* env = std::getenv("EVRING_NATS_SERVER"); env != nullptr && *env != '\0') return env;
        std::string dirs = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
        dirs += ":/usr/sbin:/usr/local/sbin:/usr/bin:/sbin";
        std::stringstream stream(dirs);
        for (std::string dir; std::getline(stream, dir, ':');) {
            if (dir.empty()) continue;
            std::string path = dir + "/nats-server";
            if (::access(path.c_str(), X_OK) == 0) return path;
        }
        return {};
    }

    const std::string& binary() const { return binary_; }
    const std::string& directory() const { return dir_; }
    std::string store_directory() const { return dir_ + "/store"; }
    unsigned port() const { return port_; }
    std::string url() const { return "nats://127.0.0.1:" + std::to_string(port_); }
    bool running() const { return pid_ > 0; }

    // Starts the server: on a port of its choosing the first time, on the
    // same port (and store) afterwards. False with `error` set on failure.
    bool start(std::string& error) {
        if (binary_.empty()) {
            error = "nats-server is not installed";
            return false;
        }
        if (pid_ > 0) return true;
        write_config();
        std::filesystem::remove_all(dir_ + "/ports");
        std::filesystem::create_directories(dir_ + "/ports");
        pid_ = spawn();
        if (pid_ < 0) {
            error = "fork failed";
            pid_ = 0;
            return false;
        }
        return wait_until_ready(error);
    }

    // Stops the server gracefully (SIGTERM), killing it after kStopTimeout.
    void stop() { terminate(SIGTERM); }
    // Kills the server at once, as a crash would.
    void kill() { terminate(SIGKILL); }

    bool restart(std::string& error) {
        stop();
        return start(error);
    }

    // More configuration lines (a server_name, a cluster block), written
    // before each start; tests/support/nats_cluster.hpp uses it.
    void set_extra_config(std::string text) { extra_config_ = std::move(text); }

    std::string log() const {
        std::ifstream in(dir_ + "/server.log");
        std::stringstream text;
        text << in.rdbuf();
        return text.str();
    }

private:
    void write_config() const {
        std::ofstream config(dir_ + "/server.conf", std::ios::trunc);
        config << "host: 127.0.0.1\n";
        config << "port: " << (port_ == 0 ? -1 : static_cast<int>(port_)) << "\n";
        if (max_payload_ != 0) config << "max_payload: " << max_payload_ << "\n";
        config << "jetstream {\n  store_dir: \"" << store_directory() << "\"\n}\n";
        config << extra_config_;
    }

    pid_t spawn() const {
        std::string config = dir_ + "/server.conf", ports = dir_ + "/ports", log = dir_ + "/server.log";
        pid_t pid = ::fork();
        if (pid != 0) return pid;
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            ::dup2(fd, 1);
            ::dup2(fd, 2);
        }
        std::vector<const char*> argv = {binary_.c_str(), "-js", "-c", config.c_str(), "--ports_file_dir",
                                         ports.c_str(), nullptr};
        ::execv(binary_.c_str(), const_cast<char* const*>(argv.data()));
        ::_exit(127);
    }

    // Waits for the ports file (written once the server listens), then for a
    // TCP connection to succeed.
    bool wait_until_ready(std::string& error) {
        const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
        while (std::chrono::steady_clock::now() < deadline) {
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = 0;
                error = "nats-server exited at start-up; its log:\n" + log();
                return false;
            }
            if (port_ == 0) port_ = read_ports_file();
            if (port_ != 0 && can_connect()) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        error = "nats-server was not ready within " + std::to_string(kStartTimeout.count()) + " s; its log:\n" + log();
        terminate(SIGKILL);
        return false;
    }

    unsigned read_ports_file() const {
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(dir_ + "/ports", ec)) {
            std::ifstream in(entry.path());
            std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            // {"nats":["nats://127.0.0.1:PORT"], ...} (2.9; newer servers say "client")
            auto client = text.find("\"nats\"");
            if (client == std::string::npos) client = text.find("\"client\"");
            if (client == std::string::npos) continue;
            auto colon = text.find("127.0.0.1:", client);
            if (colon == std::string::npos) continue;
            return static_cast<unsigned>(std::atoi(text.c_str() + colon + 10));
        }
        return 0;
    }

    bool can_connect() const {
        int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return false;
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(static_cast<std::uint16_t>(port_));
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
        ::close(fd);
        return ok;
    }

    void terminate(int signal) {
        if (pid_ <= 0) return;
        ::kill(pid_, signal);
        const auto deadline = std::chrono::steady_clock::now() + kStopTimeout;
        int status = 0;
        while (::waitpid(pid_, &status, WNOHANG) == 0) {
            if (std::chrono::steady_clock::now() > deadline) {
                ::kill(pid_, SIGKILL);
                ::waitpid(pid_, &status, 0);
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        pid_ = 0;
    }

    unsigned max_payload_;
    std::string extra_config_;
    std::string binary_;
    std::string dir_;
    unsigned port_ = 0;
    pid_t pid_ = 0;
};

}  // namespace evring::test
