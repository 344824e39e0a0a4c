"""The one event of a change to credit: "scores changed for these learners", and its one subscriber.

A learner's work changing (a run, an answer, a prediction) is seen by the LMS score scan by itself: it compares
a signature of the work tables with the one it last saw (lti_store.work_changes). A change that moves credit
without new work (a due date, an extension, the late policy, a teacher's override or excuse, a regrade applied
or reverted, the whole path's gradebook column turned on) leaves that signature as it was, so it is announced
by name, inside the transaction of the change:

    audited_write(store, by, class_id, work)   # every audited change to credit raises it for the learners its
                                               # entries name (the whole class for an entry that names none)
    scores_changed(conn, class_id=7)           # raised by hand where the change is not audited
    scores_changed(conn, learners=[12, 14])

Its subscriber is the LMS score scan (classes/lti_scores.py's ScoreSender.scan): the event forgets what the scan
last saw of those learners (table lti_work_seen), so its next round computes their scores again and a score
that differs goes to the outbox once, then to the LMS. The link is a row of the class database, not a call in
memory: the change is often made by another process (`chainrule class` on the command line, another web
process) than the one whose thread sends scores, and it commits or rolls back with the change itself.
"""

from __future__ import annotations

from typing import Iterable

from chainrule.progress.connection import Connection

__all__ = ["scores_changed"]


def scores_changed(conn: Connection, *, class_id: int | None = None, learners: Iterable[int] = ()) -> None:
    """Inside a write that changes credit: the LMS score scan computes these learners' scores again (every
    learner of ``class_id``, and each of ``learners``)."""
    if class_id is not None:
        conn.execute("DELETE FROM lti_work_seen WHERE account_id IN "
                     "(SELECT id FROM accounts WHERE class_id = ? AND role = 'learner')", (int(class_id),))
    for learner in sorted({int(learner) for learner in learners}):
        conn.execute("DELETE FROM lti_work_seen WHERE account_id = ?", (learner,))
