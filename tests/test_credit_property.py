"""One property of credit (issue 39 item 6), on SQLite and PostgreSQL: for any order in which runs are graded,
any delay of the queue, any regrade applied or reverted, any re-save, and any sequence of extensions, due
dates (the lesson's and an exercise's), time zones and late policies, every learner's credit equals the rule
docs/classroom.md states ("How credit is counted"), applied by this test itself to the times of their work.

What a learner does is a timeline, played in time order on the store's clock: predictions, quiz answers,
explanations (and re-saves of each), code saved, runs sent to the queue (progress/run_jobs.py, the queue of a
class in PostgreSQL; it keeps its rows in SQLite alike) and graded by a worker's turn at a later moment, in the
queue's own order. Then a teacher's regrade of one exercise, maybe applied, maybe reverted (the grader's new
verdicts are drawn; the real sandbox grades in tests/test_work_times.py), then the dates. The rule, as the docs
state it: a piece of work counts from when it was first done (a run: from when the server accepted it; a
regrade's run: the time of the run it grades); a piece is due at its exercise's date, else its lesson's, or the
learner's extension when that is later; a section is as late as the latest piece that finishes it (the reading
sections: the first piece of the lesson; the recap: every piece); on time earns 1, late earns nothing under
no-credit or 1 less the percentage per day begun, never below 0. Only the runs that count are the Exercises
table's runs: a regrade not applied, or reverted, counts nowhere."""

from __future__ import annotations

import itertools
import math
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chainrule import lessons
from chainrule.classes import CLASS_DATABASE
from chainrule.classes.accounts import Accounts
from chainrule.classes.deadlines import Deadlines
from chainrule.classes.graded_runs import InProcessRuns, keep_graded_job
from chainrule.classes.regrade import Regrades
from chainrule.classes.report import ClassReport
from chainrule.progress import open_store
from chainrule.progress.class_store import account_exists
from chainrule.progress.run_jobs import RunJobs
from class_process import PASSWORD, run_coroutine
from class_world import FAST_HASHER

LESSON = "backprop"
SHAPE = lessons.lesson_shape(LESSON)
# backprop's sections (docs/classroom.md, "The teacher's numbers"): 01-03 reading, then the work, then the recap.
READING, WORK_SECTIONS, RECAP = ("01", "02", "03"), {"04": "predictions", "05": "exercises", "06": "quiz",
                                                      "07": "explanation"}, "08"
assert SHAPE["sections"] == [*READING, *WORK_SECTIONS, RECAP]
BASE = datetime(2025, 3, 10, 12, 0, tzinfo=timezone.utc)
LOCAL_BASE = datetime(2025, 3, 10, 12, 0)  # due dates: wall-clock times of the class's zone around BASE
DAY = timedelta(days=1)
YEARS = 10 * 365 * 86400.0  # the queue's own deadline: no run expires here, however long it waits
ZONES = ("UTC", "Europe/Berlin", "America/New_York")

minutes = st.integers(-3 * 1440, 3 * 1440)  # a moment around BASE
later = st.integers(0, 3 * 1440)  # a delay
wall_clock = st.integers(-3 * 24, 3 * 24).map(lambda hours: (LOCAL_BASE + timedelta(minutes=37 * hours))
                                              .strftime("%Y-%m-%d %H:%M"))
part = st.sampled_from(["all", "all", "some", "none"])


@st.composite
def pieces(draw, names: list[str]) -> dict[str, list[int]]:
    """For each piece drawn: its saves (the first, then re-saves later)."""
    how = draw(part)
    chosen = names if how == "all" else [n for n in names if how == "some" and draw(st.booleans())]
    found = {}
    for name in chosen:
        first = draw(minutes)
        found[name] = [first, *(first + delay for delay in draw(st.lists(later, max_size=2)))]
    return found


