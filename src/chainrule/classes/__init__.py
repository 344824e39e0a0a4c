"""Class mode: one server (`chainrule serve`) for a teacher and many learners.

accounts.py: classes, accounts, passwords, invite and one-time links, sign-in limits.
sessions.py: signed session cookies and CSRF tokens.
report.py: the teacher's view (roster, exercises, quiz questions, timelines, gradebook).
graded_runs.py: the one seam between a submitted run and its result (in process now; a queue can plug in).
The class's data lives in a progress store (chainrule.progress) on its own database: CLASS_DATABASE in the
data folder, or PostgreSQL by URL.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chainrule.progress.store import Clock, ProgressStore

CLASS_DATABASE = "class.sqlite"
ENV_DATABASE = "CHAINRULE_DATABASE"
# The LMS score sender's timing (classes/lti_scores.py), here so that `chainrule serve`'s options can name the
# defaults without loading the sender: seconds between its rounds (--lms-interval), and before a score the LMS
# did not take is sent again (--lms-retry; doubled each time, at most hourly).
LMS_INTERVAL = 2.0
LMS_RETRY = 5.0


def open_class_store(data_dir: str | os.PathLike[str] | None = None, database: str | None = None, *,
                     clock: Clock | None = None, create: bool = True, pool_size: int | None = None) -> ProgressStore:
    """The class database: PostgreSQL when ``database`` (or $CHAINRULE_DATABASE) is a URL (at most
    ``pool_size`` connections from this process), else CLASS_DATABASE in the data folder (``data_dir``,
    $CHAINRULE_DATA_DIR, or the user data folder)."""
    from chainrule.progress import open_store

    url = database or os.environ.get(ENV_DATABASE) or None
    if url:
        return open_store(database=url, clock=clock, pool_size=pool_size)
    return open_store(data_dir or os.environ.get("CHAINRULE_DATA_DIR") or None, clock=clock,
                      file_name=CLASS_DATABASE, create=create)
