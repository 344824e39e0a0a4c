"""Regrade an exercise after its cases changed (a lesson folder updated): each learner's latest (or best) run
graded again through the class's one grading seam (classes/graded_runs.py: the queue and `chainrule worker`
where there is one), a before/after table of who would change standing, then apply or revert.

    regrades = Regrades(store, accounts, runs)
    regrade_id = regrades.start(class_id, "neuron-grads", pick="latest")   # the same again: the same id
    await regrades.grade(class_id, regrade_id)                            # every run graded, once
    regrades.table(class_id, regrade_id)     # {"rows": [{"name", "passed_before", "after", "changes"}], ...}
    regrades.apply(class_id, regrade_id)     # the new verdicts count; the learners' earlier runs do not
    regrades.revert(class_id, regrade_id)    # as it was before applying

Idempotent: starting again with the same cases finds the regrade not reverted (looked for and made in one
transaction, so simultaneous starts make one); each run's key names it
(regrade, a random nonce no learner knows, the run), so grading again finds its job instead of a second,
and a learner cannot make that job beforehand; applying or reverting twice does nothing the second time.
Until applied, a regrade's runs count for nothing (origin 'regrade:<id>', progress/store.origin_of_key) and
are not the learners' latest code; reverted, they count nowhere again. Each keeps the work time of the run it
grades again (a pass before the due date stays on time), never the regrade's own time. "Best" is a passing run if the learner has one (the latest of them),
else the run that passed the most tests (the latest of those).
"""

from __future__ import annotations

import hashlib
import json
import secrets
from typing import Any, NamedTuple

import anyio

from chainrule.classes.accounts import Accounts, ClassError
from chainrule.classes.graded_runs import GradedRuns, Submission
from chainrule.errors import InputError
from chainrule.progress.audit_store import COMMAND_LINE, Actor
from chainrule.progress.dialect import Record
from chainrule.progress.regrade_store import RegradeStore
from chainrule.progress.store import ProgressStore

__all__ = ["PICKS", "Regrades", "cases_fingerprint"]

PICKS = ("latest", "best")
NOT_GRADED = "not-graded"  # the grader gave no verdict (a run that expired in the queue): it takes no part
POLL_SECONDS = 0.25
BUSY_RETRY_SECONDS = 0.5
AT_ONCE = 8  # runs submitted at once (the grader's own turns decide how many run)


def cases_fingerprint(exercise_id: str) -> str:
    """SHA-256 of the exercise's cases as the grader loads them now: the shown ones, and the hidden ones of one
    fixed seed (so a changed hidden rule is a change of cases too)."""
    from chainrule.grading import exercise_cases, get_exercise

    shown = exercise_cases(exercise_id)
    drawn = get_exercise(exercise_id).hidden_cases(0)
    cases = [[case.name, case.args, case.expected, list(case.labels)] for case in (*shown, *drawn)]
    return hashlib.sha256(json.dumps(cases, sort_keys=True, default=repr).encode()).hexdigest()


