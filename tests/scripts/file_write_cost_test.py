#!/usr/bin/env python3
"""scripts/file_write_cost.py, whose figures docs/recording-format.md ("The
page cache's share") and scripts/bench-record quote: one JSON object per
directory whose times agree with each other and with the bytes written, the
file removed after, --direct where the kernel takes O_DIRECT, and a clear
error for a directory that is not one."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "file_write_cost.py")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=120)


def takes_direct(directory):
    probe = os.path.join(directory, "probe")
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o600))
    except OSError:
        return False
    finally:
        if os.path.exists(probe):
            os.unlink(probe)
    return True


class FileWriteCost(unittest.TestCase):
    def check(self, line, directory, mib, direct):
        figures = json.loads(line)
        self.assertEqual(figures["dir"], directory)
        self.assertEqual(figures["mib"], mib)
        self.assertEqual(figures["direct"], direct)
        for key in ("cpu_s_per_gib", "machine_s_per_gib", "wall_s_per_gib", "cpu_ns_per_event", "machine_ns_per_event"):
            self.assertGreaterEqual(figures[key], 0, key)
        self.assertGreater(figures["wall_s_per_gib"], 0)
        # 136 B of a GiB: the per-event figure is the per-GiB one scaled.
        self.assertAlmostEqual(figures["cpu_ns_per_event"], figures["cpu_s_per_gib"] * 136 / 2**30 * 1e9,
                               delta=0.02 * figures["cpu_ns_per_event"] + 0.05)
        self.assertEqual(os.listdir(directory), [], "the file is removed after")

    def test_one_object_per_directory(self):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            done = run("--mib", "4", a, b)
            self.assertEqual(done.returncode, 0, done.stderr)
            lines = done.stdout.splitlines()
            self.assertEqual(len(lines), 2)
            self.check(lines[0], a, 4, False)
            self.check(lines[1], b, 4, False)

    def test_direct_io_where_the_kernel_takes_it(self):
        with tempfile.TemporaryDirectory(dir="/var/tmp" if os.path.isdir("/var/tmp") else None) as d:
            if not takes_direct(d):
                self.skipTest(f"{d} does not take O_DIRECT")
            done = run("--mib", "4", "--direct", d)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.check(done.stdout.strip(), d, 4, True)

    def test_a_missing_directory_is_named(self):
        done = run("--mib", "1", "/nonexistent/evring-dir")
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("'/nonexistent/evring-dir' is not a directory", done.stderr)

    def test_bad_sizes_are_refused(self):
        done = run("--mib", "0", "/tmp")
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("--mib and --event-bytes must be at least 1", done.stderr)


if __name__ == "__main__":
    unittest.main()
