#!/usr/bin/env python3
"""Did a named reader's second run deliver again exactly what its resume
notice said would come again? (docs/named-readers.md, "Killed")

    came_again.py NOTICE_FILE PAIRS_FILE

NOTICE_FILE: the second run's stderr, with its "reader 'N' resumes ..."
notice and its "N events written again ..." count. PAIRS_FILE: "member
seqno" per event delivered by both runs (member 0 for a ring).

A reader killed with SIGKILL resumes after its last commit. What the previous
run wrote after that commit comes again, all of it: the notice names those
ranges ("the previous run wrote [member M] seqno A..B") and the summary
counts them. What that run was writing when it was killed may come again too,
or not, depending on where the kill landed in the write ("it was stopped
while writing ... up to seqno S"). So the pairs delivered twice must hold
every named range, and beside them only seqnos up to S; none may come three
times. Exits 0, or prints why not and exits 1.
"""
import collections
import re
import sys


def ranges(notice):
    """By member: the commit, the range written after it, the seqno being written when killed."""
    commit, redo, cut = {}, {}, {}
    for m, s in re.findall(r"member (\d+) after seqno (\d+)", notice):
        commit[int(m)] = int(s)
    ring = re.search(r"resumes after seqno (\d+)", notice)
    if ring:
        commit[0] = int(ring.group(1))
    wrote = re.search(r"the previous run wrote (.*?) after that commit", notice)
    if wrote:
        for m, a, b in re.findall(r"(?:member (\d+) )?seqno (\d+)\.\.(\d+)", wrote.group(1)):
            redo[int(m or 0)] = (int(a), int(b))
    writing = re.search(r"stopped while writing (.*?), so events up to", notice)
    if writing:
        for m, s in re.findall(r"(?:member (\d+) )?up to seqno (\d+)", writing.group(1)):
            cut[int(m or 0)] = int(s)
    return commit, redo, cut


def main():
    notice = open(sys.argv[1], encoding="utf-8", errors="replace").read()
    counted = re.search(r"(\d+) events written again that the previous run had written", notice)
    again = int(counted.group(1)) if counted else 0
    seen = collections.Counter()
    with open(sys.argv[2], encoding="utf-8") as f:
        for line in f:
            if line.strip():
                member, seqno = map(int, line.split())
                seen[(member, seqno)] += 1
    twice = {p for p, n in seen.items() if n == 2}
    problems = [f"{p} came {n} times" for p, n in seen.items() if n > 2][:3]
    commit, redo, cut = ranges(notice)
    named = sum(b - a + 1 for a, b in redo.values())
    if named != again:
        problems.append(f"the notice names {named} events written again, the summary counts {again}")
    for m, (a, b) in redo.items():
        missing = [s for s in range(a, b + 1) if (m, s) not in twice]
        if missing:
            problems.append(f"member {m} seqno {missing[0]} was written after the commit and did not come again")
    for m, s in sorted(twice):
        last = max(redo.get(m, (0, 0))[1], cut.get(m, 0))
        if not commit.get(m, -1) < s <= last:
            problems.append(f"member {m} seqno {s} came again, outside what the notice says may")
            break
    extra = len(twice) - again
    if problems:
        print(f"{len(twice)} events twice, {again} reported written again: " + "; ".join(problems))
        return 1
    print(f"{again} events delivered again, as reported" +
          (f", and {extra} of those the killed run was writing" if extra else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
