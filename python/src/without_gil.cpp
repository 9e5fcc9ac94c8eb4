// Taking the GIL back after a stretch without it (without_gil.hpp).
#include "without_gil.hpp"

#include <unistd.h>

namespace evring::python::detail {

bool finalizing() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing() != 0;
#else
    return _Py_IsFinalizing() != 0;
#endif
}

void take_gil_back(PyThreadState* state) {
    // The interpreter is going away: this thread would be ended as it asks
    // for the GIL (without_gil.hpp). It waits for the process's exit instead.
    if (finalizing())
        for (;;) ::pause();
    // May end this thread (pthread_exit) when finalization began just now:
    // the unwinding then passes through ordinary frames only.
    PyEval_RestoreThread(state);
}

}  // namespace evring::python::detail
