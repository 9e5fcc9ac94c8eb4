"""nats:// streams from Python (docs/python.md, "Streams"): evring.open reads a stream
`evring relay` wrote, as `evring watch nats://...` does, and a named reader of it keeps its
position in a JetStream durable consumer (docs/named-readers.md, "Streams"). A real
`nats-server -js` on 127.0.0.1 (a port it picks, a temporary store) is started here and
stopped after; skipped without nats-server or a package built with libnats."""
import json
import os
import shutil
import subprocess
import time

import pytest

import evring

BOUND = 30  # seconds anything may take on a loaded machine, at most


def wait_for(condition, what):
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.01)
    raise AssertionError(f"{what} within {BOUND} s")


@pytest.fixture(scope="module")
def nats_url(tmp_path_factory):
    if not evring.READS_STREAMS:
        pytest.skip("the package was built without libnats")
    if shutil.which("nats-server") is None:
        pytest.skip("nats-server is not installed (apt-get install nats-server)")
    work = tmp_path_factory.mktemp("nats")
    ports = work / "ports"
    ports.mkdir()
    server = subprocess.Popen(["nats-server", "-js", "-a", "127.0.0.1", "-p", "-1", "-sd", str(work / "store"),
                               "--ports_file_dir", str(ports)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def port():
        for name in os.listdir(ports):
            try:
                return json.loads((ports / name).read_text())["nats"][0].rsplit(":", 1)[1]
            except (ValueError, KeyError, IndexError):
                return None
        return None

    try:
        yield f"nats://127.0.0.1:{wait_for(port, 'nats-server did not start')}"
    finally:
        server.terminate()
        server.wait(BOUND)


@pytest.fixture
def relayed(nats_url, evring_bin, tmp_path, monkeypatch):
    """A ring of 1000 events relayed into stream FEED_<n>: its nats:// location."""
    producer = os.environ.get("PRODUCER_BIN", "")
    if not os.access(producer, os.X_OK):
        pytest.skip("PRODUCER_BIN is not set (run through meson test)")
    monkeypatch.setenv("EVRING_RING_DIR", str(tmp_path))
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    monkeypatch.setenv("EVRING_STATE_DIR", str(state))
    stream = f"FEED_{os.getpid()}_{len(os.listdir(tmp_path))}_{time.monotonic_ns() % 1000000}"
    subprocess.run([producer, "feed:16:24", "--count", "1000", "--keep"], check=True, timeout=BOUND,
                   stderr=subprocess.DEVNULL)
    relay = subprocess.Popen([evring_bin, "relay", "feed", "--to", nats_url, "--stream", stream, "--from", "oldest"],
                             stderr=subprocess.DEVNULL)
    location = f"{nats_url}/{stream}"

    def created():
        try:
            evring.open(location, register=False).close()
            return True
        except evring.Error as e:
            if "does not exist" in str(e) or "holds no relayed ring" in str(e):
                return False
            raise

    try:
        wait_for(created, f"the relay did not create stream {stream}")
        yield location
    finally:
        relay.terminate()
        relay.wait(BOUND)


def read(location, count, **options):
    """The seqnos of the first `count` events from where the reader starts, and the reader's facts."""
    seqnos = []
    with evring.open(location, register=False, **options) as reader:
        for event in reader.follow(start=None if "named" in options else "oldest", timeout=BOUND):
            seqnos.append(event.seqno)
            if len(seqnos) == count:
                break
        facts = {}
        if "named" in options:
            reader.commit()
            facts = dict(notices="\n".join(reader.notices), redelivered=reader.redelivered)
    return seqnos, facts


def test_a_relayed_ring_reads_as_the_ring(relayed):
    seqnos, _ = read(relayed, 1000)
    assert seqnos == list(range(1, 1001))


def test_a_named_reader_resumes_at_the_durable_consumers_ack_floor(relayed):
    seqnos, facts = read(relayed, 100, named="py")
    assert seqnos == list(range(1, 101))
    assert "no position yet (no durable consumer 'py'" in facts["notices"]
    # 100 ended inside the relay's second message (65..128): acknowledged through 64, so the
    # next run starts at 65 and says 65..100 come again.
    seqnos, facts = read(relayed, 100, named="py")
    assert seqnos == list(range(65, 165))
    assert "resumes after stream sequence" in facts["notices"] and "(seqno 64)" in facts["notices"]
    assert "the previous run wrote seqno 65..100 after its last acknowledgement" in facts["notices"]
    assert facts["redelivered"] == 36
