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
times. Exits 0, or prints why not and exits 1. The notice is read by
scripts/resume_notice.py, as the soak's accounting reads it.
"""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from resume_notice import ranges  # noqa: E402  (the notice's one reading)


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
