"""The class's common mistakes, for the teacher's page: per exercise, the mistakes the grader named in the class's
runs that did not pass, counted (runs and distinct learners) and per day, each with the runs behind it and the
hint that answers it.

    found = common_mistakes(store, accounts, class_id)
    found["exercises"]   # [{"exercise_id", "title", "runs_not_passed", "mistakes": [{"mistake", "runs",
                         #   "learners", "hint", "days": [{"day", "runs", "learners"}], "recent_runs": [...]}]}]

What counts: a run names a mistake when one of its tests or the run as a whole does (the result's
"tests"[i]["mistake"] and "diagnosis_mistake", docs/grading.md); a run counts once for each mistake it names,
however many of its tests name it. Only the runs that count and did not pass take part, as everywhere the class's
runs are counted: a regrade's runs once it is applied (in place of the runs it graded again), never imported ones.

Over time: per day, the day in the class's time zone (the one its due dates are in, classes/deadlines.py), of the
run's work time (when the server accepted it).

The hint: the exercise's own text for that mistake ("diagnoses" in exercise.json), else the grader's, as the
learner read it; the parts the grader fills in from a run's numbers are shown as [name].

Bounded: computed on request for one class, from the newest MAX_RUNS runs that name a mistake (the answer says
how many older ones were left out); each mistake lists its RUNS_LISTED newest runs.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from datetime import datetime, timezone, tzinfo
from typing import Any

from chainrule.classes.accounts import Accounts
from chainrule.classes.deadlines import lesson_shapes, time_zone
from chainrule.number_text import count_text
from chainrule.progress.deadline_store import DeadlineStore
from chainrule.progress.mistake_store import MistakeStore

__all__ = ["MAX_RUNS", "RUNS_LISTED", "common_mistakes", "hint_for", "mistakes_of"]

# The cost is bounded: at most this many results are read and parsed on a request (the newest).
MAX_RUNS = 2000
# Each mistake lists this many of its runs (the newest), each a way to that learner's runs on the page.
RUNS_LISTED = 20
_FIELD = re.compile(r"\{(\w+)\}")


def mistakes_of(result: Any) -> set[str]:
    """The names of the mistakes a graded run's result names (its tests' and its own), none if it is unreadable."""
    if not isinstance(result, dict):
        return set()
    named = {test.get("mistake") for test in result.get("tests") or [] if isinstance(test, dict)}
    named.add(result.get("diagnosis_mistake"))
    return {name for name in named if isinstance(name, str) and name}


def hint_for(exercise_id: str, mistake: str) -> dict[str, Any]:
    """{"hint": the text the learner reads for ``mistake`` in ``exercise_id`` (its filled-in parts as [name]),
    "about": the grader's one line on what the mistake is, "from": "exercise" | "grader"}; hint None when the
    exercise (or its kind) no longer names that mistake."""
    from chainrule.grading import get_exercise

    try:
        exercise = get_exercise(exercise_id)
    except ValueError:
        return {"hint": None, "about": "", "from": None}
    known = exercise.kind.mistake(mistake)
    if known is None:
        return {"hint": None, "about": "", "from": None}
    text = exercise.message(mistake, known.message)
    # A message's {field} is filled from the numbers of one run: the teacher reads its name in its place.
    shown = _FIELD.sub(lambda field: f"[{field.group(1)}]", text).replace("{{", "{").replace("}}", "}")
    return {"hint": shown, "about": known.about, "from": "exercise" if mistake in exercise.messages else "grader"}


def _day(at: Any, zone: tzinfo) -> str | None:
    """The day (YYYY-MM-DD) in ``zone`` of a run's stored work time (ISO 8601 with its offset; none: UTC)."""
    try:
        moment = datetime.fromisoformat(at)
    except (TypeError, ValueError):
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).astimezone(zone).date().isoformat()


