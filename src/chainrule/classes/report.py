"""The teacher's view of one class: the same data for the page (/teacher), its API and `chainrule class ...`.

- roster: each learner against the path: sections done, lessons done, exercises passed, quiz score, last active,
  and per exercise its state (not started, tried, passed, passed with the solution shown) and the help used;
- exercises: runs, the share of learners who passed at their first run, the median runs to pass, the most
  common diagnoses among failing runs (grouped by the grader's hint, else by its verdict and the kind of
  error, never by anything of the learner's own code such as a line);
- explanations: every learner's explain-it-back text and the key ideas they ticked, for one lesson;
- questions: the share of learners whose first answer was right, the most chosen wrong answer, and the
  probability FSRS predicts they recall it now (the mean over their review cards: which ideas are fading);
- timeline: one learner's runs (with the code of each), answers, hints opened and solutions shown, oldest
  first, and their explanation of each lesson;
- gradebook: one row per learner, for a spreadsheet.

Only learners of the asked class are read: every query is limited to that class's accounts. A section, and a
lesson, is finished by the one rule the learner's own page shows (progress/finished.py); the grid's columns
are the sections with work to do: predictions (all made), exercises (all passed), quiz (every question
answered) and explain-it-back (written).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Mapping

from chainrule import lessons
from chainrule.classes.accounts import Accounts, ClassError
from chainrule.classes.deadlines import Deadlines
from chainrule.number_text import count_text, format_number, format_percent
from chainrule.progress.class_store import ClassActivity, ClassStore, HelpUsed
from chainrule.progress.dialect import Record
from chainrule.progress.finished import Work, lesson_state
from chainrule.progress.fitting import recall_now
from chainrule.progress.store import ProgressStore

TOP_DIAGNOSES = 3
# An exercise's state in the grid, from the one rule's Work (progress/finished.py) and the help used.
NOT_STARTED, TRIED, PASSED, PASSED_WITH_SOLUTION = "not-started", "tried", "passed", "passed-with-solution"
IMPORTED = "imported"  # a row's origin when it came from the learner's own file (progress/schema.py, migration 5)
_NUMBERS_LINE = re.compile(r"expected .*, got ")
# The kind of error in a run's message ("Your file could not be loaded: SyntaxError on line 3: ..."), the
# grader's words (grading/grader.py's _error_text): the group's key is the kind, never the learner's line.
_ERROR_KIND = re.compile(r"(?:could not be loaded:|raised) ([A-Za-z_][\w.]{0,60})")


def _first_line(value: Any, limit: int = 120) -> str:
    lines = str(value or "").splitlines()
    return lines[0][:limit] if lines else ""


def diagnosis_of(result: dict) -> str:
    """What a failing run is grouped by, the same for every learner who made the same mistake: the hint the
    grader gave its failing tests; else its verdict ("timeout", "type-error", ...), with the kind of error
    for a run that raised ("error: SyntaxError"). Nothing of the learner's own code (a line, a name, a
    message their code wrote) is part of it."""
    verdict = _first_line(result.get("verdict") or result.get("status") or "unknown", 60) or "unknown"
    if verdict != "failed":
        kind = _ERROR_KIND.search(str(result.get("message") or ""))
        return f"{verdict}: {kind.group(1)}" if kind else verdict
    hints: Counter[str] = Counter()
    tests = result.get("tests")
    for test in tests if isinstance(tests, list) else []:
        if isinstance(test, dict) and test.get("status") == "fail":
            last = str(test.get("message") or "").rsplit("\n", 1)[-1][:200]
            if last and not _NUMBERS_LINE.search(last):
                hints[last] += 1
    return hints.most_common(1)[0][0] if hints else "wrong numbers, no diagnosis"


def _texts(lesson_id: str) -> dict[str, Any]:
    """A lesson's exercise titles, question prompts (with the numbers the lesson page asks them with) and
    key ideas."""
    data = lessons.lesson_data(lesson_id)
    return {"exercise_titles": {e["id"]: e["title"] for e in data["exercises"]},
            "question_prompts": {q["id"]: lessons.quiz_question(lesson_id, q["id"])["prompt"] for q in data["quiz"]},
            "key_ideas": [{"id": idea["id"], "text": idea["text"]} for idea in data["explain"]["key_ideas"]]}


def written_lessons() -> list[dict[str, Any]]:
    """The written lessons in path order: each one's title and what it asks for (lessons.lesson_shape)."""
    return [lessons.lesson_shape(entry["id"]) | {"title": entry["title"]} | _texts(entry["id"])
            for entry in lessons.get_path()["lessons"] if entry.get("written")]


