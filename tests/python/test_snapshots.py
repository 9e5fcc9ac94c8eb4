"""The three real execution-ring snapshots read from Python: the same events,
byte for byte, as `evring watch --format jsonl`, every one decoded by name."""
import hashlib
import json
import os
import subprocess

import numpy
import pytest

import evring
from conftest import SNAPSHOTS


def canonical(seqno, event_type, type_name, payload_size, nanos, ext, payload_hex):
    """One event's identity as both sides see it: the CLI's jsonl keys, parsed."""
    return f"{seqno} {event_type} {type_name} {payload_size} {nanos} {list(ext)} {payload_hex}\n"


def event_line(event):
    payload = event.payload.hex() if event.payload is not None else None
    return canonical(event.seqno, event.event_type, event.type_name, event.payload_size,
                     event.record_epoch_nanos, event.content_ext, payload)


def cli_digest(evring_bin, path):
    """Count and digest of `evring watch --format jsonl`, read with Python's exact integers."""
    out = subprocess.run([evring_bin, "watch", path, "--from", "oldest", "--format", "jsonl"],
                         check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=300).stdout
    digest = hashlib.sha256()
    count = 0
    for line in out.splitlines():
        o = json.loads(line)
        digest.update(canonical(o["seqno"], o["event_type"], o.get("type_name"), o["payload_size"],
                                o["record_epoch_nanos"], o["content_ext"], o["payload"]).encode())
        count += 1
    return count, digest.hexdigest()


@pytest.mark.parametrize("name", SNAPSHOTS)
def test_replay_equals_the_cli_jsonl_and_decodes_every_event(name, snapshot_dir, evring_bin):
    path = os.path.join(snapshot_dir, name + ".snapshot.zst")
    reader = evring.open(path)
    assert reader.kind == "snapshot"
    assert reader.schema_origin.startswith("built-in schema monad-exec")
    digest = hashlib.sha256()
    count = 0
    undecoded = []
    for event in reader.replay(start="oldest"):
        digest.update(event_line(event).encode())
        count += 1
        assert event.type_name is not None
        if event.fields is None:
            undecoded.append((event.seqno, event.decode_error))
    assert undecoded == []
    assert (count, digest.hexdigest()) == cli_digest(evring_bin, path)
    assert reader.lost == 0 and reader.gaps == 0
    assert reader.counters["events"] == count


def test_fields_carry_hand_checked_values(snapshot_dir):
    # The first event of emn-1b-15m starts block 15,000,001 (docs/cli.md shows it decoded).
    reader = evring.open(os.path.join(snapshot_dir, "emn-1b-15m.snapshot.zst"))
    first = next(reader.replay(start="oldest"))
    assert first.seqno == 1 and first.type_name == "BLOCK_START"
    fields = first.fields
    assert fields["block_tag"]["block_number"] == 15000001
    assert fields["eth_block_input"]["gas_limit"] == 30000000
    assert fields["eth_block_input"]["beneficiary"].hex() == "1ad91ee08f21be3de0ba2ba6918e714da6b45836"
    assert fields["chain_id"] == 1


@pytest.mark.parametrize("name", SNAPSHOTS)
def test_read_batch_hands_out_the_same_events_and_payloads(name, snapshot_dir):
    path = os.path.join(snapshot_dir, name + ".snapshot.zst")
    expected = [(e.seqno, e.event_type, e.payload) for e in evring.open(path).replay(start="oldest")]
    reader = evring.open(path)
    reader.seek("oldest")
    seqnos, types, payloads = [], [], []
    while True:
        batch = reader.read_batch(10000)
        assert batch.events.dtype == evring.DESCRIPTOR_DTYPE
        seqnos.extend(batch.events["seqno"].tolist())
        types.extend(batch.events["event_type"].tolist())
        assert numpy.all(batch.payload_states == 1)
        payloads.extend(bytes(batch.payload(i)) for i in range(len(batch)))
        if batch.stopped != "full":
            assert batch.stopped == "end"
            break
    assert list(zip(seqnos, types, payloads)) == expected
