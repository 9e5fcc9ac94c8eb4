#!/usr/bin/env python3
"""What a recording's bytes cost the machine to take, per directory.

    scripts/file_write_cost.py [--mib N] [--event-bytes B] [--direct] DIR...

Writes N MiB (default 512) into a new file in each DIR in 256 KiB write(2)
calls, as a recording's worker writes its blocks (lib/recording/
recording_sink.cpp), through the page cache or, with --direct, around it
(O_DIRECT, as `evring record --io direct`), then fsyncs it, and prints one
JSON object per line:

    {"dir": DIR, "mib": N, "direct": false, "cpu_s_per_gib": ...,
     "machine_s_per_gib": ..., "wall_s_per_gib": ..., "cpu_ns_per_event": ...,
     "machine_ns_per_event": ...}

cpu_* is this process's user + system time over the writes and the fsync
(getrusage); machine_* is every core's busy time over the same span
(/proc/stat), which also counts the kernel threads that write dirty pages
back; *_ns_per_event are the same for B bytes (default 136: a 64 B event's
record in a raw recording). The file is removed after; its removal is not
counted. The figures say why `evring record --no-compress` keeps up or not
behind a flat-out writer (docs/recording-format.md, "The page cache's
share").
"""
import argparse
import json
import mmap
import os
import resource
import sys
import time

BLOCK = 256 * 1024


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def machine_seconds() -> float:
    """Busy time of every core: user, nice, system, irq and softirq."""
    with open("/proc/stat") as stat:
        fields = stat.readline().split()[1:]
    busy = sum(int(fields[i]) for i in (0, 1, 2, 5, 6))
    return busy / os.sysconf("SC_CLK_TCK")


def measure(directory: str, mib: int, event_bytes: int, direct: bool) -> dict:
    if not os.path.isdir(directory):
        raise SystemExit(f"file_write_cost: '{directory}' is not a directory")
    block = mmap.mmap(-1, BLOCK)  # page-aligned, as O_DIRECT needs
    block.write(bytes(range(256)) * (BLOCK // 256))
    blocks = mib * 1024 * 1024 // BLOCK
    path = os.path.join(directory, f"evring-write-cost-{os.getpid()}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | (os.O_DIRECT if direct else 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as error:
        raise SystemExit(f"file_write_cost: cannot create '{path}'"
                         f"{' for direct I/O' if direct else ''}: {error.strerror}")
    try:
        cpu0, machine0, wall0 = cpu_seconds(), machine_seconds(), time.monotonic()
        for _ in range(blocks):
            if os.write(fd, block) != BLOCK:
                raise SystemExit(f"file_write_cost: a short write to '{path}'")
        os.fsync(fd)
        wall = time.monotonic() - wall0
        cpu, machine = cpu_seconds() - cpu0, machine_seconds() - machine0
    finally:
        os.close(fd)
        os.unlink(path)
    gib = blocks * BLOCK / 2**30
    events = blocks * BLOCK / event_bytes
    return {"dir": directory, "mib": mib, "direct": direct, "cpu_s_per_gib": round(cpu / gib, 4),
            "machine_s_per_gib": round(machine / gib, 4), "wall_s_per_gib": round(wall / gib, 4),
            "cpu_ns_per_event": round(cpu * 1e9 / events, 2),
            "machine_ns_per_event": round(machine * 1e9 / events, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=512)
    parser.add_argument("--event-bytes", type=int, default=136)
    parser.add_argument("--direct", action="store_true", help="write around the page cache (O_DIRECT)")
    parser.add_argument("dirs", nargs="+")
    args = parser.parse_args()
    if args.mib < 1 or args.event_bytes < 1:
        raise SystemExit("file_write_cost: --mib and --event-bytes must be at least 1")
    for directory in args.dirs:
        print(json.dumps(measure(directory, args.mib, args.event_bytes, args.direct)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
