"""Interest from Python (docs/interest.md, docs/python.md "Interest"): a
reader opened with keywords/level registers them; Writer.wants and the
checked Writer.record skip an event no registered reader wants (record
returns None), always_recorded types never; a reader that says nothing
wants everything."""
import os
import shutil
import subprocess

import pytest

import evring

SCHEMA = os.path.join(os.path.dirname(__file__), "..", "schemas", "interest.toml")


def create(path):
    return evring.create(path, descriptor_shift=6, payload_shift=16, schema=SCHEMA)


def test_a_reader_that_says_nothing_wants_everything(ring_path):
    with create(ring_path) as w:
        with evring.open(ring_path) as reader:
            assert reader.registered
            assert w.wants("TRADE") and w.wants("QUOTE")
            assert w.record("TRADE", price=1, quantity=2) == 1


def test_a_reader_with_keywords_makes_the_writer_skip_the_rest(ring_path):
    with create(ring_path) as w:
        reader = evring.open(ring_path, keywords=["quotes"], level=5)
        assert reader.registered
        assert not w.wants("TRADE") and not w.wants(2)
        assert w.wants("QUOTE") and w.wants("CHECKPOINT")      # CHECKPOINT: always_recorded
        assert w.record("TRADE", price=1, quantity=2) is None  # skipped: not an error, nothing published
        assert w.record("QUOTE", price=3) == 1
        assert w.record("CHECKPOINT", block=4) == 2
        assert w.record_raw("TRADE", bytes(16)) == 3           # the raw path never looks at interest
        types = [e.type_name for e in reader.replay(start="oldest")]
        assert types == ["QUOTE", "CHECKPOINT", "TRADE"]
        reader.close()                                         # its interest leaves with it
        assert w.wants("TRADE")
        assert w.record("TRADE", price=5, quantity=6) == 4


def test_a_skipped_event_is_still_checked(ring_path):
    with create(ring_path) as w, evring.open(ring_path, keywords="quotes"):
        with pytest.raises(evring.Error, match=r"TRADE \(event type 2\): a payload of 1 bytes"):
            w.record("TRADE", b"x")


def test_a_level_alone_wants_every_keyword_up_to_it(ring_path):
    with create(ring_path) as w, evring.open(ring_path, level=2):
        assert w.wants("TRADE") and not w.wants("QUOTE")       # levels 2 and 5


def test_bad_interest_is_refused_at_open(ring_path, tmp_path):
    with create(ring_path) as w:
        with pytest.raises(evring.Error, match=r"unknown keyword 'trade' \(schema 'market' has: trades, quotes, risk\)"):
            evring.open(ring_path, keywords=["trade"])
        with pytest.raises(evring.Error, match=r"level 16 is not in 0\.\.15"):
            evring.open(ring_path, level=16)
        with pytest.raises(evring.Error, match=r"register"):
            evring.open(ring_path, keywords="trades", register=False)
        w.record("TRADE", price=1, quantity=2)
        assert w.wants("TRADE")                                # nothing was registered
        w.record("TRADE", price=1, quantity=2)


def test_a_ring_set_reader_registers_its_interest_in_every_member(evring_bin):
    producer = os.environ.get("PRODUCER_BIN")
    if not producer or not os.access(producer, os.X_OK):
        pytest.skip("PRODUCER_BIN is not set (run through meson test)")
    path = f"/dev/shm/evring-pytest-{os.getpid()}-interest-set"
    try:
        subprocess.run([producer, f"{path}:8:14", "--threads", "2", "--count", "10"],
                       check=True, capture_output=True, timeout=60)
        with evring.open(path, level=3) as reader:
            assert reader.registered
            for member in ("m0", "m1"):
                out = subprocess.run([evring_bin, "readers", os.path.join(path, member)], check=True,
                                     capture_output=True, text=True, timeout=60).stdout
                assert "levels 0..3" in out, out
    finally:
        shutil.rmtree(path, ignore_errors=True)
