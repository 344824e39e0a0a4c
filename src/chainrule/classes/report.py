"""The teacher's view of one class: the same data for the page (/teacher), its API and `chainrule class ...`.

- roster: each learner against the path: sections done, lessons done, exercises passed, quiz score, last active;
- exercises: runs, the share of learners who passed at their first run, the median runs to pass, the most
  common diagnoses among failing runs (grouped by the grader's hint, else by its verdict);
- questions: the share of learners whose first answer was right, the most chosen wrong answer, and the
  probability FSRS predicts they recall it now (the mean over their review cards: which ideas are fading);
- timeline: one learner's runs (with the code of each) and answers, oldest first;
- gradebook: one row per learner, for a spreadsheet.

Only learners of the asked class are read: every query is limited to that class's accounts. A section, and a
lesson, is finished by the one rule the learner's own page shows (progress/finished.py); the grid's columns
are the sections with work to do: predictions (all made), exercises (all passed), quiz (every question
answered) and explain-it-back (written).
"""

from __future__ import annotations

import csv
import io
import re
import statistics
from collections import Counter, defaultdict
from datetime import datetime, timezone
from typing import Any

from chainrule import lessons
from chainrule.classes.accounts import Accounts, ClassError
from chainrule.classes.deadlines import Deadlines
from chainrule.number_text import format_number, format_percent
from chainrule.progress.class_store import ClassStore
from chainrule.progress.finished import Work, lesson_state
from chainrule.progress.fitting import recall_now

TOP_DIAGNOSES = 3
IMPORTED = "imported"  # a row's origin when it came from the learner's own file (progress/schema.py, migration 5)
_NUMBERS_LINE = re.compile(r"expected .*, got ")


def _first_line(value: Any, limit: int = 120) -> str:
    lines = str(value or "").splitlines()
    return lines[0][:limit] if lines else ""


def diagnosis_of(result: dict) -> str:
    """What a failing run is grouped by: the hint the grader gave its failing tests, else its verdict."""
    verdict = _first_line(result.get("verdict") or result.get("status") or "unknown", 60) or "unknown"
    if verdict != "failed":
        return f"{verdict}: {_first_line(result.get('message'))}".rstrip(": ")
    hints: Counter[str] = Counter()
    tests = result.get("tests")
    for test in tests if isinstance(tests, list) else []:
        if isinstance(test, dict) and test.get("status") == "fail":
            last = str(test.get("message") or "").rsplit("\n", 1)[-1][:200]
            if last and not _NUMBERS_LINE.search(last):
                hints[last] += 1
    return hints.most_common(1)[0][0] if hints else "wrong numbers, no diagnosis"


def _path() -> list[dict[str, Any]]:
    """The written lessons in path order: each one's title and what it asks for (lessons.lesson_shape)."""
    return [lessons.lesson_shape(entry["id"]) | {"title": entry["title"]}
            for entry in lessons.get_path()["lessons"] if entry.get("written")]


def _name(account: Any) -> str:
    return account.name if isinstance(account.name, str) else f"(learner {account.id}: unreadable name)"


