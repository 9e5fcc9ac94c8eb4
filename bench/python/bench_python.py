#!/usr/bin/python3
"""Python binding throughput: per-event iteration and read_batch.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/python/bench_python.py [--events N] [--size BYTES]

Writes N events (default 1,000,000, 32-byte payloads) into a tmpfs ring of
2^20 descriptors from Python, then reads them back: replay() one Event at a
time (touching seqno and payload), read_batch() descriptors only, and
read_batch() with payloads. Each figure is the best of three runs, in
events (descriptors) per second. docs/python.md has the figures.
"""
import argparse
import os
import time

import evring


def best_of(runs, fn):
    best = None
    for _ in range(runs):
        start = time.perf_counter()
        count = fn()
        rate = count / (time.perf_counter() - start)
        best = rate if best is None or rate > best else best
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=32, help="payload bytes per event")
    parser.add_argument("--batch", type=int, default=65536, help="read_batch size")
    args = parser.parse_args()

    path = f"/dev/shm/evring-pybench-{os.getpid()}"
    payload = bytes(range(256)) * (args.size // 256 + 1)
    payload = payload[:args.size]
    with evring.create(path, descriptor_shift=20, payload_shift=28) as writer:
        start = time.perf_counter()
        for i in range(args.events):
            writer.record(7, payload, flow=(i & 7,))
        write_rate = args.events / (time.perf_counter() - start)

        reader = evring.open(path)

        def iterate():
            n = 0
            total = 0
            for event in reader.replay(start="oldest"):
                n += 1
                total += len(event.payload) + event.seqno
            return n

        def iterate_only():
            n = 0
            for _ in reader.replay(start="oldest"):
                n += 1
            return n

        def batches(payloads):
            def run():
                reader.seek("oldest")
                n = 0
                while True:
                    batch = reader.read_batch(args.batch, payloads=payloads)
                    n += len(batch)
                    if batch.stopped != "full":
                        return n
            return run

        results = {
            "write (record)": write_rate,
            "replay, one Event each": iterate_only(),
            "replay, touching seqno and payload": best_of(3, iterate),
            "replay, bare loop": best_of(3, iterate_only),
            "read_batch, descriptors": best_of(3, batches(False)),
            "read_batch, descriptors + payloads": best_of(3, batches(True)),
        }
        del results["replay, one Event each"]
        assert reader.lost == 0, reader.lost
    print(f"{args.events} events of {args.size} bytes, ring 2^20 descriptors on /dev/shm, evring {evring.__version__}")
    for name, rate in results.items():
        print(f"  {name:40s} {rate / 1e6:8.2f} M/s")


if __name__ == "__main__":
    main()
