"""One Writer used by several Python threads at once (issue 32, defect 1; docs/python.md).

Every seqno record() returns is handed out once, and the ring holds exactly the
events written, each thread's in its order. The threads start together and
switch often (sys.setswitchinterval), raw writes and writes from values mixed.
"""
import sys
import threading

import evring
from conftest import TICK_SCHEMA, tick_payload

THREADS = 4
PER_THREAD = 20_000


def test_threads_sharing_a_writer_get_every_seqno_once(ring_path):
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        with evring.create(ring_path, descriptor_shift=17, payload_shift=23, schema=TICK_SCHEMA) as writer:
            start = threading.Barrier(THREADS)
            seqnos = [[] for _ in range(THREADS)]

            def record_all(t):
                start.wait()
                mine = seqnos[t]
                for i in range(PER_THREAD):
                    if i % 2:
                        mine.append(writer.record("TICK", count=i, price=t, flow=(t,)))
                    else:
                        mine.append(writer.record(7, tick_payload(i, t), flow=(t,)))

            threads = [threading.Thread(target=record_all, args=(t,)) for t in range(THREADS)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            handed_out = sorted(s for mine in seqnos for s in mine)
            assert handed_out == list(range(1, THREADS * PER_THREAD + 1))

            with evring.open(ring_path) as reader:
                reader.seek("oldest")
                batch = reader.read_batch(10 * THREADS * PER_THREAD)
                assert len(batch) == THREADS * PER_THREAD and batch.gaps == 0 and reader.lost == 0
                assert list(batch.events["seqno"]) == handed_out
                for t in range(THREADS):
                    events = batch.events[batch.events["content_ext"][:, 0] == t]
                    assert list(events["seqno"]) == seqnos[t]   # each thread's events, in its order
    finally:
        sys.setswitchinterval(old_interval)