def _help_by_exercise(rows: list[HelpUsed]) -> dict[tuple[int, str], dict[str, Any]]:
    """(learner, exercise) -> {"hints": hints opened (the highest number), "solution_at": when the solution
    was first shown, or None}, aggregated by the database (progress/class_store.py's help_by_exercise: one row
    per learner and exercise)."""
    return {(row.learner_id, row.exercise_id): {"hints": row.hints, "solution_at": row.solution_at} for row in rows}


def _first_pass(submissions: list[Record]) -> dict[tuple[int, str], str]:
    """(learner, exercise) -> when their first passing run that counts was made (runs in work-time order)."""
    passed: dict[tuple[int, str], str] = {}
    for run in submissions:
        if run.status == "pass":
            passed.setdefault((run.learner_id, run.exercise_id), run.at)
    return passed


def _counted(submissions: list[Record]) -> list[Record]:
    """The runs that count (progress/finished.py's rule: origin '', the learner's own run graded here: never an
    imported one, a regrade's run not applied or reverted, or one an applied regrade set aside), in the order
    the work was done (a regrade's run has the work time of the run it graded again), then as kept."""
    counted = [(index, row) for index, row in enumerate(submissions) if row.origin == ""]
    return [row for _, row in sorted(counted, key=lambda item: (_utc(item[1].at), item[0]))]


def _utc(at: str) -> datetime:
    moment = datetime.fromisoformat(at)
    return moment.astimezone(timezone.utc) if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _earlier(first: str, second: str) -> bool:
    return _utc(first) <= _utc(second)


def exercise_state(exercise: str, work: Work, first_pass: str | None, solution_at: str | None) -> str:
    """The grid's state of one exercise for one learner: passed (by the one rule, progress/finished.py),
    "passed with the solution shown" when the solution was shown before the first pass, tried (code saved
    or a run), or not started."""
    if exercise in work.passed:
        shown_before = solution_at is not None and (first_pass is None or _earlier(solution_at, first_pass))
        return PASSED_WITH_SOLUTION if shown_before else PASSED
    return TRIED if exercise in work.tried else NOT_STARTED


def _help_entry(hints: int, solution_shown: bool) -> dict[str, Any]:
    """The help one learner used on one exercise, and the page's words for it (number_text's numbers)."""
    words = ([f"{count_text(hints, 'hint')} opened"] if hints else []) + (
        ["the model solution shown"] if solution_shown else [])
    return {"hints": hints, "solution_shown": solution_shown, "text": ", ".join(words)}


def _explanation(lesson: dict[str, Any], text: str | None, ticked: list[str], at: str | None) -> dict[str, Any]:
    """A learner's explanation of a lesson: the text, and the lesson's key ideas they ticked (in the lesson's
    order; an id the lesson no longer has counts for nothing)."""
    mine = set(ticked)
    return {"lesson_id": lesson["id"], "lesson_title": lesson["title"], "text": text, "at": at,
            "ticked": [idea for idea in lesson["key_ideas"] if idea["id"] in mine],
            "key_ideas": len(lesson["key_ideas"]),
            "ticked_text": (f"{format_number(len([i for i in lesson['key_ideas'] if i['id'] in mine]))} of "
                            f"{format_number(len(lesson['key_ideas']))} key ideas ticked")}


def _name(account: Any) -> str:
    return account.name if isinstance(account.name, str) else f"(learner {account.id}: unreadable name)"


