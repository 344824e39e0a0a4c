"""A learner's lesson scores into the LMS gradebook: noticed when they change, kept in an outbox, sent until the
LMS has them.

    sender = ScoreSender(lti, LtiServices(lti))
    sender.scan()        # learners whose work changed -> their scores recomputed, each change kept in the outbox
    sender.send_due()    # the outbox's due scores sent (a score the LMS did not take is tried again later)
    sender.start()       # both, every `interval` seconds (`serve --lms-interval`, default 2), in a thread of the
                         # web process (stop() ends it)

A score is the lesson's credit as of the learner's own due date under the class's late policy
(classes/deadlines.py: the sections finished by progress/finished.py's one rule, each late one as the policy
says; the same credit the gradebook and its CSV show) out of its sections; a link to the whole path scores
the sections of every written lesson, and is sent only where the course's teacher chose a column for the path
(Lti.path_column: off until they turn it on). It changes with a pass, an answer, a prediction, an explanation, with a
run graded again (an import, a worker's late result): the scan looks at every table a score is made of,
whoever wrote it; and with a due date, an extension or the late policy moved, a regrade applied or reverted,
a teacher's override or excuse (each raises progress/credit_changes.py's scores_changed, the event this scan
subscribes to: it forgets what the scan last saw of those learners); the outbox keeps a new version only when the score differs, so each change is sent
once.

The outbox (table lti_scores, in the class database on SQLite and PostgreSQL alike) keeps one row per learner
and lesson holding the latest score and the version the LMS acknowledged. Nothing is lost when the LMS is
down: the row stays due, and is tried again after 5 s, 10 s, 20 s, ... at most every hour, until the LMS
takes it. Several web processes share the outbox: each takes the rows it sends (a row held for more than a
minute by a process that died is taken by another). The score's timestamp is when the work was done, not when
it was sent, so an LMS that applies a due date and a late policy judges the work by its own time, however
late the LMS was reachable again. A lesson's gradebook column (line item) is the one the LMS bound to the link
(the launch names it), else the course's column for that lesson (resourceId = the lesson's id), made once:
the LMS is asked for it first, and only one process at a time may make it.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timezone
from typing import Any

from chainrule import lessons
from chainrule.classes import LMS_INTERVAL, LMS_RETRY
from chainrule.classes.deadlines import Deadlines
from chainrule.classes.lti import PATH, Lti, written_lessons
from chainrule.classes.lti_services import LINE_ITEM_SCOPE, LtiServices, score_maximum
from chainrule.classes.remote import RemoteError
from chainrule.progress.store_errors import StoreError

log = logging.getLogger("chainrule.lti")

HELD_FOR = 60.0  # seconds a sender may hold a row before another takes it
RETRY_MAX = 3600.0  # the longest wait between two tries of one score
CANVAS_SUBMISSION = "https://canvas.instructure.com/lti/submission"


def lesson_score(resource: str, credit: dict[str, dict]) -> tuple[float, float, bool] | None:
    """(credit, sections, lesson finished) of a lesson, or of the whole path: the credit as of the learner's
    own due dates under the class's late policy (classes/deadlines.py: with no due date, every section
    finished), with the teacher's overrides and excuses (classes/credit_marks.py), from ``credit``,
    Deadlines.credit's entry of the learner. An excused lesson leaves the path's maximum; its own column
    gets no score (None)."""
    ids = [entry["id"] for entry in written_lessons()] if resource == PATH else [resource]
    found = [credit[lesson] for lesson in ids if lesson in credit]
    excused = [entry for entry in found if entry.get("counted", 1) == 0]
    if resource != PATH and excused:
        return None
    given = sum(entry["credit"] for entry in found)
    completed = len(found) == len(ids) and all(entry["completed"] or entry in excused for entry in found)
    left_out = sum(entry["sections"] for entry in excused)
    return float(given), float(score_maximum(resource) - left_out), completed


def score_time(at: str) -> str:
    """A stored time as AGS wants it: ISO 8601 with milliseconds and a time zone."""
    try:
        moment = datetime.fromisoformat(at)
    except (TypeError, ValueError):
        moment = datetime.now(timezone.utc)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds")


class ScoreSender:
    def __init__(self, lti: Lti, services: LtiServices, *, interval: float = LMS_INTERVAL,
                 retry_base: float = LMS_RETRY, retry_max: float = RETRY_MAX) -> None:
        self.lti = lti
        self.services = services
        self.tables = lti.tables
        self.interval = interval
        self.retry_base = retry_base
        self.retry_max = retry_max
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.after_round: Any = None  # called after each round (the web process reloads what may frame its pages)

    # ---------------------------------------------------------------- noticing changes

    def scan(self) -> int:
        """Recompute the scores of every linked learner whose work changed, or whose credit changed
        (credit_changes.scores_changed); returns how many scores changed."""
        changes = self.tables.work_changes()
        if not changes:
            return 0
        contexts = dict(self.tables.linked_learners())
        learners = [account for account in changes if account in contexts]
        credit = Deadlines(self.lti.store, self.lti.accounts).credit_of(learners)
        resources: dict[int, list[str]] = {}
        changed = 0
        for account in learners:
            context_row = contexts[account]
            if context_row not in resources:  # the path only where the teacher chose its column
                with_path = self.tables.path_column(context_row)
                resources[context_row] = [r for r in self.tables.resources(context_row)
                                          if r == PATH and with_path or r in lessons.lesson_ids()]
            scores = {resource: score for resource in resources[context_row]
                      if (score := lesson_score(resource, credit.get(account, {}))) is not None}
            signature, latest = changes[account]
            changed += len(self.tables.queue_scores(account, scores, latest, signature, self.lti.clock()))
        return changed

    # ---------------------------------------------------------------- sending

    def send_due(self) -> int:
        """Send the due scores; returns how many the LMS took."""
        now = self.lti.clock()
        sent = 0
        for due in self.tables.claim_due_scores(now, now - HELD_FOR):
            account, resource = int(due.account_id), due.resource
            try:
                self._send(account, resource, float(due.score_given), float(due.score_maximum), bool(due.completed),
                           due.work_at)
            except (RemoteError, StoreError) as error:
                wait = min(self.retry_max, self.retry_base * 2 ** int(due.attempts))
                log.warning("the score of account %s for %s was not sent (tried again in %.0f s): %s", account,
                            resource, wait, error)
                self.tables.score_failed(account, resource, self.lti.clock() + wait, str(error))
            else:
                self.tables.score_sent(account, resource, int(due.version))
                sent += 1
        return sent

    def _send(self, account: int, resource: str, given: float, maximum: float, completed: bool, work_at: str) -> None:
        """Send one score to each of its columns; a learner removed from the class has nothing left to send."""
        found = self.lti.accounts.account(account)
        person = self.tables.subject_of(account) if found is not None else None
        context = self.tables.context_of_class(found.class_id) if found is not None and person is not None else None
        if person is None or context is None:
            log.info("the score of account %s for %s is dropped: the account is no longer in an LMS course",
                     account, resource)
            return
        platform = self.lti.platform(int(context.platform_id))
        columns = self._columns(platform, context, resource)
        at = score_time(work_at)
        score = {"userId": person.subject, "scoreGiven": given, "scoreMaximum": maximum,
                 "activityProgress": "Completed" if completed else "InProgress", "gradingProgress": "FullyGraded",
                 "timestamp": at, CANVAS_SUBMISSION: {"submitted_at": at}}
        for column in columns:
            try:
                self.services.send_score(platform, column, score)
            except RemoteError as error:
                if error.status == 404:  # the teacher deleted the column: a new one is made next time
                    self.tables.forget_line_item(int(context.id), column)
                raise

    def _columns(self, platform: Any, context: Any, resource: str) -> list[str]:
        """The course's gradebook columns for the resource, the one made if there is none (once)."""
        context_row, lineitems_url, scopes = int(context.id), context.lineitems_url, context.ags_scopes
        columns = self.tables.line_items(context_row, resource)
        if columns:
            return columns
        if not lineitems_url or LINE_ITEM_SCOPE not in scopes:
            raise RemoteError("the course's launches named no gradebook the tool may add a column to (the LMS "
                              "administrator enables Assignment and Grade Services for the tool)")
        now = self.lti.clock()
        if not self.tables.claim_line_item(context_row, resource, now, now - HELD_FOR):
            raise RemoteError("another process is making this lesson's gradebook column")
        made = None
        try:
            found = self.services.line_items(platform, lineitems_url, resource)
            for url in found[1:]:
                self.tables.add_line_item(context_row, resource, url, now)
            made = found[0] if found else self.services.make_line_item(platform, lineitems_url, resource)
            if not found:
                log.info("made the gradebook column of %s in course %s: %s", resource, context.context_id, made)
        finally:
            self.tables.release_line_item(context_row, resource, made, self.lti.clock())
        return self.tables.line_items(context_row, resource)

    # ---------------------------------------------------------------- the thread

    def round(self) -> None:
        try:
            self.scan()
            self.send_due()
        except StoreError as error:  # the class database is away for a moment: the next round tries again
            log.warning("LMS scores: the class database cannot be used now: %s", error)
        except Exception:  # a bug must not end the thread: the next round tries again, the log has it
            log.exception("LMS scores: a round failed")
        if self.after_round is not None:
            try:
                self.after_round()
            except Exception:
                log.exception("LMS scores: reading the LMS courses' origins failed")

    def _run(self) -> None:
        while not self._stop.is_set():
            self.round()
            self._stop.wait(self.interval)

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="chainrule-lti-scores", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