@st.composite
def learner(draw) -> dict:
    explanation = []
    if draw(part) != "none":
        first = draw(minutes)
        explanation = [(first, draw(st.booleans()))] + [(first + delay, draw(st.booleans()))
                                                        for delay in draw(st.lists(later, max_size=2))]
    runs = []  # (exercise, accepted, queue delay, verdict)
    how = draw(part)
    for exercise in SHAPE["exercises"]:
        if how == "none" or (how == "some" and draw(st.booleans())):
            continue
        for _ in range(draw(st.integers(1, 2))):
            runs.append((exercise, draw(minutes), draw(st.integers(0, 2 * 1440)),
                         draw(st.sampled_from(["pass", "pass", "fail"]))))
    code = [(exercise, draw(minutes)) for exercise in SHAPE["exercises"] if draw(st.integers(0, 3)) == 0]
    return {"predictions": draw(pieces(SHAPE["predictions"])), "answers": draw(pieces(SHAPE["quiz"])),
            "explanation": explanation, "runs": runs, "code": code}


dates = st.one_of(
    st.tuples(st.just("due"), st.sampled_from(["", *SHAPE["exercises"]]), st.none() | wall_clock),
    st.tuples(st.just("extend"), st.integers(0, 1), st.none() | wall_clock),
    st.tuples(st.just("policy"), st.sampled_from(ZONES), st.sampled_from(["no-credit", "10", "25", "40"])))
regrade = st.none() | st.fixed_dictionaries({
    "exercise": st.sampled_from(SHAPE["exercises"]), "after": st.integers(1, 3 * 1440),
    "verdicts": st.tuples(st.sampled_from(["pass", "fail"]), st.sampled_from(["pass", "fail"])),
    "ends": st.sampled_from(["graded", "applied", "reverted"])})


class Clock:
    def __init__(self) -> None:
        self.now = BASE

    def __call__(self) -> datetime:
        return self.now


class ScriptedRuns(InProcessRuns):
    """The class's graded runs in this process, the grader's verdict given by the test: the run is kept by
    InProcessRuns's own keep (its work time, its origin), only the sandbox is left out."""

    def __init__(self, store, verdicts: dict[int, str]) -> None:
        super().__init__(store.for_learner, claim_for=account_exists)
        self.verdicts = verdicts

    async def submit(self, run, still_wanted=None):
        return self.keep(run, {"status": self.verdicts[run.learner], "verdict": "scripted", "tests": []})


@pytest.fixture
def place(store_place):
    """One class store per backend for every example (a new class each example keeps them apart)."""
    clock = Clock()
    store = open_store(**store_place("class"), clock=clock, fuzzing=False, file_name=CLASS_DATABASE)
    yield store, clock, Accounts(store, hasher=FAST_HASHER)
    store.close()


CLASSES = itertools.count(1)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(people=st.lists(learner(), min_size=1, max_size=2), regraded=regrade, first_due=wall_clock,
       changes=st.lists(dates, max_size=5))
def test_credit_is_the_documented_rule_applied_to_the_times_of_the_work(place, people, regraded, first_due,
                                                                        changes):
    store, clock, accounts = place
    made = accounts.create_class(f"Class {next(CLASSES)}")
    ids = [run_coroutine(accounts.join, made.invite_token, f"Learner {n}", PASSWORD).id for n in range(len(people))]
    jobs = RunJobs(store, deadline_seconds=YEARS, max_open=1000)
    # An example that failed (while Hypothesis shrinks) may have left runs waiting: they are not this one's.
    store.database.write(lambda conn: conn.execute("DELETE FROM grading_jobs WHERE state IN ('queued', 'running')"))

    events = timeline(ids, people)
    kept = play(events, store, clock, jobs)
    counted = list(kept)
    if regraded is not None:
        clock.now = BASE + timedelta(minutes=max(t for _, (t, *_) in events) + regraded["after"]) if events else BASE
        counted = regrade(store, accounts, made.class_id, ids, regraded, kept)

    deadlines = Deadlines(store, accounts)
    settings_now = {"zone": "UTC", "late": "no-credit", "due": {"": first_due}, "extensions": {}}
    deadlines.set_due(made.class_id, LESSON, first_due)
    for change in [("check",), *changes]:
        change_dates(deadlines, made.class_id, ids, change, settings_now)
        found = deadlines.credit(made.class_id)
        for who, work in zip(ids, people):
            expected = rule(events, who, kept, counted, settings_now)
            got = found[who][LESSON]
            assert (round(got["credit"] * 100), got["late_sections"]) == expected, (
                f"learner {who}, dates {settings_now}, their work {work}, regrade {regraded}, runs kept {kept}")

    # The Exercises table counts the runs that count, and nothing of a regrade that does not.
    table = {row["exercise_id"]: row["runs"] for row in ClassReport(store, accounts).overview(made.class_id)["exercises"]
             if row["exercise_id"] in SHAPE["exercises"]}
    assert table == {exercise: sum(run[1] == exercise for run in counted) for exercise in SHAPE["exercises"]}


