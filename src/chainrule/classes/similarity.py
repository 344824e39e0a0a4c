"""Pairs of learners whose code for one exercise is unusually similar, for the teacher's page.

    found = similar_pairs(store, accounts, class_id, "forward-any-order")
    found["pairs"]   # [{"score", "a": {"learner_id", "name", "run_id", "language", "status", "source"}, "b": ...}]

Which runs: each learner's latest counting run of the exercise (what they stand behind now; a regrade's runs and
imported ones take no part), as classes/regrade.py picks "latest". Only runs in the same language are compared.

How: copydetect (a maintained implementation of winnowing, Schleimer et al. 2003, the method of MOSS) tokenizes
each file with Pygments, replaces names by one letter (so renamed variables change nothing) and drops comments
and layout (so changed comments change nothing), then keeps a winnowed set of k-gram fingerprints. Fingerprints
of the exercise's starter file in that language are boilerplate: code every learner was given never counts.
A pair's score is the smaller of the two shares of each file's fingerprinted code found in the other, so a
short file inside a long one is not enough. Computed on request for one exercise, never on a page view.
"""

from __future__ import annotations

import io
from itertools import combinations
from typing import Any

from chainrule.classes.accounts import Accounts
from chainrule.classes.regrade import Chosen, chosen_runs
from chainrule.errors import InputError
from chainrule.number_text import count_text, format_percent
from chainrule.progress.regrade_store import RegradeStore

__all__ = ["MAX_LEARNERS", "MAX_SOURCE_CHARS", "SIMILAR_AT", "similar_pairs"]

# A pair at or above this score is "unusually similar": independent solutions of our exercises share well
# under half their fingerprinted code once the starter is taken out; a copy with names and comments changed
# shares nearly all of it (tests/test_class_similarity.py plants both).
SIMILAR_AT = 0.6
# The cost is bounded: at most this many learners (those with the most recent runs; the answer says how many
# were left out), each file compared on at most its first MAX_SOURCE_CHARS characters.
MAX_LEARNERS = 120
MAX_SOURCE_CHARS = 20_000
# copydetect's defaults: matches shorter than NOISE tokens are ignored, longer than GUARANTEE always found.
NOISE, GUARANTEE = 25, 30
LEXERS = {"python": "python", "javascript": "javascript", "typescript": "typescript"}


def _fingerprint(source: str, language: str, boilerplate: list[int]) -> Any:
    from copydetect import CodeFingerprint

    return CodeFingerprint(f"run.{language}", NOISE, GUARANTEE - NOISE + 1, boilerplate=boilerplate,
                           language=LEXERS[language], fp=io.StringIO(source[:MAX_SOURCE_CHARS]))


def _starter_hashes(exercise_id: str, language: str) -> list[int]:
    from chainrule.grading import starter_source

    try:
        starter = starter_source(exercise_id, language)
    except ValueError:  # the exercise no longer offers that language: nothing to leave out
        return []
    return list(_fingerprint(starter, language, []).hashes)


def _known_exercise(exercise_id: str) -> None:
    from chainrule import lessons

    lessons.register_exercises()  # their starters are read by id (the web app has done it already)
    known = sorted({exercise for lesson in lessons.lesson_ids() for exercise in lessons.exercise_ids(lesson)})
    if exercise_id not in known:
        raise InputError(f"there is no exercise {exercise_id!r}: the exercises are {', '.join(known)}",
                         field="exercise")


def similar_pairs(store: Any, accounts: Accounts, class_id: int, exercise_id: str) -> dict[str, Any]:
    """The pairs of the class's learners whose latest runs of ``exercise_id`` score at least SIMILAR_AT,
    most similar first."""
    from copydetect import compare_files

    _known_exercise(exercise_id)
    _, runs = RegradeStore(store).runs_of_exercise(class_id, exercise_id)
    latest: list[tuple[int, Chosen]] = sorted(chosen_runs(runs, "latest").items(),
                                              key=lambda item: -item[1].submission_id)
    kept, left_out = latest[:MAX_LEARNERS], len(latest) - MAX_LEARNERS
    names = {account.id: account.name for account in accounts.learners(class_id)}
    statuses = {int(row.id): row.status for row in runs}
    boilerplate = {language: _starter_hashes(exercise_id, language)
                   for language in {run.language for _, run in kept if run.language in LEXERS}}
    prints = {learner: _fingerprint(run.source, run.language, boilerplate[run.language])
              for learner, run in kept if run.language in LEXERS}

    def side(learner: int, share: float) -> dict[str, Any]:
        run = dict(kept)[learner]
        return {"learner_id": learner, "name": names.get(learner, f"learner {learner}"), "run_id": run.submission_id,
                "language": run.language, "status": statuses.get(run.submission_id), "share": round(share, 3),
                "share_text": format_percent(share),
                "source": run.source, "cut": len(run.source) > MAX_SOURCE_CHARS}

    pairs: list[dict[str, Any]] = []
    for (first, run_a), (second, run_b) in combinations(sorted(kept, key=lambda item: item[0]), 2):
        if run_a.language != run_b.language or first not in prints or second not in prints:
            continue
        _, (share_a, share_b), _ = compare_files(prints[first], prints[second])
        score = min(float(share_a), float(share_b))
        if score >= SIMILAR_AT:
            pairs.append({"score": round(score, 3), "score_text": format_percent(score), "a": side(first, float(share_a)), "b": side(second, float(share_b))})
    pairs.sort(key=lambda pair: (-pair["score"], pair["a"]["name"], pair["b"]["name"]))
    # The page shows these texts as they are (one rule for a number's text: number_text).
    return {"exercise_id": exercise_id, "pick": "latest", "similar_at": SIMILAR_AT,
            "similar_at_text": format_percent(SIMILAR_AT), "learners": len(kept),
            "max_learners_text": count_text(MAX_LEARNERS, "learner"),
            "left_out": max(left_out, 0), "max_learners": MAX_LEARNERS, "max_source_chars": MAX_SOURCE_CHARS,
            "pairs": pairs}