class ClassReport:
    def __init__(self, store: Any, accounts: Accounts) -> None:
        self.store = store
        self.tables = ClassStore(store)
        self.accounts = accounts

    def overview(self, class_id: int) -> dict[str, Any]:
        path = _path()
        learners = self.accounts.learners(class_id)
        activity = self.tables.class_activity(class_id)
        last_seen, work = activity["last_active"], activity["work"]
        # Only runs graded here count (an imported run's code is graded again here: classes/imports.py).
        submissions = [row for row in activity["submissions"] if row[5] != IMPORTED]

        runs: dict[tuple[int, str], list[str]] = defaultdict(list)  # (learner, exercise) -> statuses in order
        failing: dict[str, Counter[str]] = defaultdict(Counter)
        for learner, exercise, status, result, _, _ in submissions:
            runs[learner, exercise].append(status)
            if status != "pass":
                failing[exercise][diagnosis_of(result)] += 1
        first_answer: dict[tuple[int, str, str], tuple[str, bool]] = {}
        wrong: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
        for learner, lesson, question, answer, correct, _, _ in activity["answers"]:
            first_answer.setdefault((learner, lesson, question), (answer, correct))
            if not correct:
                wrong[lesson, question][answer] += 1

        roster = []
        for learner in learners:
            lessons_done = sections_done = sections = 0
            passed_total = exercises_total = right = asked = 0
            per_lesson = []
            for lesson in path:
                # The one rule of "finished" and its one builder (progress/finished.py), as the learner's page.
                state = lesson_state(lesson, work.get(learner.id, Work()))
                passed = state["passed"]
                answered = state["answered"]
                correct = [q for q in answered if first_answer.get((learner.id, lesson["id"], q), ("", False))[1]]
                done = state["lesson"]
                lessons_done += done
                sections_done += len(state["sections"])
                sections += len(lesson["sections"])
                passed_total += len(passed)
                exercises_total += len(lesson["exercises"])
                right += len(correct)
                asked += len(lesson["quiz"])
                per_lesson.append({"lesson_id": lesson["id"], "done": done, "sections": state["parts"],
                                   "exercises": {e: e in passed for e in lesson["exercises"]},
                                   "questions": {q: (first_answer[learner.id, lesson["id"], q][1]
                                                     if (learner.id, lesson["id"], q) in first_answer else None)
                                                 for q in lesson["quiz"]}})
            roster.append({"id": learner.id, "name": _name(learner), "sections_done": sections_done,
                           "sections": sections, "lessons_done": lessons_done,
                           "lessons": len(path), "exercises_passed": passed_total, "exercises": exercises_total,
                           "quiz_right": right, "quiz_questions": asked, "last_active": last_seen.get(learner.id),
                           "grid": per_lesson})

        exercises = []
        for lesson in path:
            for exercise in lesson["exercises"]:
                tried = [runs[key] for key in runs if key[1] == exercise]
                to_pass = [statuses.index("pass") + 1 for statuses in tried if "pass" in statuses]
                first_run = (sum(statuses[0] == "pass" for statuses in tried) / len(tried)) if tried else None
                median = statistics.median(to_pass) if to_pass else None
                exercises.append({
                    "lesson_id": lesson["id"], "exercise_id": exercise,
                    "runs": sum(len(statuses) for statuses in tried), "learners_tried": len(tried),
                    "learners_passed": len(to_pass), "passed_first_run": first_run, "median_runs_to_pass": median,
                    # The texts a page shows (pages format no number): chainrule.number_text's rules.
                    "passed_text": format_percent(len(to_pass) / len(tried) if tried else None),
                    "passed_first_run_text": format_percent(first_run),
                    "median_runs_to_pass_text": "\u2013" if median is None else format_number(median),
                    "diagnoses": [{"diagnosis": text, "runs": count}
                                  for text, count in failing[exercise].most_common(TOP_DIAGNOSES)],
                })
        questions = []
        recall = recall_now(self.store, class_id, self.store.now())  # FSRS's prediction, per question
        for lesson in path:
            for question in lesson["quiz"]:
                firsts = [value for key, value in first_answer.items() if key[1:] == (lesson["id"], question)]
                common_wrong = wrong[lesson["id"], question].most_common(1)
                share = (sum(ok for _, ok in firsts) / len(firsts)) if firsts else None
                predicted, cards = recall.get((lesson["id"], question), (None, 0))
                questions.append({
                    "lesson_id": lesson["id"], "question_id": question, "learners_answered": len(firsts),
                    "share_right": share, "share_right_text": format_percent(share),
                    "most_chosen_wrong": ({"answer": common_wrong[0][0], "times": common_wrong[0][1]}
                                          if common_wrong else None),
                    "recall_now": predicted, "recall_now_text": format_percent(predicted), "recall_cards": cards,
                })
        return {"path": [self._path_entry(lesson) for lesson in path], "roster": roster, "exercises": exercises,
                "questions": questions}

    @staticmethod
    def _path_entry(lesson: dict[str, Any]) -> dict[str, Any]:
        return {"id": lesson["id"], "title": lesson["title"], "exercises": lesson["exercises"],
                "questions": lesson["quiz"], "sections": lesson["sections"],
                "predictions": len(lesson["predictions"])}

    def timeline(self, class_id: int, learner_id: int) -> dict[str, Any]:
        """One learner's runs (with code) and quiz answers, oldest first; only a learner of this class."""
        learner = self.accounts.account(learner_id)
        if learner is None or learner.class_id != class_id or learner.role != "learner":
            raise ClassError(f"there is no learner {learner_id} in your class", kind="not-found")

        runs, answers = self.tables.learner_activity(learner.id)
        # An imported run is the learner's own claim: shown as such, never with a verdict of ours.
        events = [{"kind": "run", "at": at, "exercise_id": exercise, "language": language,
                   "status": IMPORTED if origin == IMPORTED else status, "imported": origin == IMPORTED,
                   "diagnosis": None if status == "pass" or origin == IMPORTED else diagnosis_of(result),
                   "source": source}
                  for at, exercise, language, status, result, source, origin in runs]
        events += [{"kind": "answer", "at": at, "lesson_id": lesson, "question_id": question, "answer": answer,
                    "correct": correct, "imported": origin == IMPORTED}
                   for at, lesson, question, answer, correct, origin in answers]
        events.sort(key=lambda event: datetime.fromisoformat(event["at"]).astimezone(timezone.utc))
        return {"learner": {"id": learner.id, "name": _name(learner)}, "events": events}

    def gradebook(self, class_id: int) -> list[list[Any]]:
        """Rows for a CSV: a header, then one row per learner (per lesson: exercises passed, quiz right)."""
        data = self.overview(class_id)
        header = ["learner", "sections done", "lessons done", "exercises passed", "quiz right (first answer)",
                  "last active"]
        for lesson in data["path"]:
            header += [f"{lesson['id']}: exercises passed", f"{lesson['id']}: quiz right"]
        rows: list[list[Any]] = [header]
        for entry in data["roster"]:
            row: list[Any] = [entry["name"], entry["sections_done"], entry["lessons_done"], entry["exercises_passed"],
                              entry["quiz_right"], entry["last_active"] or ""]
            for lesson in entry["grid"]:
                row += [sum(lesson["exercises"].values()), sum(bool(v) for v in lesson["questions"].values())]
            rows.append(row)
        return _with_credit(rows, data["roster"], *Deadlines(self.store, self.accounts).gradebook_columns(class_id))


def _with_credit(rows: list[list[Any]], roster: list[dict], header: list[str], cells: dict[int, list]) -> list[list]:
    """The gradebook with each learner's credit as of their own due dates (classes/deadlines.py) at the end."""
    return [rows[0] + header] + [row + cells.get(entry["id"], [""] * len(header))
                                 for row, entry in zip(rows[1:], roster)]


def csv_text(rows: list[list[Any]]) -> str:
    """CSV in which no cell runs as a spreadsheet formula: a text cell starting with =, +, -, @ (or a tab
    or carriage return) gets a leading apostrophe, as OWASP advises against CSV injection."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in rows:
        writer.writerow(["'" + cell if isinstance(cell, str) and cell[:1] in ("=", "+", "-", "@", "\t", "\r")
                         else cell for cell in row])
    return out.getvalue()