def timeline(ids: list[int], people: list[dict]) -> list[tuple[int, tuple]]:
    """The learners' work in time order (ties: in the order drawn), numbered: a run's grading is a worker's
    turn at its moment (the queue decides which run it takes)."""
    events: list[tuple] = []
    for who, work in zip(ids, people):
        for key, saves in work["predictions"].items():
            events += [(t, "predict", who, key) for t in saves]
        for question, saves in work["answers"].items():
            events += [(t, "answer", who, question) for t in saves]
        events += [(t, "explain", who, written) for t, written in work["explanation"]]
        events += [(t, "code", who, exercise) for exercise, t in work["code"]]
        for exercise, accepted, delay, verdict in work["runs"]:
            events += [(accepted, "submit", who, (exercise, verdict)), (accepted + delay, "grade", who, None)]
    return sorted(enumerate(events), key=lambda item: (item[1][0], item[1][1] == "grade", item[0]))


def play(events: list[tuple[int, tuple]], store, clock, jobs: RunJobs) -> list[tuple]:
    """Do the work at its times; the runs, as the rule sees them: (learner, exercise, accepted, verdict) in
    the order they were kept."""
    verdict_of, accepted_of, graded_order = {}, {}, []
    for turn, (t, kind, who, what) in events:
        clock.now = BASE + timedelta(minutes=t)
        view = store.for_learner(who)
        if kind == "predict":
            view.save_prediction(LESSON, what, float(turn), False)
        elif kind == "answer":
            view.answer_question(LESSON, what, str(turn), False)
        elif kind == "explain":
            view.save_explanation(LESSON, f"version {turn}" if what else "", [])
        elif kind == "code":
            view.save_code(what, "python", f"# saved {turn}")
        elif kind == "submit":
            job, queued = jobs.submit(who, what[0], "python", f"# run {turn}", f"run-{turn}")
            assert queued
            verdict_of[job], accepted_of[job] = (who, *what), clock.now
        else:
            run = jobs.start(turn, "worker")
            assert run is not None  # as many turns as runs sent by now: one is always waiting
            keep_graded_job(jobs, run, {"status": verdict_of[run.id][2], "tests": []})
            graded_order.append(run.id)
    return [(verdict_of[job][0], verdict_of[job][1], accepted_of[job], verdict_of[job][2]) for job in graded_order]


def regrade(store, accounts, class_id: int, ids: list[int], regraded: dict, kept: list[tuple]) -> list[tuple]:
    """Regrade the exercise (applied, reverted or left), now; the runs that count afterwards."""
    exercise = regraded["exercise"]
    new = {who: regraded["verdicts"][n] for n, who in enumerate(ids)}
    runs = ScriptedRuns(store, new)
    try:
        regrades = Regrades(store, accounts, runs)
        number = regrades.start(class_id, exercise)
        run_coroutine(regrades.grade, class_id, number)
        if regraded["ends"] in ("applied", "reverted"):
            regrades.apply(class_id, number)
        if regraded["ends"] == "reverted":
            regrades.revert(class_id, number)
    finally:
        runs.close()
    if regraded["ends"] != "applied":
        return list(kept)
    # Each learner's latest run of the exercise graded again, at that run's time; their runs of it before
    # are set aside.
    counted = [run for run in kept if run[1] != exercise]
    for who in ids:
        theirs = [run for run in kept if run[:2] == (who, exercise)]
        if theirs:
            counted.append((who, exercise, theirs[-1][2], new[who]))
    return counted