def _titles() -> dict[str, str]:
    from chainrule import lessons
    from chainrule.grading import get_exercise

    lessons.register_exercises()  # the hints are read by exercise id (the web app has done it already)
    titles = {}
    for shape in lesson_shapes():
        for exercise in shape["exercises"]:
            try:
                titles[exercise] = get_exercise(exercise).title
            except ValueError:
                titles[exercise] = exercise
    return titles


def _counted(runs: int, learners: int) -> dict[str, Any]:
    return {"runs": runs, "runs_text": count_text(runs, "run"),
            "learners": learners, "learners_text": count_text(learners, "learner")}


def common_mistakes(store: Any, accounts: Accounts, class_id: int) -> dict[str, Any]:
    """The mistakes the grader named in the class's runs that did not pass, per exercise (in the path's order),
    the most frequent first (by runs, then learners, then name)."""
    zone_name = DeadlineStore(store).settings(class_id)["time_zone"]
    zone = time_zone(zone_name)
    found = MistakeStore(store).runs_not_passed(class_id, MAX_RUNS)
    names = {account.id: account.name for account in accounts.learners(class_id)}
    titles = _titles()

    # (exercise, mistake) -> the runs that name it, newest first (the store's order)
    runs_of: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in found.runs:
        try:
            result = json.loads(row.result)
        except (TypeError, ValueError):
            continue
        day = _day(row.at, zone)
        run = {"run_id": int(row.id), "learner_id": int(row.learner_id),
               "name": names.get(int(row.learner_id), f"learner {row.learner_id}"), "language": row.language,
               "at": row.at, "day": day}
        for mistake in mistakes_of(result):
            runs_of[(row.exercise_id, mistake)].append(run)

    not_passed = {row.exercise_id: _counted(int(row.runs), int(row.learners)) for row in found.per_exercise}
    order = {exercise: index for index, exercise in enumerate(titles)}
    exercises = []
    for exercise_id in sorted(not_passed, key=lambda exercise: (order.get(exercise, len(order)), exercise)):
        mistakes = []
        for (exercise, mistake), runs in runs_of.items():
            if exercise != exercise_id:
                continue
            per_day: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for run in runs:
                if run["day"] is not None:
                    per_day[run["day"]].append(run)
            days = [{"day": day, **_counted(len(day_runs), len({run["learner_id"] for run in day_runs}))}
                    for day, day_runs in sorted(per_day.items())]
            not_listed = max(len(runs) - RUNS_LISTED, 0)
            mistakes.append({"mistake": mistake, **_counted(len(runs), len({run["learner_id"] for run in runs})),
                             **hint_for(exercise_id, mistake), "days": days, "recent_runs": runs[:RUNS_LISTED],
                             "runs_not_listed": not_listed, "runs_not_listed_text": count_text(not_listed, "run")})
        mistakes.sort(key=lambda entry: (-entry["runs"], -entry["learners"], entry["mistake"]))
        counted = not_passed[exercise_id]
        said = f"{counted['runs_text']} did not pass, by {counted['learners_text']}."
        exercises.append({"exercise_id": exercise_id, "title": titles.get(exercise_id, exercise_id),
                          "runs_not_passed": counted, "mistakes": mistakes,
                          "said": said if mistakes else f"{said} None of them named a mistake the grader knows."})
    left_out = max(found.named - MAX_RUNS, 0)
    said = (f"Mistakes the grader named in the class's runs that did not pass, per exercise; days are in the class's "
            f"time zone, {zone_name}." if exercises else "No run of the class has failed yet: there is no mistake to count.")
    if left_out:
        said += (f" Only the newest {count_text(MAX_RUNS, 'run')} naming a mistake were read (left out: "
                 f"{count_text(left_out, 'older run')}).")
    # The page and `chainrule class mistakes` show these texts as they are (number_text's one rule).
    return {"time_zone": zone_name, "per": "day", "max_runs": MAX_RUNS, "runs_read": len(found.runs),
            "left_out": left_out, "runs_listed": RUNS_LISTED, "said": said, "exercises": exercises}
