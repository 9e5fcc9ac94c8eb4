"""Shared fixtures of the Python package's tests (run by meson test as python_test).

Rings live on tmpfs (/dev/shm) under names carrying the pid and the test's
name, and are removed by their writers (or by the fixture if a test left one).
EVRING_BIN is the evring CLI of the same build; EVRING_CONFORMANCE_DIR, when
set, holds the real execution-ring snapshots.
"""
import os
import re
import subprocess
import sys

import pytest

import evring

SNAPSHOTS = ["emn-1b-15m", "emn-30b-15m", "mdn-500b-genesis"]

# A schema of the tests' own: a tick with a price and a trailing name.
TICK_SCHEMA = """
content_type = 4660
content_name = "pytest"
flow_tags = ["instrument"]

[[event]]
number = 7
name = "TICK"
description = "a price tick"
fields = [
  { name = "count", type = "u64" },
  { name = "price", type = "i32" },
  { name = "name_length", type = "u32" },
  { name = "name", type = "bytes[name_length]" },
]
"""


def tick_payload(count, price, name=b""):
    return (count.to_bytes(8, "little") + price.to_bytes(4, "little", signed=True)
            + len(name).to_bytes(4, "little") + name)


@pytest.fixture
def ring_path(request):
    name = re.sub(r"[^A-Za-z0-9_-]", "_", request.node.name)
    path = f"/dev/shm/evring-pytest-{os.getpid()}-{name}"
    yield path
    for leftover in (path, path + ".readers"):  # the ring and its reader registry
        if os.path.exists(leftover):
            os.unlink(leftover)


@pytest.fixture(scope="session")
def evring_bin():
    path = os.environ.get("EVRING_BIN")
    if not path or not os.access(path, os.X_OK):
        pytest.skip("EVRING_BIN is not set (run through meson test)")
    return path


@pytest.fixture(scope="session")
def snapshot_dir():
    path = os.environ.get("EVRING_CONFORMANCE_DIR")
    if not path or not os.path.isdir(path):
        pytest.skip("EVRING_CONFORMANCE_DIR is not set: the real snapshots are not available")
    return path


def run_python(code, *args, **kwargs):
    """Starts `code` in another Python process with the same evring package."""
    return subprocess.Popen([sys.executable, "-c", code, *args], env=dict(os.environ), **kwargs)


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


__all__ = ["evring", "SNAPSHOTS", "TICK_SCHEMA", "tick_payload", "run_python", "rss_bytes"]
