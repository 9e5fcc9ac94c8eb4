#!/usr/bin/env python3
"""The soak's accounting (scripts/soak runs it; not a test of its own).

Reads the soak's manifest (JSON): for each ring, its writer incarnations in
order, each with the time it was started at and what it committed (per member
for a set; from the producer's own "wrote N" line at a clean exit, from the
ring file's last_seqno after a SIGKILL); and for each reader, the files it
wrote, in order (stdout: jsonl events; stderr: notices and gap lines).

An event belongs to the incarnation whose start precedes its timestamp (the
incarnations of one name never overlap: the soak starts a writer only once the
last one is dead). A gap line "(member M seqno A..B)" belongs to the first
incarnation, at or after the one the previous gap went to, whose received
events it does not overlap and that committed A (or A-1: a seqno reserved by
a killed writer is reported as never committed just after the last one).

Every committed seqno 1..C of every incarnation must be received exactly once
or lie in exactly one gap, in every reader (a gap line, or the notice of a
start at a seqno no longer held). A reader marked "exact" must
report no gap at all (every event received once). A named reader
("redelivery": docs/named-readers.md) may receive an event twice when a
restart said it comes again: "the previous run wrote seqno A..B after that
commit: those events come again", or "stopped while writing up to seqno C"
(after "resumes after seqno L": L+1..C); each such seqno once more, no other.
Prints a table; exits 1 on any unaccounted, duplicated or doubly accounted event.
"""
import bisect
import json
import re
import sys
from collections import Counter, defaultdict

from resume_notice import may_come_again

# A start at a seqno no longer held (a resumed reader or recorder) says what it
# skips: "seqno A is no longer in ring file '...'; starting at the oldest, B" is A..B-1.
START_PAST = re.compile(r"^evring: seqno (\d+) is no longer in .*; starting at the oldest, (\d+)$")
GAP = re.compile(r"\((?:member (\d+) )?seqno (\d+)(?:\.\.(\d+))?\)|^evring: (?:member (\d+) )?seqno (\d+)(?:\.\.(\d+))? (?:was|were) never committed")


def read_events(path, tag=False):
    """(member, seqno, nanos) of each complete jsonl line; a torn last line (SIGKILL) is skipped."""
    out = []
    with open(path, errors="replace") as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines):
        if not line:
            continue
        try:
            e = json.loads(line)
        except ValueError:
            if i >= len(lines) - 2:
                continue  # torn by a SIGKILL mid-line
            raise SystemExit(f"soak: {path}:{i + 1}: not json: {line[:80]}")
        nanos = e.get("nanos", e.get("record_epoch_nanos"))
        seqno = e["seqno"]
        if tag:  # a mirror's event: the source seqno is in content_ext[3] (mirror --seqno-tag 3)
            seqno = e["content_ext"][3]
        out.append((e.get("member", 0), seqno, nanos))
    return out


def read_gaps(path):
    gaps = []
    with open(path, errors="replace") as f:
        for line in f:
            past = START_PAST.search(line.rstrip("\n"))
            if past and int(past.group(2)) > int(past.group(1)):
                gaps.append((0, int(past.group(1)), int(past.group(2)) - 1, line.strip()))
                continue
            m = GAP.search(line)
            if not m or WRITTEN_AGAIN.search(line):  # a named reader's count of what came again: no gap
                continue
            g = m.groups()
            member, first, last = (g[0], g[1], g[2]) if g[1] else (g[3], g[4], g[5])
            first = int(first)
            gaps.append((int(member or 0), first, int(last) if last else first, line.strip()))
    return gaps


RESUMES = re.compile(r"resumes after seqno (\d+) ")
WRITTEN_AGAIN = re.compile(r"events written again that the previous run had written")


def read_redelivered(path):
    """Counter of seqnos a named reader's restart said may come again (resume_notice.py)."""
    allowed = Counter()
    with open(path, errors="replace") as f:
        for line in f:
            if RESUMES.search(line):
                allowed.update(may_come_again(line))
    return allowed


