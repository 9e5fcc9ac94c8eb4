#!/usr/bin/python3
"""Python binding throughput: per-event iteration and read_batch.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/python/bench_python.py [--events N] [--size BYTES]

Writes N events (default 1,000,000, 32-byte payloads) into a tmpfs ring of
2^20 descriptors from Python, then reads them back: replay() one Event at a
time (touching seqno and payload), read_batch() descriptors only, and
read_batch() with payloads. Each figure is the best of three runs, in
events (descriptors) per second of wall-clock time and per second of this
process's CPU time (the second is what the code does with a core to itself;
on a machine shared with other work the first falls with the load).
docs/python.md has the figures.
"""
import argparse
import os
import time

import evring


def best_of(runs, fn):
    """(wall-clock rate, CPU-time rate), each the best of `runs`."""
    wall = cpu = 0.0
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        count = fn()
        wall = max(wall, count / (time.perf_counter() - start))
        cpu = max(cpu, count / max(time.process_time() - start_cpu, 1e-9))
    return wall, cpu


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
        def write():
            for i in range(args.events):
                writer.record(7, payload, flow=(i & 7,))
            return args.events
        write_rate = best_of(1, write)

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

        iterate_only()  # warm the pages up once
        results = {
            "write (record)": write_rate,
            "replay, touching seqno and payload": best_of(3, iterate),
            "replay, bare loop": best_of(3, iterate_only),
            "read_batch, descriptors": best_of(3, batches(False)),
            "read_batch, descriptors + payloads": best_of(3, batches(True)),
        }
        assert reader.lost == 0, reader.lost
    load = os.getloadavg()[0]
    print(f"{args.events} events of {args.size} bytes, ring 2^20 descriptors on /dev/shm, evring {evring.__version__}, "
          f"load average {load:.1f} on {os.cpu_count()} cpus")
    print(f"  {'':40s} {'wall':>10s} {'cpu time':>10s}")
    for name, (wall, cpu) in results.items():
        print(f"  {name:40s} {wall / 1e6:8.2f} M/s {cpu / 1e6:6.2f} M/s")


if __name__ == "__main__":
    main()
