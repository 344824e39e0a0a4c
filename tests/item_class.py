"""A simulated class for the item-analysis tests: learners of known ability answer every quiz question and run
every exercise of the built-in lessons once, right or not by a 2-parameter logistic model whose item parameters
are drawn with a fixed seed; and each answers one question with fresh numbers in review, where one planted value
is hard. Each learner's first tries reach the real store as a progress file of their own (the store's import,
the path the product takes for a learner's work in bulk: one comparison and a few batched writes instead of 72
single writes, each a transaction with its quota query and, for a question, its card scheduled), kept as the
learner's own work (origin '', as a home import keeps it: what item analysis reads); the reviews, whose fresh numbers
no progress file carries, are rated one at a time.

    truth = simulate_class(store, accounts, class_id)   # {"difficulty": {key: expected share right}, "a": {...}}
"""

from __future__ import annotations

import math
import random
from concurrent.futures import ThreadPoolExecutor

from chainrule import lessons
from chainrule.lessons.fresh import draw_numbers
from chainrule.progress.exchange import EXPORT_VERSION, FORMAT_NAME, SECTIONS
from class_process import run_coroutine
from class_world import PASSWORD

SEED = 20261206
LEARNERS = 160
# The planted hard value: a review of backprop's product-gradient asked with upstream = -2 is mostly wrong.
HARD_LESSON, HARD_QUESTION, HARD_NAME, HARD_VALUE = "backprop", "product-gradient", "upstream", -2
REVIEWS_EACH, REVIEW_RIGHT, HARD_RIGHT = 2, 0.75, 0.15
WRITERS = 4
PASS = {"status": "pass", "verdict": "passed", "tests": []}
FAIL = {"status": "fail", "verdict": "failed", "tests": []}


def items() -> list[tuple[str, str, str]]:
    """(kind, lesson, item) of every quiz question and exercise of the built-in lessons."""
    return [(kind, lesson, item) for lesson in lessons.lesson_ids()
            for kind, ids in (("question", lessons.question_ids(lesson)), ("exercise", lessons.exercise_ids(lesson)))
            for item in ids]


def simulate_class(store, accounts, class_id: int, invite: str) -> dict[str, dict]:
    rng = random.Random(SEED)
    keys = items()
    a = {key: math.exp(rng.uniform(math.log(0.25), math.log(4.0))) for key in keys}  # discrimination
    b = {key: rng.uniform(-1.0, 1.0) for key in keys}  # difficulty (ability at which half are right)
    abilities = [rng.gauss(0.0, 1.0) for _ in range(LEARNERS)]
    question = next(q for q in lessons.lesson_data(HARD_LESSON)["quiz"] if q["id"] == HARD_QUESTION)

    def chance(key, theta: float) -> float:
        return 1.0 / (1.0 + math.exp(-a[key] * (theta - b[key])))

    # Every answer decided first (one seeded generator, in one order), then stored by a few writers at once,
    # each learner's in order, as learners working at the same time would.
    plans = []
    for number, theta in enumerate(abilities):
        firsts = [(key, rng.random() < chance(key, theta)) for key in keys]
        reviews = []
        for review in range(REVIEWS_EACH):
            numbers = draw_numbers(question, f"sim-{number}-{review}")
            reviews.append((numbers, rng.random() < (HARD_RIGHT if numbers[HARD_NAME] == HARD_VALUE else REVIEW_RIGHT)))
        # One join at a time, on a loop of its own (Playwright may have left one in this thread).
        learner = run_coroutine(accounts.join, invite, f"Sim {number:03d}", PASSWORD).id
        plans.append((number, learner, firsts, reviews))

    def learner_works(plan) -> None:
        number, learner, firsts, reviews = plan
        runs = store.for_learner(learner)
        at = runs.now().isoformat()
        document = {"format": FORMAT_NAME, "version": EXPORT_VERSION, "exported_at": at,
                    **{section: [] for section in SECTIONS},
                    "quiz_answers": [{"lesson_id": lesson, "question_id": item, "answer": "right" if right else "wrong",
                                      "correct": right, "at": at}
                                     for (kind, lesson, item), right in firsts if kind == "question"],
                    "submissions": [{"exercise_id": item, "language": "python", "source": f"# {item} by learner {number}\n",
                                     "result": PASS if right else FAIL, "at": at}
                                    for (kind, lesson, item), right in firsts if kind == "exercise"]}
        added = runs.import_data(document)
        assert (added["quiz_answers"], added["submissions"]) == (
            len(document["quiz_answers"]), len(document["submissions"])), added
        for numbers, right in reviews:
            runs.review(HARD_LESSON, HARD_QUESTION, "right" if right else "wrong", right, numbers)

    with ThreadPoolExecutor(WRITERS) as writers:
        list(writers.map(learner_works, plans))
    expected = {key: sum(chance(key, theta) for theta in abilities) / LEARNERS for key in keys}
    return {"difficulty": expected, "a": a}
