// The SIGBUS handler behind sigbus_guard.hpp.
#include "ring/sigbus_guard.hpp"

#include <signal.h>

#include <fmt/format.h>

#include <cstring>
#include <mutex>

namespace evring {
namespace {

struct sigaction g_previous {};  // written once under g_install, before our handler is live

void on_sigbus(int sig, siginfo_t* info, void* context) {
    detail::SigbusFrame* frame = detail::current_sigbus_frame();
    if (frame != nullptr) {
        frame->fault_address = info->si_addr;
        siglongjmp(frame->env, 1);
    }
    // Not a guarded read: behave as if we were not here.
    if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction != nullptr) {
        g_previous.sa_sigaction(sig, info, context);
        return;
    }
    if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
        g_previous.sa_handler(sig);
        return;
    }
    // Default (or ignored, which for a fault means the default anyway):
    // returning re-runs the faulting access, which now kills the process.
    struct sigaction restore {};
    restore.sa_handler = SIG_DFL;
    sigemptyset(&restore.sa_mask);
    ::sigaction(SIGBUS, &restore, nullptr);
}

}  // namespace

namespace detail {

SigbusFrame*& current_sigbus_frame() noexcept {
    // initial-exec TLS in an executable: safe to touch from a signal handler.
    static thread_local SigbusFrame* frame = nullptr;
    return frame;
}

Error truncated_error(const MappedRing& ring, const void* fault, const char* what) {
    const auto* base = reinterpret_cast<const std::byte*>(&ring.header());
    const auto* at = static_cast<const std::byte*>(fault);
    const std::string offset = at >= base ? std::to_string(at - base) : "unknown";
    return Error(EFAULT, fmt::format("bus error {} of ring file '{}' at mapping offset {}: the file "
                                     "was truncated while mapped",
                                     what, ring.path(), offset));
}

}  // namespace detail

Status install_sigbus_handler() {
    static std::mutex install;
    static bool installed = false;
    std::lock_guard<std::mutex> lock(install);
    if (installed) return {};
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    // SA_NODEFER: SIGBUS stays unblocked when the handler siglongjmps away
    // (the guard saves no mask, to avoid a system call per read).
    action.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    if (::sigaction(SIGBUS, &action, &g_previous) != 0)
        return Error::from_errno(errno, "installing the SIGBUS handler for guarded ring reads");
    installed = true;
    return {};
}

Result<NextResult> try_next_guarded(Iterator& it, EventDescriptor& out) {
    NextResult result = NextResult::NotReady;
    const void* fault = nullptr;
    if (!detail::run_under_sigbus_frame([&] { result = it.try_next(out); }, fault))
        return detail::truncated_error(it.ring(), fault, "reading a descriptor");
    return result;
}

Status reset_guarded(Iterator& it) {
    const void* fault = nullptr;
    if (!detail::run_under_sigbus_frame([&] { it.reset(); }, fault))
        return detail::truncated_error(it.ring(), fault, "finding the newest event");
    return {};
}

Result<PayloadResult> copy_payload_guarded(const MappedRing& ring, const EventDescriptor& event,
                                           void* dst, std::size_t dst_size) {
    PayloadResult result = PayloadResult::Invalid;
    const void* fault = nullptr;
    if (!detail::run_under_sigbus_frame(
            [&] { result = copy_payload(ring, event, dst, dst_size); }, fault))
        return detail::truncated_error(ring, fault, "copying a payload");
    return result;
}

}  // namespace evring
