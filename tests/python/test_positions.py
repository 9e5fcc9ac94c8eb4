"""One position resolver (evring/source/position.hpp): the CLI's --from, the C ABI's
evring_source_seek and the Python reader's start/seek accept exactly the same
spellings, land on the same event, and refuse the same bad ones with the
same reason (only the option's name differs: --from, position, start)."""
import ctypes
import json
import os
import re
import subprocess

import pytest

import evring

GOOD = ["oldest", "latest", "1", "7", "20", "-1", "-3", "@1700000000", "@1700000000.5", "-5s", "-250ms",
        "-1h", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00.125"]
BAD = ["sometime", "", "-", "5x", "oldest ", "+3", "0x10", "-5parsecs", "2026-02-30T00:00:00Z", "@abc",
       "99999999999999999999", "4611686018427387905", "-99999999999999999999", "1e3"]


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory, evring_bin):
    """A snapshot of a ring holding seqnos 1..20 (a snapshot ends, so the CLI's watch ends too)."""
    where = tmp_path_factory.mktemp("positions")
    ring = f"/dev/shm/evring-pytest-{os.getpid()}-positions"
    with evring.create(ring, descriptor_shift=8, payload_shift=16) as writer:
        for i in range(20):
            writer.record(3, i.to_bytes(8, "little"))
        path = str(where / "ring.snap.zst")
        subprocess.run([evring_bin, "snapshot", ring, "-o", path], check=True, capture_output=True, timeout=30)
    return path


@pytest.fixture(scope="module")
def c_abi():
    path = os.environ.get("EVRING_LIBRARY")
    if not path or not os.path.exists(path):
        pytest.skip("EVRING_LIBRARY is not set (run through meson test)")
    lib = ctypes.CDLL(path)
    lib.evring_source_open.restype = ctypes.c_void_p
    lib.evring_source_open.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
    lib.evring_source_seek.restype = ctypes.c_int
    lib.evring_source_seek.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.evring_source_error.restype = ctypes.c_char_p
    lib.evring_source_error.argtypes = [ctypes.c_void_p]
    lib.evring_source_next_seqno.restype = ctypes.c_uint64
    lib.evring_source_next_seqno.argtypes = [ctypes.c_void_p]
    lib.evring_source_close.argtypes = [ctypes.c_void_p]
    lib.evring_last_error.restype = ctypes.c_char_p
    return lib


def reason(message, option, text):
    """The message without its option's name: what the resolver said about `text`."""
    prefix = f"bad {option} '{text}': "
    assert prefix in message, f"{message!r} lacks {prefix!r}"
    return message[message.index(prefix) + len(prefix):].strip()


def cli(evring_bin, snapshot, text):
    """(first seqno, None) or (None, message) from `evring watch SNAPSHOT --from TEXT`."""
    run = subprocess.run([evring_bin, "watch", snapshot, "--from", text, "--count", "1", "--format", "jsonl"],
                         capture_output=True, text=True, timeout=30)
    if run.returncode == 0:
        lines = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
        return lines[0]["seqno"] if lines else 21, None
    assert run.returncode == 2, run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("evring: ")]
    assert len(errors) == 1, run.stderr
    return None, errors[0][len("evring: "):]


def c_seek(lib, snapshot, text):
    source = lib.evring_source_open(snapshot.encode(), None)
    assert source, lib.evring_last_error()
    try:
        if lib.evring_source_seek(source, text.encode()) != 0:
            return None, lib.evring_source_error(source).decode()
        return lib.evring_source_next_seqno(source), None
    finally:
        lib.evring_source_close(source)


def py_seek(snapshot, start):
    with evring.open(snapshot) as reader:
        try:
            reader.seek(start)
        except evring.Error as e:
            return None, str(e)
        return reader.next_seqno, None


@pytest.mark.parametrize("text", GOOD)
def test_every_spelling_the_cli_accepts_lands_on_the_same_event_everywhere(evring_bin, snapshot, c_abi, text):
    at, error = cli(evring_bin, snapshot, text)
    assert error is None, f"the CLI refused {text!r}: {error}"
    assert c_seek(c_abi, snapshot, text) == (at, None)
    assert py_seek(snapshot, text) == (at, None)
    if re.fullmatch(r"-?[0-9]+", text):
        assert py_seek(snapshot, int(text)) == (at, None)   # an int is the same position


@pytest.mark.parametrize("text", BAD)
def test_every_spelling_the_cli_refuses_is_refused_everywhere_with_the_same_reason(evring_bin, snapshot, c_abi,
                                                                                  text):
    at, error = cli(evring_bin, snapshot, text)
    assert at is None, f"the CLI accepted {text!r}"
    expected = reason(error, "--from", text)
    at, c_error = c_seek(c_abi, snapshot, text)
    assert at is None and reason(c_error, "position", text) == expected
    at, py_error = py_seek(snapshot, text)
    assert at is None and reason(py_error, "start", text) == expected


def test_python_refuses_what_is_neither_an_int_nor_a_str(snapshot):
    for start in (True, 1.5, b"oldest", [1]):
        with pytest.raises(evring.Error, match="bad start"):
            py_seek_raise(snapshot, start)
    with pytest.raises(evring.Error, match=reason_of_big()):
        py_seek_raise(snapshot, 2**64)


def reason_of_big():
    return re.escape(f"bad start '{2**64}'")


def py_seek_raise(snapshot, start):
    with evring.open(snapshot) as reader:
        reader.seek(start)


def test_a_file_starts_at_its_oldest_event_and_a_follow_of_it_too(snapshot_dir):
    """evring.open of a snapshot or recording is at its oldest event, as the
    CLI's stats, digest and record read one; follow() of a file starts there
    unless told otherwise."""
    path = os.path.join(snapshot_dir, "emn-1b-15m.snapshot.zst")
    with evring.open(path) as reader:
        assert reader.try_next().seqno == 1
    with evring.open(path) as reader:
        assert list(reader.read_batch(3).events["seqno"]) == [1, 2, 3]
    with evring.open(path) as reader:
        assert [e.seqno for e in reader.follow(timeout=0)][:2] == [1, 2]
    with evring.open(path) as reader:
        assert [e.seqno for e in reader.follow(start="latest", timeout=0)] == [6597]