class ClassReport:
    def __init__(self, store: ProgressStore, accounts: Accounts) -> None:
        self.store = store
        self.tables = ClassStore(store)
        self.accounts = accounts

    def _learners(self, class_id: int, section: str) -> list[Any]:
        from chainrule.classes.class_sections import Sections

        return Sections(self.accounts).learners(class_id, section)

    def overview(self, class_id: int, section: str = "") -> dict[str, Any]:
        """The class against the path: the roster (each learner's totals and grid), each exercise's runs and
        diagnoses, each question's answers and predicted recall; data first, each number's text beside it.
        With a ``section`` (checked by classes/class_sections.py), only its learners, in the roster and in every count
        (but for the predicted recall, which FSRS gives for the whole class)."""
        path = written_lessons()
        exercises = tuple(e for lesson in path for e in lesson["exercises"])
        learners = self._learners(class_id, section)
        activity = self.tables.class_activity(class_id, exercises)
        seen = _seen(_only(activity, {learner.id for learner in learners}) if section else activity)
        recall = recall_now(self.store, class_id, self.store.now())  # FSRS's prediction, per question
        credit = Deadlines(self.store, self.accounts).credit(class_id)
        return {"path": [self._path_entry(lesson) for lesson in path], "section": section,
                "roster": [_roster_row(learner, path, seen, credit.get(learner.id, {})) for learner in learners],
                "exercises": [_with_exercise_texts(_exercise_row(lesson, exercise, seen))
                              for lesson in path for exercise in lesson["exercises"]],
                "questions": [_with_question_texts(_question_row(lesson, question, seen, recall))
                              for lesson in path for question in lesson["quiz"]]}

    @staticmethod
    def _path_entry(lesson: dict[str, Any]) -> dict[str, Any]:
        return {"id": lesson["id"], "title": lesson["title"], "exercises": lesson["exercises"],
                "questions": lesson["quiz"], "sections": lesson["sections"],
                "predictions": len(lesson["predictions"]),
                "exercise_titles": [lesson["exercise_titles"].get(e, e) for e in lesson["exercises"]],
                "question_prompts": [lesson["question_prompts"].get(q, q) for q in lesson["quiz"]]}

    def timeline(self, class_id: int, learner_id: int) -> dict[str, Any]:
        """One learner's runs (with code), quiz answers, hints opened and solutions shown, oldest first, and
        their explanation of each lesson (its text and the key ideas ticked); only a learner of this class."""
        learner = self.accounts.learner(class_id, learner_id)
        activity = self.tables.learner_activity(learner.id)
        texts = {lesson["id"]: lesson for lesson in written_lessons()}
        # An imported run is the learner's own claim: shown as such, never with a verdict of ours.
        events = [{"kind": "run", "at": run.at, "exercise_id": run.exercise_id, "language": run.language,
                   "status": IMPORTED if run.origin == IMPORTED else run.status, "imported": run.origin == IMPORTED,
                   "diagnosis": None if run.status == "pass" or run.origin == IMPORTED else diagnosis_of(run.result),
                   "source": run.source}
                  for run in activity["runs"]]
        events += [{"kind": "answer", "at": row.at, "lesson_id": row.lesson_id, "question_id": row.question_id,
                    "answer": row.answer, "correct": row.correct, "imported": row.origin == IMPORTED}
                   for row in activity["answers"]]
        events += [{"kind": row.kind, "at": row.at, "lesson_id": row.lesson_id, "exercise_id": row.exercise_id,
                    "number": row.number}
                   for row in activity["help"]]
        events.sort(key=lambda event: datetime.fromisoformat(event["at"]).astimezone(timezone.utc))
        explanations = [_explanation(texts[row.lesson_id], row.text, row.ticked, row.at)
                        for row in activity["explanations"] if row.text and row.lesson_id in texts]
        return {"learner": {"id": learner.id, "name": _name(learner)}, "events": events,
                "explanations": explanations}

    def explanations(self, class_id: int, lesson_id: str, section: str = "") -> dict[str, Any]:
        """Every learner's explanation of one lesson side by side (a learner who wrote none: text None), with
        the lesson's key ideas and, per learner, those they ticked."""
        lesson = next((entry for entry in written_lessons() if entry["id"] == lesson_id), None)
        if lesson is None:
            raise ClassError(f"the path has no written lesson {lesson_id!r}", kind="not-found")
        written = {row.learner_id: (row.text, row.ticked, row.at)
                   for row in self.tables.class_activity(class_id)["explanations"] if row.lesson_id == lesson_id}
        learners = []
        for learner in self._learners(class_id, section):
            text, ticked, at = written.get(learner.id, (None, [], None))
            learners.append({"id": learner.id, "name": _name(learner)}
                            | _explanation(lesson, text, ticked, at))
        return {"lesson": {"id": lesson["id"], "title": lesson["title"], "key_ideas": lesson["key_ideas"]},
                "learners": learners}

    def gradebook(self, class_id: int, section: str = "") -> list[list[Any]]:
        """Rows for a CSV: a header, then one row per learner (per lesson: exercises passed, quiz right); of one
        section's learners only, with a ``section``."""
        data = self.overview(class_id, section)
        header = ["learner", "sections done", "lessons done", "exercises passed", "quiz right (first answer)",
                  "last active"]
        for lesson in data["path"]:
            header += [f"{lesson['id']}: exercises passed", f"{lesson['id']}: quiz right",
                       f"{lesson['id']}: hints opened", f"{lesson['id']}: passed after the solution was shown"]
        rows: list[list[Any]] = [header]
        for entry in data["roster"]:
            row: list[Any] = [entry["name"], entry["sections_done"], entry["lessons_done"], entry["exercises_passed"],
                              entry["quiz_right"], entry["last_active"] or ""]
            for lesson in entry["grid"]:
                row += [sum(lesson["exercises"].values()), sum(bool(v) for v in lesson["questions"].values()),
                        sum(help_used["hints"] for help_used in lesson["help"].values()),
                        sum(state == PASSED_WITH_SOLUTION for state in lesson["exercise_states"].values())]
            rows.append(row)
        rows = _with_credit(rows, data["roster"], *Deadlines(self.store, self.accounts).gradebook_columns(class_id))
        # The learner's section last: the columns before it keep their places for a spreadsheet made earlier.
        return [rows[0] + ["class section"]] + [row + [entry["section"]] for row, entry in zip(rows[1:], data["roster"])]


