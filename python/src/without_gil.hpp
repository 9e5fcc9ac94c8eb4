// python/src/without_gil.hpp — running C++ with the GIL released, safely at
// interpreter exit. Every stretch the extension runs without the GIL (a
// follow's sleep on the doorbell, open's wait for a name, a batch's reads)
// goes through without_gil(); nothing uses pybind11's gil_scoped_release.
//
// Why: when the interpreter finalizes while a daemon thread is without the
// GIL, CPython (3.8 to 3.13) ends that thread as it asks for the GIL back:
// PyEval_RestoreThread calls pthread_exit, whose forced unwinding runs up the
// thread's stack. gil_scoped_release takes the GIL back in its destructor,
// which is noexcept, so the unwinding met a noexcept frame: std::terminate,
// "terminate called without an active exception", SIGABRT (issue 32,
// defect 10). Here:
// - The GIL is taken back in an ordinary frame, never a destructor, and no
//   frame between it and the interpreter is noexcept or swallows the unwind
//   (pybind11's dispatcher rethrows abi::__forced_unwind).
// - Before taking it back, a thread that sees the interpreter finalizing
//   parks until the process exits, as Python 3.14 does with such threads:
//   no Python object is released without the GIL by the unwinding's
//   destructors. Only a thread that asks in the instant finalization starts
//   is unwound (safely, by the first point).
// - `work` runs without the GIL: it must touch no Python object. What it
//   throws is caught, the GIL taken back, then rethrown.
//
// Thread safety: called with the GIL held; returns with it held.
#pragma once

#include <Python.h>

#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

namespace evring::python {

namespace detail {
// Takes the GIL back for `state`; see above (never returns when finalizing).
void take_gil_back(PyThreadState* state);
// The interpreter is going away: a thread must not ask for the GIL.
bool finalizing() noexcept;
}  // namespace detail

template <class Work>
std::invoke_result_t<Work&> without_gil(Work&& work) {
    using Result = std::invoke_result_t<Work&>;
    PyThreadState* const state = PyEval_SaveThread();
    std::exception_ptr failure;
    if constexpr (std::is_void_v<Result>) {
        try {
            work();
        } catch (...) {
            failure = std::current_exception();
        }
        detail::take_gil_back(state);
        if (failure) std::rethrow_exception(failure);
    } else {
        std::optional<Result> result;
        try {
            result.emplace(work());
        } catch (...) {
            failure = std::current_exception();
        }
        detail::take_gil_back(state);
        if (failure) std::rethrow_exception(failure);
        return std::move(*result);
    }
}

}  // namespace evring::python
