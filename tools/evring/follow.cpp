#include "follow.hpp"

#include <poll.h>

#include <atomic>
#include <csignal>
#include <thread>

namespace evring::cli {
namespace {

volatile std::sig_atomic_t g_stop = 0;

extern "C" void on_stop_signal(int) { g_stop = 1; }

constexpr std::chrono::microseconds kFirstSleep{20};
constexpr std::chrono::microseconds kLongestSleep{5000};

}  // namespace

void wait_for_more(const Iterator& it, FollowState& state) {
    if (!state.doorbell) state.doorbell.emplace(Doorbell::attach(it.ring()));
    if (state.doorbell->mode() == Doorbell::Mode::Futex) {
        state.doorbell->wait(it.next_seqno(), std::chrono::milliseconds(100));
        return;
    }
    state.backoff = state.backoff.count() == 0 ? kFirstSleep
                                               : std::min(state.backoff * 2, kLongestSleep);
    std::this_thread::sleep_for(state.backoff);
}

void install_stop_handlers() {
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, nullptr);
    ::sigaction(SIGTERM, &action, nullptr);
    ::sigaction(SIGHUP, &action, nullptr);
    std::signal(SIGPIPE, SIG_IGN);
}

bool stop_requested() noexcept { return g_stop != 0; }

bool WriterWatch::writer_gone() {
    if (gone_) return true;
    const int pidfd = reader_->writer_exit_fd();
    if (pidfd >= 0) {
        pollfd p{pidfd, POLLIN, 0};
        gone_ = ::poll(&p, 1, 0) > 0;
        return gone_;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now < next_check_) return false;
    next_check_ = now + std::chrono::milliseconds(100);
    gone_ = !reader_->writer_alive();
    return gone_;
}

}  // namespace evring::cli