# ---------------------------------------------------------------- the overview's parts (data, then display text)


@dataclass(frozen=True)
class _Seen:
    """What a class did, gathered once for the overview from ClassStore.class_activity: only runs that
    count (graded here: an imported run's code is graded again here, classes/imports.py; a regrade's runs
    only while it is applied), each learner's first answer to each question."""

    work: dict[int, Work]
    last_active: dict[int, str]
    help_used: dict[tuple[int, str], dict[str, Any]]
    first_pass: dict[tuple[int, str], str]
    explained: set[tuple[int, str]]
    runs: dict[tuple[int, str], list[str]]  # (learner, exercise) -> statuses in order
    failing: dict[str, Counter[str]]  # exercise -> diagnoses of its failing runs
    first_answer: dict[tuple[int, str, str], tuple[str, bool]]  # (learner, lesson, question) -> (answer, right)
    wrong: dict[tuple[str, str], Counter[str]]  # (lesson, question) -> wrong answers


def _only(activity: ClassActivity, learners: set[int]) -> ClassActivity:
    """The class's activity of these learners only (a section's)."""
    return ClassActivity(
        submissions=[row for row in activity["submissions"] if row.learner_id in learners],
        answers=[row for row in activity["answers"] if row.learner_id in learners],
        explanations=[row for row in activity["explanations"] if row.learner_id in learners],
        help=[row for row in activity["help"] if row.learner_id in learners],
        work={key: value for key, value in activity["work"].items() if key in learners},
        last_active={key: value for key, value in activity["last_active"].items() if key in learners})