def account(ring, reader):
    starts = [inc["start_ns"] for inc in ring["incarnations"]]
    n = len(starts)
    received = [defaultdict(list) for _ in range(n)]  # incarnation -> member -> seqnos
    early = 0
    for path in reader["out"]:
        for member, seqno, nanos in read_events(path):
            k = bisect.bisect_right(starts, nanos) - 1
            if k < 0:
                early += 1
                continue
            received[k][member].append(seqno)
    got = [{m: set(v) for m, v in r.items()} for r in received]
    gapped = [defaultdict(set) for _ in range(n)]
    unplaced = []
    pointer = 0
    for path in reader["err"]:
        for member, first, last, text in read_gaps(path):
            span = set(range(first, last + 1))
            for k in range(pointer, n):
                committed = ring["incarnations"][k]["committed"].get(str(member), 0)
                if first > committed + 1 or span & got[k].get(member, set()) or span & gapped[k][member]:
                    continue
                gapped[k][member] |= span
                pointer = k
                break
            else:
                unplaced.append(text)
    allowed = Counter()
    if reader.get("redelivery"):
        for path in reader["err"]:
            allowed += read_redelivered(path)
    rows, bad, redelivered = [], 0, 0
    for k, inc in enumerate(ring["incarnations"]):
        for member_text, committed in sorted(inc["committed"].items()):
            member = int(member_text)
            seqnos = received[k].get(member, [])
            dup = 0
            for seqno, times in Counter(seqnos).items():
                extra = times - 1
                if extra > 0 and allowed[seqno] > 0:  # said to come again: once, from one restart
                    use = min(extra, allowed[seqno])
                    allowed[seqno] -= use
                    redelivered += use
                    extra -= use
                dup += max(0, extra)
            seen = got[k].get(member, set())
            lost = gapped[k][member]
            want = set(range(1, committed + 1))
            missing = len(want - seen - lost)
            both = len(seen & lost)
            beyond = len(seen - want)
            problems = dup + missing + both + beyond + (len(lost & want) if reader.get("exact") else 0)
            bad += problems
            rows.append((k, member, committed, len(seen & want), len(lost & want), dup, missing, both, beyond))
    return rows, bad, unplaced, early, redelivered


def mirror_check(stream, mirror):
    a = Counter((s, t) for _, s, t in (e for p in stream["out"] for e in read_events(p)))
    b = Counter((s, t) for _, s, t in (e for p in mirror["out"] for e in read_events(p, tag=True)))
    return sum((a - b).values()), sum((b - a).values()), sum(v - 1 for v in b.values() if v > 1), sum(b.values())


def main():
    manifest = json.load(open(sys.argv[1]))
    total_bad = 0
    print(f"{'reader':<10} {'ring':<5} {'inc':>3} {'mbr':>3} {'committed':>10} {'received':>10} {'lost':>8} "
          f"{'dup':>4} {'missing':>7} {'both':>4} {'beyond':>6}")
    for reader in manifest["readers"]:
        ring = manifest["rings"][reader["ring"]]
        rows, bad, unplaced, early, redelivered = account(ring, reader)
        total_bad += bad
        for k, member, committed, got, lost, dup, missing, both, beyond in rows:
            print(f"{reader['name']:<10} {reader['ring']:<5} {k:>3} {member:>3} {committed:>10} {got:>10} {lost:>8} "
                  f"{dup:>4} {missing:>7} {both:>4} {beyond:>6}")
        if redelivered:
            print(f"  {reader['name']}: {redelivered} events received again, each inside a tail its restart said comes again")
        if reader.get("exact"):
            print(f"  {reader['name']}: exact (no gap allowed): "
                  + ("every committed event received once" if bad == 0 else "NOT exact"))
        for text in unplaced:
            print(f"  {reader['name']}: a gap line fits no incarnation: {text}")
        if early:
            print(f"  {reader['name']}: {early} events older than the first writer (clock?)")
            total_bad += early
    if "mirror" in manifest:
        stream = next(r for r in manifest["readers"] if r["name"] == "stream")
        missing, extra, dup, held = mirror_check(stream, manifest["mirror"])
        print(f"mirror: {held} events held; of the stream's events {missing} missing, {extra} not in the stream, "
              f"{dup} duplicated")
        total_bad += missing + extra + dup
    print("accounting:", "every committed event received exactly once or counted lost, in every reader"
          if total_bad == 0 else f"{total_bad} events unaccounted, duplicated or doubly accounted")
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main())
