"""Readers in event loops (docs/event-loops.md): Reader.fileno() with select,
`async for` and `await reader.next()` over two rings at once in one asyncio
thread (issue 31's acceptance check), a reader closed while a coroutine awaits
it, and evring.WaitSet."""
import asyncio
import os
import select
import threading
import time

import pytest

import evring

BOUND = 30  # seconds a wake may take on a loaded machine, at most


def write_events(writer, count, pause_every=25, pause=0.002):
    for i in range(1, count + 1):
        writer.record(5, i.to_bytes(8, "little"))
        if i % pause_every == 0:
            time.sleep(pause)  # the readers fall asleep now and then


def readable(fileno_owner, timeout):
    return bool(select.select([fileno_owner], [], [], timeout)[0])


def test_fileno_is_readable_with_select_exactly_while_events_are_pending(ring_path):
    with evring.create(ring_path, descriptor_shift=10, payload_shift=16) as writer:
        reader = evring.open(ring_path)
        reader.seek("oldest")
        assert reader.fileno() == reader.fileno()
        assert not readable(reader, 0)
        writer.record(5, b"12345678")
        assert readable(reader, BOUND)
        event = reader.try_next()
        assert event is not None and event.seqno == 1
        assert reader.try_next() is None and not reader.ended
        assert not readable(reader, 0), "read to nothing: asleep again"
        reader.close()


def test_asyncio_over_two_rings_in_one_thread_gets_every_event_of_both(ring_path):
    other_path = ring_path + "-b"
    count = 600
    with evring.create(ring_path, descriptor_shift=12, payload_shift=18) as a, \
            evring.create(other_path, descriptor_shift=12, payload_shift=18) as b:
        readers = [evring.open(ring_path), evring.open(other_path)]
        for r in readers:
            r.seek("oldest")

        async def collect(reader):
            seqnos = []
            async for event in reader:
                seqnos.append(event.seqno)
                if len(seqnos) == count:
                    return seqnos
            return seqnos

        async def main():
            writers = [threading.Thread(target=write_events, args=(w, count)) for w in (a, b)]
            for t in writers:
                t.start()
            try:
                return await asyncio.wait_for(asyncio.gather(*(collect(r) for r in readers)), BOUND)
            finally:
                for t in writers:
                    t.join()

        got = asyncio.run(main())
        assert got == [list(range(1, count + 1))] * 2
        for r in readers:
            r.close()


def test_await_next_hands_out_the_events_then_none_at_the_end(ring_path):
    with evring.create(ring_path, descriptor_shift=8, payload_shift=16, keep=True) as writer:
        for i in range(3):
            writer.record(5, bytes(8))
    try:
        reader = evring.open(ring_path)  # nobody writes it any more
        reader.seek("oldest")

        async def main():
            return [await reader.next() for _ in range(4)]

        got = asyncio.run(main())
        assert [e.seqno for e in got[:3]] == [1, 2, 3]
        assert got[3] is None and reader.ended
        reader.close()
    finally:
        os.unlink(ring_path)


def test_a_reader_closed_while_a_coroutine_awaits_it_wakes_the_coroutine(ring_path):
    with evring.create(ring_path, descriptor_shift=8, payload_shift=16):
        reader = evring.open(ring_path)

        async def main():
            waiting = asyncio.ensure_future(reader.next())
            await asyncio.sleep(0)  # it is awaiting the descriptor now
            asyncio.get_running_loop().call_soon(reader.close)
            with pytest.raises(evring.Error, match="closed"):
                await asyncio.wait_for(waiting, BOUND)

        asyncio.run(main())


def test_a_wait_set_says_which_readers_are_ready(ring_path):
    other_path = ring_path + "-b"
    with evring.create(ring_path, descriptor_shift=8, payload_shift=16) as a, \
            evring.create(other_path, descriptor_shift=8, payload_shift=16) as b:
        ra, rb = evring.open(ring_path), evring.open(other_path)
        with evring.WaitSet() as ws:
            ws.add(ra)
            ws.add(rb)
            assert len(ws) == 2
            with pytest.raises(evring.Error, match="in this wait set already"):
                ws.add(ra)
            assert ws.wait(0) == []
            assert not readable(ws, 0)
            b.record(5, bytes(8))
            assert readable(ws, BOUND)
            assert ws.wait(0) == [rb]
            assert rb.try_next().seqno == 1 and rb.try_next() is None
            assert ws.wait(0) == []
            a.record(5, bytes(8))
            assert ws.wait(BOUND) == [ra]
            ws.remove(ra)
            with pytest.raises(evring.Error, match="not in this wait set"):
                ws.remove(ra)
            rb.close()  # a closed reader leaves the set
            assert len(ws) == 0
            assert ws.wait(0) == []
        with pytest.raises(evring.Error, match="wait set is closed"):
            ws.wait(0)
        ra.close()