def _seen(activity: ClassActivity) -> _Seen:
    submissions = _counted(activity["submissions"])
    runs: dict[tuple[int, str], list[str]] = defaultdict(list)
    failing: dict[str, Counter[str]] = defaultdict(Counter)
    for run in submissions:
        runs[run.learner_id, run.exercise_id].append(run.status)
        if run.status != "pass":
            failing[run.exercise_id][diagnosis_of(run.result)] += 1
    first_answer: dict[tuple[int, str, str], tuple[str, bool]] = {}
    wrong: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for row in activity["answers"]:
        first_answer.setdefault((row.learner_id, row.lesson_id, row.question_id), (row.answer, row.correct))
        if not row.correct:
            wrong[row.lesson_id, row.question_id][row.answer] += 1
    return _Seen(work=activity["work"], last_active=activity["last_active"],
                 help_used=_help_by_exercise(activity["help"]), first_pass=_first_pass(submissions),
                 explained={(row.learner_id, row.lesson_id) for row in activity["explanations"]},
                 runs=runs, failing=failing, first_answer=first_answer, wrong=wrong)


def _lesson_cell(lesson: dict[str, Any], learner: int, seen: _Seen) -> tuple[dict[str, Any], Counter[str]]:
    """One lesson of one learner's grid, and what it adds to their totals. "Finished" is the one rule and
    its one builder (progress/finished.py), as on the learner's own page."""
    mine = seen.work.get(learner, Work())
    state = lesson_state(lesson, mine)
    firsts = {q: seen.first_answer[learner, lesson["id"], q][1] if (learner, lesson["id"], q) in seen.first_answer
              else None for q in lesson["quiz"]}
    helped = {e: seen.help_used.get((learner, e)) or {"hints": 0, "solution_at": None} for e in lesson["exercises"]}
    cell = {"lesson_id": lesson["id"], "done": state["lesson"], "sections": state["parts"],
            "exercises": {e: e in state["passed"] for e in lesson["exercises"]},
            "exercise_states": {e: exercise_state(e, mine, seen.first_pass.get((learner, e)), helped[e]["solution_at"])
                                for e in lesson["exercises"]},
            "help": {e: _help_entry(helped[e]["hints"], helped[e]["solution_at"] is not None)
                     for e in lesson["exercises"]},
            "explained": (learner, lesson["id"]) in seen.explained, "questions": firsts}
    tally = Counter(lessons_done=int(state["lesson"]), sections_done=len(state["sections"]),
                    sections=len(lesson["sections"]), exercises_passed=len(state["passed"]),
                    exercises=len(lesson["exercises"]), quiz_questions=len(lesson["quiz"]),
                    quiz_right=sum(bool(firsts.get(q)) for q in state["answered"]))
    return cell, tally


NOTHING_LATE: dict[str, Any] = {"exercises": [], "questions": [], "explanation": False}


