"""A program may exit while a daemon thread is inside evring (issue 32, defect 10).

Each run's daemon thread goes in and out of a call that releases the GIL
(follow's wait, open's wait for a name, read_batch) as fast as it can, so the
interpreter's exit finds it without the GIL or asking for it back. CPython
ends such a thread with pthread_exit; pybind11's gil_scoped_release took the
GIL back in a noexcept destructor, and the unwinding then called
std::terminate: SIGABRT in 19 or 20 runs of 20 (python/src/without_gil.hpp).
"""
import os
import subprocess
import sys

import pytest

RUNS = 8

PROGRAM = r"""
import sys, threading
import evring
kind, path = sys.argv[1], sys.argv[2]
writer = evring.create(path, descriptor_shift=6, payload_shift=16) if kind != "wait" else None
started = threading.Event()

def follow():
    reader = evring.open(path)
    while True:
        started.set()
        for _ in reader.follow(timeout=0.001):
            pass

def wait():
    while True:
        started.set()
        try:
            evring.open(path, wait=0.001)
        except evring.Error:
            pass

def batch():
    reader = evring.open(path)
    while True:
        started.set()
        reader.read_batch(10)

threading.Thread(target={"follow": follow, "wait": wait, "batch": batch}[kind], daemon=True).start()
if not started.wait(30):
    sys.exit("the daemon thread never started")
print("exiting", flush=True)
"""


@pytest.mark.parametrize("kind", ["follow", "wait", "batch"])
def test_exiting_while_a_daemon_thread_waits_in_evring_is_clean(kind, ring_path):
    for run in range(RUNS):
        try:
            child = subprocess.run([sys.executable, "-c", PROGRAM, kind, ring_path], env=dict(os.environ),
                                   capture_output=True, text=True, timeout=60)
        finally:
            # The exiting program does not close its writer: its ring (and registry) stay behind.
            for leftover in (ring_path, ring_path + ".readers"):
                if os.path.exists(leftover):
                    os.unlink(leftover)
        assert child.returncode == 0 and child.stdout == "exiting\n" and "terminate" not in child.stderr, \
            f"run {run + 1} of {RUNS}: exit status {child.returncode}, stderr: {child.stderr[-2000:]}"
