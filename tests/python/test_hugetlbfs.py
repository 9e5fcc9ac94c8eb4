"""A ring on hugetlbfs, named rather than pathed (the default ring directory)."""
import os

import pytest

import evring


def hugetlbfs_mount():
    with open("/proc/self/mounts") as mounts:
        for line in mounts:
            fields = line.split()
            if fields[2] == "hugetlbfs":
                return fields[1]
    return None


def test_a_ring_on_huge_pages_round_trips():
    mount = hugetlbfs_mount()
    if mount is None or not os.access(mount, os.W_OK):
        pytest.skip("no writable hugetlbfs mount (see docs/hugepages.md)")
    path = os.path.join(mount, f"evring-pytest-{os.getpid()}")
    try:
        writer = evring.create(path, descriptor_shift=15, payload_shift=21)
    except evring.Error as e:
        if "huge page" in str(e) or "Cannot allocate" in str(e):
            pytest.skip(f"huge pages unavailable: {e}")
        raise
    try:
        with writer:
            for i in range(100):
                writer.record(3, i.to_bytes(4, "little"))
            reader = evring.open(path)
            assert [e.seqno for e in reader.replay()] == list(range(1, 101))
            reader.close()
    finally:
        if os.path.exists(path + ".readers"):  # the reader's registry
            os.unlink(path + ".readers")