def change_dates(deadlines: Deadlines, class_id: int, ids: list[int], change: tuple, settings_now: dict) -> None:
    """One drawn change of the dates (a due date, an extension, the late policy), made and noted."""
    if change[0] == "due":
        deadlines.set_due(class_id, LESSON, change[2], exercise=change[1] or None)
        settings_now["due"][change[1]] = change[2]
    elif change[0] == "extend":
        who = ids[change[1] % len(ids)]
        deadlines.extend(class_id, who, LESSON, change[2])
        settings_now["extensions"][who] = change[2]
    elif change[0] == "policy":
        deadlines.set_policy(class_id, time_zone_name=change[1], late=change[2])
        settings_now["zone"], settings_now["late"] = change[1], change[2]


def rule(events: list, who: int, kept: list, counted: list, found: dict) -> tuple[int, int]:
    """(credit in hundredths, sections late) of one learner by docs/classroom.md's rule, from the times of
    their work."""
    zone = ZoneInfo(found["zone"])

    def due_of(exercise: str = "") -> datetime | None:
        base = found["due"].get(exercise) or found["due"].get("")
        extension = found["extensions"].get(who)
        if extension is not None and (base is None or extension > base):
            base = extension
        return None if base is None else datetime.strptime(base, "%Y-%m-%d %H:%M").replace(tzinfo=zone)

    def late(moment: datetime, due: datetime | None) -> int:
        return 0 if due is None or moment <= due else math.ceil((moment - due) / DAY)

    first = first_times(events, who, kept, counted)
    days = {key: late(moment, due_of(key[1] if key[0] in ("pass", "tried") else "")) for key, moment in first.items()}

    needs = {"04": [("predict", key) for key in SHAPE["predictions"]],
             "05": [("pass", exercise) for exercise in SHAPE["exercises"]],
             "06": [("answer", question) for question in SHAPE["quiz"]], "07": [("explain", "")]}
    sections: dict[str, int] = {}
    for number, keys in needs.items():
        if all(key in days for key in keys):
            sections[number] = max(days[key] for key in keys)
    if days:
        sections |= {number: min(days.values()) for number in READING}
    if len([number for number in needs if number in sections]) == len(needs):
        sections[RECAP] = max(sections[number] for number in needs)
    def share(d: int) -> int:  # hundredths of a point
        if d == 0:
            return 100
        return 0 if found["late"] == "no-credit" else max(0, 100 - int(found["late"]) * d)

    earned = sum(share(d) for d in sections.values())
    return earned, sum(d > 0 for d in sections.values())


def first_times(events: list, who: int, kept: list, counted: list) -> dict[tuple, datetime]:
    """(kind, item) -> when the learner first did it: predicted, answered, explained (if still written),
    tried an exercise (saved code or a run) and passed it (a run that counts)."""
    first: dict[tuple, datetime] = {}
    written = False
    for _, (t, kind, whose, what) in events:
        if whose != who:
            continue
        moment = BASE + timedelta(minutes=t)
        if kind in ("predict", "answer"):
            first.setdefault((kind, what), moment)
        elif kind == "explain":
            written = what  # the latest save decides whether it is written now
            if what:
                first.setdefault(("explain", ""), moment)
        elif kind == "code":
            first.setdefault(("tried", what), moment)
    if not written:
        first.pop(("explain", ""), None)
    for whose, exercise, accepted, _verdict in kept:  # every run of the learner's own: tried
        if whose == who:
            first[("tried", exercise)] = min(first.get(("tried", exercise), accepted), accepted)
    for whose, exercise, accepted, verdict in counted:  # a pass that counts
        if whose == who and verdict == "pass":
            first[("pass", exercise)] = min(first.get(("pass", exercise), accepted), accepted)
    return first