def hidden_seed(result: Any, regrade_nonce: str, submission: int) -> int:
    """The seed of a run's hidden cases when it is graded again: its first grading's (kept in its result), so
    the regrade judges the same fresh inputs under the new cases; for a run graded before hidden cases existed,
    one drawn from the regrade's secret nonce (the same on every try of this regrade, unknown to the learner)."""
    from chainrule.grading import HIDDEN_SEEDS

    try:
        kept = (json.loads(result) if isinstance(result, str) else result).get("hidden") or {}
        seed = kept.get("seed")
    except (ValueError, AttributeError):
        seed = None
    if isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed < HIDDEN_SEEDS:
        return seed
    digest = hashlib.sha256(f"{regrade_nonce}-{submission}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % HIDDEN_SEEDS


def _tests_passed(result: Any) -> int:
    try:
        tests = json.loads(result).get("tests") if isinstance(result, str) else result.get("tests")
    except (ValueError, AttributeError):
        return 0
    return sum(isinstance(test, dict) and test.get("status") == "pass" for test in tests or [])


class Chosen(NamedTuple):
    """A learner's run to grade again."""

    submission_id: int
    language: str
    source: str
    passed_before: bool


def chosen_runs(runs: list[Record], pick: str) -> dict[int, Chosen]:
    """Each learner's run to grade again (runs: RegradeStore.runs_of_exercise's records)."""
    by_learner: dict[int, list[Record]] = {}
    for row in runs:
        by_learner.setdefault(int(row.learner_id), []).append(row)
    chosen = {}
    for learner, rows in by_learner.items():
        passed = any(row.status == "pass" for row in rows)
        if pick == "latest":
            row = rows[-1]
        else:
            row = max(rows, key=lambda run: (run.status == "pass", _tests_passed(run.result), int(run.id)))
        chosen[learner] = Chosen(int(row.id), row.language, row.source, passed)
    return chosen


class Regrades:
    def __init__(self, store: ProgressStore, accounts: Accounts, runs: GradedRuns) -> None:
        self.store = store
        self.tables = RegradeStore(store)
        self.accounts = accounts
        self.runs = runs

    def start(self, class_id: int, exercise_id: str, pick: str = "latest") -> int:
        from chainrule import lessons

        if pick not in PICKS:
            raise InputError(f"which run to grade again: \"latest\" or \"best\", not {pick!r}", field="pick")
        known = sorted({exercise for lesson in lessons.lesson_ids() for exercise in lessons.exercise_ids(lesson)})
        if exercise_id not in known:
            raise InputError(f"there is no exercise {exercise_id!r}: the exercises are {', '.join(known)}",
                             field="exercise_id")
        cases = cases_fingerprint(exercise_id)
        found = self.tables.open_regrade(class_id, exercise_id, pick, cases)
        if found is not None:
            return found
        last_run, runs = self.tables.runs_of_exercise(class_id, exercise_id)
        chosen = chosen_runs(runs, pick)
        return self.tables.create(class_id, exercise_id, pick, cases, secrets.token_hex(12), last_run,
                                  self.store.now().isoformat(),
                                  [(learner, run.submission_id, run.language, run.passed_before)
                                   for learner, run in sorted(chosen.items())])

    def _regrade(self, class_id: int, regrade_id: int) -> dict:
        found = self.tables.regrade(class_id, regrade_id)
        if found is None:
            raise ClassError(f"there is no regrade {regrade_id} in your class", kind="not-found")
        return found

    async def grade(self, class_id: int, regrade_id: int) -> dict:
        """Grade every run of the regrade not graded yet (waiting for workers where runs are queued)."""
        from chainrule.grading import judged_the_code

        regrade = self._regrade(class_id, regrade_id)
        waiting = [row for row in self.tables.runs(regrade_id) if row.after_status is None]
        limiter = anyio.Semaphore(AT_ONCE)

        async def one(row: Record) -> None:
            async with limiter:
                learner, submission = row.learner_id, row.submission_id
                key = f"regrade-{regrade_id}-{regrade['nonce']}-{submission}"
                # The new run keeps the work time and the hidden cases of the run it grades again.
                seed = hidden_seed(row.result, regrade["nonce"], int(submission))
                run = Submission(int(learner), regrade["exercise_id"], row.language, row.source, key,
                                 accepted=row.at, hidden_seed=seed)
                while True:
                    answer = await self.runs.submit(run)
                    if answer.body.get("verdict") != "busy":
                        break
                    await anyio.sleep(BUSY_RETRY_SECONDS)
            if not answer.pending:
                graded = judged_the_code(answer.body) and answer.body.get("status")
                self.tables.set_after(regrade_id, learner, str(graded or NOT_GRADED))
                return
            job = int(answer.body["job"])
            self.tables.set_job(regrade_id, learner, job)
            while True:
                status = await anyio.to_thread.run_sync(self.runs.status, int(learner), job)
                result = (status or {}).get("result")
                if result is not None:
                    self.tables.set_after(regrade_id, learner,
                                          str(result.get("status")) if result.get("saved") else NOT_GRADED)
                    return
                if status is None:
                    self.tables.set_after(regrade_id, learner, NOT_GRADED)
                    return
                await anyio.sleep(POLL_SECONDS)

        async with anyio.create_task_group() as group:
            for row in waiting:
                group.start_soon(one, row)
        self.tables.set_state(regrade_id, "graded", ("grading",))
        return self.table(class_id, regrade_id)

    def table(self, class_id: int, regrade_id: int) -> dict:
        """The before/after table: per learner, passed before, the verdict with the new cases, and whether
        their standing changes when the regrade is applied."""
        regrade = self._regrade(class_id, regrade_id)
        rows = []
        for row in self.tables.runs(regrade_id):
            passed, after = bool(row.passed_before), row.after_status
            graded = after is not None and after != NOT_GRADED
            rows.append({"learner_id": int(row.learner_id), "name": row.name, "run": int(row.submission_id),
                         "language": row.language, "passed_before": passed, "after": after, "graded": graded,
                         "changes": graded and passed != (after == "pass")})
        return {"id": int(regrade["id"]), "exercise_id": regrade["exercise_id"], "pick": regrade["pick"],
                "state": regrade["state"], "created_at": regrade["created_at"], "rows": rows,
                "changes": sum(row["changes"] for row in rows),
                "waiting": sum(row["after"] is None for row in rows)}

    def list(self, class_id: int) -> list[dict]:
        return [{"id": int(r["id"]), "exercise_id": r["exercise_id"], "pick": r["pick"], "state": r["state"],
                 "created_at": r["created_at"]} for r in self.tables.regrades(class_id)]

    def apply(self, class_id: int, regrade_id: int, *, by: Actor = COMMAND_LINE) -> dict:
        return self._swap(class_id, regrade_id, apply=True, by=by)

    def revert(self, class_id: int, regrade_id: int, *, by: Actor = COMMAND_LINE) -> dict:
        return self._swap(class_id, regrade_id, apply=False, by=by)

    def _swap(self, class_id: int, regrade_id: int, *, apply: bool, by: Actor) -> dict:
        regrade = self._regrade(class_id, regrade_id)
        wanted = "applied" if apply else "reverted"
        if regrade["state"] != wanted and not self.tables.swap(regrade, apply, by):
            needed = "graded (all its runs)" if apply else "applied"
            raise ClassError(f"regrade {regrade_id} is {regrade['state']}: it can be "
                             f"{'applied' if apply else 'reverted'} once it is {needed}", kind="conflict")
        return self.table(class_id, regrade_id)
