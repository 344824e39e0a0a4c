"""The teacher's view of one class: the same data for the page (/teacher), its API and `chainrule class ...`.

- roster: each learner against the path: sections done, lessons done, exercises passed, quiz score, last active;
- exercises: runs, the share of learners who passed at their first run, the median runs to pass, the most
  common diagnoses among failing runs (grouped by the grader's hint, else by its verdict);
- questions: the share of learners whose first answer was right, and the most chosen wrong answer;
- timeline: one learner's runs (with the code of each) and answers, oldest first;
- gradebook: one row per learner, for a spreadsheet.

Only learners of the asked class are read: every query is limited to that class's accounts. The sections a
learner can finish in a lesson are its predictions (all made), its exercises (all passed), its quiz (every
question answered) and its explain-it-back (written); a lesson is done when all of its sections are.
"""

from __future__ import annotations

import csv
import io
import json
import re
import statistics
from collections import Counter, defaultdict
from typing import Any

from chainrule import lessons
from chainrule.classes.accounts import Accounts, ClassError
from chainrule.progress.class_store import ClassStore

TOP_DIAGNOSES = 3
_NUMBERS_LINE = re.compile(r"expected .*, got ")


def diagnosis_of(result: dict) -> str:
    """What a failing run is grouped by: the hint the grader gave its failing tests, else its verdict."""
    verdict = str(result.get("verdict") or result.get("status") or "unknown")
    if verdict != "failed":
        return f"{verdict}: {str(result.get('message') or '').splitlines()[0][:120]}".rstrip(": ")
    hints: Counter[str] = Counter()
    for test in result.get("tests") or []:
        if isinstance(test, dict) and test.get("status") == "fail":
            last = str(test.get("message") or "").rsplit("\n", 1)[-1]
            if last and not _NUMBERS_LINE.search(last):
                hints[last] += 1
    return hints.most_common(1)[0][0] if hints else "wrong numbers, no diagnosis"


def _path() -> list[dict[str, Any]]:
    """The written lessons in path order, with their exercise and quiz question ids."""
    out = []
    for entry in lessons.get_path()["lessons"]:
        if not entry.get("written"):
            continue
        data = lessons.lesson_data(entry["id"])
        out.append({"id": entry["id"], "title": entry["title"], "exercises": list(lessons.exercise_ids(entry["id"])),
                    "questions": [question["id"] for question in data.get("quiz", [])],
                    "predictions": len(data.get("predict", {}).get("steps", []))})
    return out


