"""What a named reader's resume notice says will come again
(docs/named-readers.md, "Killed"), read by scripts/soak_account.py and
tests/support/came_again.py alike.

A reader killed with SIGKILL resumes after its last commit. The notice names,
per member (0 for a ring), the commit ("resumes after seqno C", "member M
after seqno C"), what the previous run wrote after it ("the previous run
wrote [member M] seqno A..B after that commit"), all of which comes again,
and what it was writing when killed ("it was stopped while writing [member
M] up to seqno S, so events up to ..."), which may come again or not.
"""
import re


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


def may_come_again(notice, member=0):
    """The seqnos of `member` the notice allows to come again once more: what
    was written after the commit, then what was being written beyond it."""
    commit, redo, cut = ranges(notice)
    if member not in commit:
        return []
    end = commit[member]
    allowed = []
    if member in redo:
        first, end = redo[member]
        allowed += range(first, end + 1)
    allowed += range(end + 1, cut.get(member, end) + 1)
    return allowed
