"""Writer.record from values: the payload encoded with the ring's schema and
checked as every typed write is (docs/python.md, "Writing from values")."""
import json
import os
import subprocess

import pytest

import evring

DEMO_SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "schemas", "demo.toml")

ALL_TYPES = """
content_type = 4661
content_name = "kinds"
[[event]]
number = 2
name = "ORDER"
fields = [
  { name = "id",     type = "u64" },
  { name = "delta",  type = "i16" },
  { name = "side",   type = "side" },
  { name = "live",   type = "bool" },
  { name = "ratio",  type = "f64" },
  { name = "big",    type = "u128" },
  { name = "who",    type = "bytes4" },
  { name = "symbol", type = "char[8]" },
  { name = "pair",   type = "u16[2]" },
  { name = "at",     type = "point" },
  { name = "n",      type = "u8" },
  { name = "legs",   type = "point[n]" },
]
[[event]]
number = 3
name = "PING"
[enum.side]
type = "u8"
values = { BUY = 0, SELL = 1 }
[struct.point]
fields = [ { name = "x", type = "i32" }, { name = "y", type = "i32" } ]
"""


# The acceptance test of issue 22, exactly as written there.
def test_acceptance_demo_quote_from_values(ring_path, evring_bin):
    w = evring.create(ring_path, schema=DEMO_SCHEMA, descriptor_shift=10, payload_shift=20)
    with pytest.raises(evring.Error, match=r"QUOTE.*\b2 bytes"):
        w.record("QUOTE", b"xx")
    # No reader is open: nobody narrowed what is wanted, so the event is written (interest).
    assert w.record("QUOTE", counter=1, price=1000000, quantity=5, checksum=0, name="ACME") == 1
    events = list(evring.open(ring_path).replay(start="oldest"))
    assert len(events) == 1
    assert events[0].fields["name"] == "ACME"
    out = subprocess.run([evring_bin, "watch", ring_path, "--from", "oldest", "--count", "1", "--format", "jsonl"],
                         check=True, capture_output=True, text=True, timeout=60).stdout
    assert '"name":"ACME"' in out
    assert json.loads(out.splitlines()[0])["fields"]["name"] == "ACME"
    w.close()


def test_every_kind_of_field_round_trips(ring_path):
    with evring.create(ring_path, schema=ALL_TYPES, descriptor_shift=6, payload_shift=16) as w:
        values = {"id": 2**64 - 1, "delta": -5, "side": "SELL", "live": True, "ratio": 0.25, "big": 2**100,
                  "who": b"\x01\x02\x03\x04", "symbol": "ÉTÉ", "pair": [7, 8], "at": {"x": -1, "y": 2},
                  "legs": [{"x": 1, "y": 2}, {"x": 3, "y": 4}]}
        assert w.record("ORDER", values, flow=(9,)) == 1
        assert w.record("ORDER", side=0) == 2                    # the rest left zero, no legs
        assert w.record("PING") == 3
        first, second, third = evring.open(ring_path).replay(start="oldest")
        assert first.fields == dict(values, n=2, side="SELL")
        assert first.content_ext[0] == 9
        assert second.fields["side"] == "BUY" and second.fields["legs"] == [] and second.fields["symbol"] == ""
        assert third.fields == {}


@pytest.mark.parametrize("fields, message", [
    ({"id": -1}, r"'id' = -1 does not fit a u64"),
    ({"delta": 2**15}, r"does not fit a i16"),
    ({"side": "HOLD"}, r"enum 'side' has no value 'HOLD'"),
    ({"symbol": "TOO LONG!"}, r"'symbol' is a char\[8\]; \"TOO LONG!\" is 9 bytes"),
    ({"who": b"\x01"}, r"'who' takes exactly 4 bytes, not 1"),
    ({"pair": [1]}, r"'pair' takes a sequence of exactly 2 elements"),
    ({"at": {"z": 1}}, r"'at': no field 'z' \(fields: x, y\)"),
    ({"colour": 1}, r"the payload: no field 'colour'"),
    ({"n": 3, "legs": [{"x": 1, "y": 1}]}, r"count field 'n' is 3, but trailing array 'legs' has 1 elements"),
    ({"legs": [{}] * 256}, r"too many for its count field 'n' \(u8\)"),
    ({"id": "7"}, r"'id' is a u64: give an int"),
])
def test_values_that_do_not_fit_are_refused_by_field(ring_path, fields, message):
    with evring.create(ring_path, schema=ALL_TYPES, descriptor_shift=6, payload_shift=16) as w:
        with pytest.raises(evring.Error, match=message):
            w.record("ORDER", fields)
        with pytest.raises(evring.Error, match=r"event type 9 is not in schema 'kinds'"):
            w.record(9, {})
        with pytest.raises(evring.Error, match="PING has an empty payload"):
            w.record("PING", id=1)


def test_fields_need_a_schema(ring_path):
    with evring.create(ring_path, descriptor_shift=6, payload_shift=16) as w:
        with pytest.raises(evring.Error, match="needs a ring created with a schema"):
            w.record(2, price=1)