class ClassReport:
    def __init__(self, store: Any, accounts: Accounts) -> None:
        self.tables = ClassStore(store)
        self.accounts = accounts

    def overview(self, class_id: int) -> dict[str, Any]:
        path = _path()
        learners = self.accounts.learners(class_id)
        activity = self.tables.class_activity(class_id)
        submissions, answers = activity["submissions"], activity["answers"]
        last_seen = {row[0]: row[1] for row in activity["last_active"]}
        predicted = {(row[0], row[1]): int(row[2]) for row in activity["predictions"]}
        explained = {(row[0], row[1]) for row in activity["explained"]}

        runs: dict[tuple[int, str], list[str]] = defaultdict(list)  # (learner, exercise) -> statuses in order
        failing: dict[str, Counter[str]] = defaultdict(Counter)
        for learner, exercise, status, result, _ in submissions:
            runs[learner, exercise].append(status)
            if status != "pass":
                failing[exercise][diagnosis_of(_loaded(result))] += 1
        first_answer: dict[tuple[int, str, str], tuple[str, bool]] = {}
        wrong: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
        for learner, lesson, question, answer, correct, _ in answers:
            first_answer.setdefault((learner, lesson, question), (answer, bool(correct)))
            if not correct:
                wrong[lesson, question][answer] += 1

        roster = []
        for learner in learners:
            lessons_done = sections_done = sections = 0
            passed_total = exercises_total = right = asked = 0
            per_lesson = []
            for lesson in path:
                passed = [e for e in lesson["exercises"] if "pass" in runs.get((learner.id, e), [])]
                answered = [q for q in lesson["questions"] if (learner.id, lesson["id"], q) in first_answer]
                correct = [q for q in answered if first_answer[learner.id, lesson["id"], q][1]]
                parts = {"predictions": predicted.get((learner.id, lesson["id"]), 0) >= lesson["predictions"],
                         "exercises": len(passed) == len(lesson["exercises"]),
                         "quiz": len(answered) == len(lesson["questions"]),
                         "explanation": (learner.id, lesson["id"]) in explained}
                if not lesson["predictions"]:
                    del parts["predictions"]  # nothing to do there: not a section to finish
                done = all(parts.values())
                lessons_done += done
                sections_done += sum(parts.values())
                sections += len(parts)
                passed_total += len(passed)
                exercises_total += len(lesson["exercises"])
                right += len(correct)
                asked += len(lesson["questions"])
                per_lesson.append({"lesson_id": lesson["id"], "done": done, "sections": parts,
                                   "exercises": {e: e in passed for e in lesson["exercises"]},
                                   "questions": {q: (first_answer[learner.id, lesson["id"], q][1]
                                                     if q in answered else None) for q in lesson["questions"]}})
            roster.append({"id": learner.id, "name": learner.name, "sections_done": sections_done,
                           "sections": sections, "lessons_done": lessons_done,
                           "lessons": len(path), "exercises_passed": passed_total, "exercises": exercises_total,
                           "quiz_right": right, "quiz_questions": asked, "last_active": last_seen.get(learner.id),
                           "grid": per_lesson})

        exercises = []
        for lesson in path:
            for exercise in lesson["exercises"]:
                tried = [runs[key] for key in runs if key[1] == exercise]
                to_pass = [statuses.index("pass") + 1 for statuses in tried if "pass" in statuses]
                exercises.append({
                    "lesson_id": lesson["id"], "exercise_id": exercise,
                    "runs": sum(len(statuses) for statuses in tried), "learners_tried": len(tried),
                    "learners_passed": len(to_pass),
                    "passed_first_run": (sum(statuses[0] == "pass" for statuses in tried) / len(tried)) if tried else None,
                    "median_runs_to_pass": statistics.median(to_pass) if to_pass else None,
                    "diagnoses": [{"diagnosis": text, "runs": count}
                                  for text, count in failing[exercise].most_common(TOP_DIAGNOSES)],
                })
        questions = []
        for lesson in path:
            for question in lesson["questions"]:
                firsts = [value for key, value in first_answer.items() if key[1:] == (lesson["id"], question)]
                common_wrong = wrong[lesson["id"], question].most_common(1)
                questions.append({
                    "lesson_id": lesson["id"], "question_id": question, "learners_answered": len(firsts),
                    "share_right": (sum(ok for _, ok in firsts) / len(firsts)) if firsts else None,
                    "most_chosen_wrong": ({"answer": common_wrong[0][0], "times": common_wrong[0][1]}
                                          if common_wrong else None),
                })
        return {"path": path, "roster": roster, "exercises": exercises, "questions": questions}

    def timeline(self, class_id: int, learner_id: int) -> dict[str, Any]:
        """One learner's runs (with code) and quiz answers, oldest first; only a learner of this class."""
        learner = self.accounts.account(learner_id)
        if learner is None or learner.class_id != class_id or learner.role != "learner":
            raise ClassError(f"there is no learner {learner_id} in your class", kind="not-found")

        runs, answers = self.tables.learner_activity(learner.id)
        events = [{"kind": "run", "at": at, "exercise_id": exercise, "language": language, "status": status,
                   "diagnosis": None if status == "pass" else diagnosis_of(_loaded(result)), "source": source}
                  for at, exercise, language, status, result, source in runs]
        events += [{"kind": "answer", "at": at, "lesson_id": lesson, "question_id": question, "answer": answer,
                    "correct": bool(correct)} for at, lesson, question, answer, correct in answers]
        events.sort(key=lambda event: event["at"])
        return {"learner": {"id": learner.id, "name": learner.name}, "events": events}

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
        return rows


def _loaded(result: str) -> dict:
    try:
        value = json.loads(result)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def csv_text(rows: list[list[Any]]) -> str:
    """CSV in which no cell runs as a spreadsheet formula: a text cell starting with =, +, -, @ (or a tab
    or carriage return) gets a leading apostrophe, as OWASP advises against CSV injection."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in rows:
        writer.writerow(["'" + cell if isinstance(cell, str) and cell[:1] in ("=", "+", "-", "@", "\t", "\r")
                         else cell for cell in row])
    return out.getvalue()
