"""What the class knows, item by item, for the teacher's page (web/routes_items.py, static/js/teacher_items.js).

    found = item_analysis(store, class_id)
    found["items"]    # [{"kind", "lesson_id", "item_id", "tried", "right", "difficulty", "discrimination",
                      #   "hard_values": [{"name", "value", "answers", "share_right"}]}], each number's text beside it
    found["charts"]   # {"distribution": [a lesson's learners by score band], "pass_rate": [a day's first tries]}
    behind = item_learners(store, class_id, "exercise", "backprop", "neuron-grads")   # who tried it, their runs

An item is a quiz question or an exercise of the class's lessons. A learner's score on it is their first try:
the first answer to a question right, the first run of an exercise that counts passing (1), else 0.

- difficulty: the classical p-value, the share of the learners who tried the item whose first try was right
  (so a higher number is an easier item).
- discrimination: the corrected item-total correlation, the Pearson correlation (point-biserial, as the item
  is 0 or 1) between the item's score and the learner's rest score, the share right of every other item they
  tried (the item itself left out, so that it does not correlate with itself). Learners who tried nothing else
  take no part; with fewer than MIN_LEARNERS, or when everyone scored the same, there is none.
- hard values: a question with fresh numbers comes back in review with drawn numbers, kept with each review
  answer. For each drawn name and value, the share of review answers right; a value is hard when at least
  MIN_ANSWERS were asked with it and its share is HARD_GAP or more below the question's share in review.

Computed on request for one class, never on a page view, and bounded: the first MAX_LEARNERS learners to join
(the answer says how many were left out) and the latest MAX_REVIEWS review answers with fresh numbers.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from chainrule.classes.report import written_lessons
from chainrule.errors import InputError
from chainrule.number_text import count_text, format_number, format_percent
from chainrule.progress.dialect import Record
from chainrule.progress.item_store import ItemRows, item_rows
from chainrule.progress.store import ProgressStore

__all__ = ["HARD_GAP", "MAX_LEARNERS", "MAX_REVIEWS", "MIN_ANSWERS", "MIN_LEARNERS", "KINDS", "item_analysis",
           "item_learners"]

# The bound of one request: a class larger than this is analysed on its first MAX_LEARNERS learners.
MAX_LEARNERS = 2000
MAX_REVIEWS = 50_000
# A discrimination needs this many learners who tried the item and something else.
MIN_LEARNERS = 5
# The one rule for a hard drawn value: at least MIN_ANSWERS review answers with it, and a share right at least
# HARD_GAP (25 percentage points) below the question's share right in review.
MIN_ANSWERS = 10
HARD_GAP = 0.25
# The score bands of a lesson's distribution: [0, 20 %), [20 %, 40 %) ... [80 %, 100 %].
BANDS = 5
KINDS = ("question", "exercise")

DIFFICULTY_RULE = ("Difficulty is the share of the learners who tried an item whose first try was right "
                   "(higher: easier).")
DISCRIMINATION_RULE = ("Discrimination is the correlation between a learner's first try at the item (right or "
                       "not) and their share right on every other item they tried, the item itself left out: "
                       "near 0, the item does not tell stronger learners from weaker ones; below 0, it tells "
                       f"them the wrong way round. There is none until {count_text(MIN_LEARNERS, 'learner')} have "
                       "tried the item and something else.")
HARD_RULE = (f"A drawn value is hard when at least {count_text(MIN_ANSWERS, 'review answer')} were asked with it "
             f"and their share right is {format_percent(HARD_GAP)} or more below the question's share in review.")

Key = tuple[str, str, str]  # (kind, lesson, item)


def _scores(rows: ItemRows) -> dict[Key, dict[int, tuple[bool, Any, str]]]:
    """(kind, lesson, item) -> learner -> (first try right, the run's id or None, when)."""
    lesson_of = {exercise: lesson["id"] for lesson in written_lessons() for exercise in lesson["exercises"]}
    scores: dict[Key, dict[int, tuple[bool, Any, str]]] = defaultdict(dict)
    for answer in rows["first_answers"]:
        scores["question", answer.lesson_id, answer.question_id][answer.learner_id] = (bool(answer.correct), None,
                                                                                       answer.at)
    for run in rows["first_runs"]:
        if run.exercise_id in lesson_of:
            scores["exercise", lesson_of[run.exercise_id], run.exercise_id][run.learner_id] = (
                run.status == "pass", int(run.id), run.at)
    return scores


def _correlation(xs: list[float], ys: list[float]) -> float | None:
    if len(xs) < MIN_LEARNERS:
        return None
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys))
    sxx, syy = sum((x - mean_x) ** 2 for x in xs), sum((y - mean_y) ** 2 for y in ys)
    return None if sxx == 0 or syy == 0 else sxy / math.sqrt(sxx * syy)