def _roster_row(learner: Any, path: list[dict[str, Any]], seen: _Seen,
                credit: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One learner against the path: totals, last active, and the grid of their lessons, each with what of it
    came late (classes/deadlines.py's credit, ``credit``: this learner's, per lesson)."""
    cells: list[dict[str, Any]] = []
    totals: Counter[str] = Counter()
    for lesson in path:
        cell, tally = _lesson_cell(lesson, learner.id, seen)
        cell["late"] = credit.get(lesson["id"], {}).get("late_items", NOTHING_LATE)
        cells.append(cell)
        totals.update(tally)
    counted = ("sections_done", "sections", "lessons_done", "exercises_passed", "exercises", "quiz_right",
               "quiz_questions")
    return {"id": learner.id, "name": _name(learner), "section": learner.section} | {
        key: totals[key] for key in counted} | {
        "lessons": len(path), "last_active": seen.last_active.get(learner.id), "grid": cells}


def _tries(exercise: str, seen: _Seen) -> list[list[str]]:
    """Each learner's statuses of one exercise's runs, in order (learners who ran it)."""
    return [statuses for (_, ran), statuses in seen.runs.items() if ran == exercise]


def _exercise_row(lesson: dict[str, Any], exercise: str, seen: _Seen) -> dict[str, Any]:
    """An exercise's numbers: runs, learners who tried and passed, the share passing at their first run, the
    median runs to pass, the most common diagnoses of failing runs."""
    tried = _tries(exercise, seen)
    to_pass = [statuses.index("pass") + 1 for statuses in tried if "pass" in statuses]
    return {"lesson_id": lesson["id"], "exercise_id": exercise,
            "title": lesson["exercise_titles"].get(exercise, exercise),
            "runs": sum(len(statuses) for statuses in tried), "learners_tried": len(tried),
            "learners_passed": len(to_pass),
            "passed_first_run": sum(s[0] == "pass" for s in tried) / len(tried) if tried else None,
            "median_runs_to_pass": statistics.median(to_pass) if to_pass else None,
            "diagnoses": [{"diagnosis": text, "runs": count}
                          for text, count in seen.failing[exercise].most_common(TOP_DIAGNOSES)]}


def _with_exercise_texts(row: dict[str, Any]) -> dict[str, Any]:
    """An exercise's row with the texts a page shows of its numbers (pages format no number: number_text)."""
    tried, median = row["learners_tried"], row["median_runs_to_pass"]
    return row | {"passed_text": format_percent(row["learners_passed"] / tried if tried else None),
            "passed_first_run_text": format_percent(row["passed_first_run"]),
            "median_runs_to_pass_text": "\u2013" if median is None else format_number(median)}


def _question_row(lesson: dict[str, Any], question: str, seen: _Seen,
                  recall: Mapping[tuple[str, str], tuple[float | None, int]]) -> dict[str, Any]:
    """A question's first answers (the share right, the most chosen wrong answer) and FSRS's recall now."""
    firsts = [right for (_, lesson_id, asked), (_, right) in seen.first_answer.items()
              if (lesson_id, asked) == (lesson["id"], question)]
    common_wrong = seen.wrong[lesson["id"], question].most_common(1)
    predicted, cards = recall.get((lesson["id"], question), (None, 0))
    return {"lesson_id": lesson["id"], "question_id": question, "learners_answered": len(firsts),
            "lesson_title": lesson["title"], "prompt": lesson["question_prompts"].get(question, question),
            "share_right": sum(firsts) / len(firsts) if firsts else None,
            "most_chosen_wrong": {"answer": common_wrong[0][0], "times": common_wrong[0][1]} if common_wrong else None,
            "recall_now": predicted, "recall_cards": cards}


def _with_question_texts(row: dict[str, Any]) -> dict[str, Any]:
    """A question's row with the texts a page shows of its shares."""
    return row | {"share_right_text": format_percent(row["share_right"]),
                  "recall_now_text": format_percent(row["recall_now"])}


def _with_credit(rows: list[list[Any]], roster: list[dict], header: list[str], cells: dict[int, list]) -> list[list]:
    """The gradebook with each learner's credit as of their own due dates (classes/deadlines.py) at the end."""
    return [rows[0] + header] + [row + cells.get(entry["id"], [""] * len(header))
                                 for row, entry in zip(rows[1:], roster)]


def overview_etag(data: dict[str, Any]) -> str:
    """The overview's ETag: a hash of everything in it but FSRS's recall floats, which drift with every
    second (their texts, which change only at a whole percent, are part of it)."""
    def steady(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: steady(item) for key, item in value.items() if key != "recall_now"}
        return [steady(item) for item in value] if isinstance(value, list) else value

    digest = hashlib.sha256(json.dumps(steady(data), sort_keys=True, default=str).encode()).hexdigest()
    return f'"{digest[:32]}"'


def csv_text(rows: list[list[Any]]) -> str:
    """CSV in which no cell runs as a spreadsheet formula: a text cell starting with =, +, -, @ (or a tab
    or carriage return: roster.py's FORMULA_START) gets a leading apostrophe, as OWASP advises against CSV
    injection."""
    from chainrule.classes.roster import FORMULA_START

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in rows:
        writer.writerow(["'" + cell if isinstance(cell, str) and cell.startswith(FORMULA_START)
                         else cell for cell in row])
    return out.getvalue()
