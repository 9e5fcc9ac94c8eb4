"""Nothing leaks: a million events through replay, follow and read_batch keep the RSS flat."""
import evring
from conftest import TICK_SCHEMA, rss_bytes, tick_payload

CHUNK = 20_000


def pump(writer, reader, chunks, seqno):
    for _ in range(chunks):
        for _ in range(CHUNK):
            seqno += 1
            writer.record(7, tick_payload(seqno, 1, b"x" * (seqno % 7)), flow=(seqno,))
        n = 0
        for event in reader.follow(start=None, timeout=0):
            n += 1
            assert event.fields["count"] == event.seqno
        assert n == CHUNK
        batch = reader.read_batch(100)   # nothing new: an empty batch
        assert len(batch) == 0
    return seqno


def test_a_million_events_leave_the_resident_size_flat(ring_path):
    with evring.create(ring_path, descriptor_shift=16, payload_shift=22, schema=TICK_SCHEMA) as writer:
        reader = evring.open(ring_path)
        reader.seek("oldest")
        seqno = pump(writer, reader, 5, 0)          # warm up: 100 k events
        before = rss_bytes()
        seqno = pump(writer, reader, 45, seqno)     # 900 k more
        grown = rss_bytes() - before
        assert seqno == 1_000_000 and reader.lost == 0
        assert grown < 8 << 20, f"RSS grew by {grown} bytes over 900,000 events"