def _hard_values(reviews: list[tuple[bool, dict[str, Any]]]) -> dict[str, Any]:
    """A question's review answers with drawn numbers: its share right, and the values that are hard."""
    tally: dict[tuple[str, float], list[int]] = defaultdict(lambda: [0, 0])
    for right, numbers in reviews:
        for name, value in numbers.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                tally[name, float(value)][0] += 1
                tally[name, float(value)][1] += int(right)
    share = sum(right for right, _ in reviews) / len(reviews) if reviews else None
    hard = [{"name": name, "value": value, "value_text": format_number(value), "answers": asked,
             "answers_text": count_text(asked, "review answer"), "share_right": right / asked,
             "share_right_text": format_percent(right / asked)}
            for (name, value), (asked, right) in sorted(tally.items())
            if share is not None and asked >= MIN_ANSWERS and right / asked <= share - HARD_GAP]
    hard.sort(key=lambda entry: (entry["share_right"], entry["name"], entry["value"]))
    return {"reviews": len(reviews), "reviews_text": count_text(len(reviews), "review answer"),
            "review_share_right": share, "review_share_right_text": format_percent(share), "hard_values": hard}


def _item(kind: str, lesson: dict[str, Any], item_id: str, scored: dict[int, tuple[bool, Any, str]],
          totals: dict[int, list[int]], reviews: list[tuple[bool, dict[str, Any]]]) -> dict[str, Any]:
    tried, right = len(scored), sum(first for first, _, _ in scored.values())
    share = right / tried if tried else None
    pairs = [(float(first), (totals[learner][1] - first) / (totals[learner][0] - 1))
             for learner, (first, _, _) in scored.items() if totals[learner][0] > 1]
    discrimination = _correlation([x for x, _ in pairs], [rest for _, rest in pairs])
    titles = lesson["exercise_titles"] if kind == "exercise" else lesson["question_prompts"]
    title = titles.get(item_id, item_id)
    found = {"kind": kind, "lesson_id": lesson["id"], "lesson_title": lesson["title"], "item_id": item_id,
             "title": title, "tried": tried, "tried_text": count_text(tried, "learner"), "right": right,
             "right_text": count_text(right, "learner"), "difficulty": share, "difficulty_text": format_percent(share),
             "discrimination": None if discrimination is None else round(discrimination, 4),
             "discrimination_text": "\u2013" if discrimination is None else format_number(discrimination, 2),
             "discrimination_learners": len(pairs)}
    return found | (_hard_values(reviews) if kind == "question" else {"hard_values": []})


def _band(share: float) -> int:
    return min(int(share * BANDS), BANDS - 1)


def _distribution(lesson: dict[str, Any], scores: dict[Key, dict[int, tuple[bool, Any, str]]]) -> dict[str, Any]:
    """A lesson's learners (those who tried any of its items) by their share of first tries right, in bands."""
    mine: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for (_, lesson_id, _), scored in scores.items():
        if lesson_id == lesson["id"]:
            for learner, (first, _, _) in scored.items():
                mine[learner][0] += 1
                mine[learner][1] += int(first)
    counts = [0] * BANDS
    for tried, right in mine.values():
        counts[_band(right / tried)] += 1
    edges = [format_percent(k / BANDS) for k in range(BANDS + 1)]
    return {"lesson_id": lesson["id"], "title": lesson["title"], "learners": len(mine),
            "learners_text": count_text(len(mine), "learner"),
            "bands": [{"label": f"{edges[k]} to {edges[k + 1]}", "learners": counts[k],
                       "learners_text": count_text(counts[k], "learner")} for k in range(BANDS)]}


def _pass_rate(scores: dict[Key, dict[int, tuple[bool, Any, str]]]) -> list[dict[str, Any]]:
    """Each day's first tries (of any item, by the UTC day they were made) and the share of them right."""
    days: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for scored in scores.values():
        for first, _, at in scored.values():
            days[at[:10]][0] += 1
            days[at[:10]][1] += int(first)
    return [{"day": day, "tries": tried, "tries_text": count_text(tried, "first try", "first tries"),
             "right": right, "share_right": right / tried, "share_right_text": format_percent(right / tried)}
            for day, (tried, right) in sorted(days.items())]


