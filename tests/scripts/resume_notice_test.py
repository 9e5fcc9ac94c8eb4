#!/usr/bin/env python3
"""scripts/resume_notice.py, which came_again.py and the soak's accounting
share: a named reader's resume notice read for a ring and for a ring set, in
the words record.cpp and the named reader print (docs/named-readers.md,
"Killed"), and what it allows to come again."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from resume_notice import may_come_again, ranges  # noqa: E402

RING = ("evring: reader 'r' resumes after seqno 100; the previous run wrote seqno 101..150 after that "
        "commit: those events come again; it was stopped while writing up to seqno 160, so events up "
        "to those may come again too")
SET = ("evring: reader 's' resumes after member 0 after seqno 10, member 1 after seqno 20; the previous "
       "run wrote member 0 seqno 11..12, member 1 seqno 21..25 after that commit: those events come "
       "again; it was stopped while writing (member 0 up to seqno 15, member 1 up to seqno 25), so "
       "events up to those may come again too")


class ResumeNotice(unittest.TestCase):
    def test_a_ring_notice_names_the_commit_the_rewritten_range_and_the_cut(self):
        self.assertEqual(ranges(RING), ({0: 100}, {0: (101, 150)}, {0: 160}))

    def test_a_ring_allows_the_rewritten_range_then_up_to_the_cut(self):
        self.assertEqual(may_come_again(RING), list(range(101, 161)))

    def test_a_set_notice_is_read_per_member(self):
        commit, redo, cut = ranges(SET)
        self.assertEqual(commit, {0: 10, 1: 20})
        self.assertEqual(redo, {0: (11, 12), 1: (21, 25)})
        self.assertEqual(cut, {0: 15, 1: 25})
        self.assertEqual(may_come_again(SET, 0), [11, 12, 13, 14, 15])
        self.assertEqual(may_come_again(SET, 1), [21, 22, 23, 24, 25])

    def test_a_clean_resume_allows_nothing(self):
        clean = "evring: reader 'r' resumes after seqno 7"
        self.assertEqual(ranges(clean), ({0: 7}, {}, {}))
        self.assertEqual(may_come_again(clean), [])

    def test_a_kill_between_commits_allows_only_what_was_being_written(self):
        cut = "evring: reader 'r' resumes after seqno 7; it was stopped while writing up to seqno 9, so events up to"
        self.assertEqual(may_come_again(cut), [8, 9])

    def test_a_line_without_a_notice_allows_nothing(self):
        self.assertEqual(may_come_again("evring: recorded 5 events"), [])


if __name__ == "__main__":
    unittest.main()