def _read(store: ProgressStore, class_id: int, only: set[int] | None = None
          ) -> tuple[ItemRows, dict[Key, dict[int, tuple[bool, Any, str]]]]:
    """The rows read, and each item's scores; with ``only`` (a section's learners), only theirs."""
    rows = item_rows(store, class_id, max_learners=MAX_LEARNERS, max_reviews=MAX_REVIEWS)
    if only is not None:  # the section's size stands for the class's: beyond the bound are its own left out

        def theirs(records: list[Record]) -> list[Record]:
            return [row for row in records if int(row.learner_id) in only]

        rows = {"learners": [row for row in rows["learners"] if int(row.id) in only], "learners_in_class": len(only),
                "first_answers": theirs(rows["first_answers"]), "first_runs": theirs(rows["first_runs"]),
                "reviews": theirs(rows["reviews"])}
    return rows, _scores(rows)


def item_analysis(store: ProgressStore, class_id: int, only: set[int] | None = None) -> dict[str, Any]:
    """Every item of the class's lessons with its numbers, and the charts' data; the page shows the texts.
    ``only``: the learners of one section (classes/class_sections.py), the others left out of every number."""
    rows, scores = _read(store, class_id, only)
    totals: dict[int, list[int]] = defaultdict(lambda: [0, 0])  # learner -> [items tried, right first]
    for scored in scores.values():
        for learner, (first, _, _) in scored.items():
            totals[learner][0] += 1
            totals[learner][1] += int(first)
    reviewed: dict[tuple[str, str], list[tuple[bool, dict[str, Any]]]] = defaultdict(list)
    for review in rows["reviews"]:
        reviewed[review.lesson_id, review.question_id].append((bool(review.correct), review.numbers))
    path = written_lessons()
    items = [_item(kind, lesson, item_id, scores.get((kind, lesson["id"], item_id), {}), totals,
                   reviewed.get((lesson["id"], item_id), []))
             for lesson in path for kind, ids in (("question", lesson["quiz"]), ("exercise", lesson["exercises"]))
             for item_id in ids]
    left_out = rows["learners_in_class"] - len(rows["learners"])
    return {"learners": len(rows["learners"]), "learners_text": count_text(len(rows["learners"]), "learner"),
            "left_out": left_out, "left_out_text": count_text(left_out, "learner"),
            "max_learners": MAX_LEARNERS, "max_learners_text": count_text(MAX_LEARNERS, "learner"),
            "rules": {"difficulty": DIFFICULTY_RULE, "discrimination": DISCRIMINATION_RULE, "hard": HARD_RULE},
            "items": items,
            "charts": {"distribution": [_distribution(lesson, scores) for lesson in path],
                       "pass_rate": _pass_rate(scores)}}


def item_learners(store: ProgressStore, class_id: int, kind: str, lesson_id: str, item_id: str) -> dict[str, Any]:
    """The learners who tried one item, each with their first try (and for an exercise, that run's id)."""
    if kind not in KINDS:
        raise InputError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}", field="kind")
    lesson = next((entry for entry in written_lessons() if entry["id"] == lesson_id), None)
    if lesson is None:
        known = ", ".join(entry["id"] for entry in written_lessons())
        raise InputError(f"there is no lesson {lesson_id!r}: the lessons are {known}", field="lesson")
    ids = lesson["quiz"] if kind == "question" else lesson["exercises"]
    if item_id not in ids:
        raise InputError(f"lesson {lesson_id!r} has no {kind} {item_id!r}: its {kind}s are {', '.join(ids)}",
                         field="item")
    rows, scores = _read(store, class_id)
    names = {int(learner.id): learner.name for learner in rows["learners"]}
    scored = scores.get((kind, lesson_id, item_id), {})
    learners = [{"learner_id": learner, "name": names.get(learner, f"learner {learner}"), "right": first,
                 "run_id": run_id, "at": at} for learner, (first, run_id, at) in scored.items()]
    learners.sort(key=lambda entry: (entry["right"], entry["name"]))
    return {"kind": kind, "lesson_id": lesson_id, "item_id": item_id, "learners": learners,
            "learners_text": count_text(len(learners), "learner")}
