"""`chainrule progress optimize` and `chainrule class optimize`: FSRS's parameters fitted to review logs with
chainrule's compiled replay (progress/fitting.py). The model is py-fsrs's own (its optimizer's log-loss, to the
last bits, on the same logs); the fit's log-loss is within 1 % of py-fsrs's optimizer (which needs PyTorch)
on the same logs; fitted parameters schedule only when they predict held-out reviews better; and a class's
teacher sees the recall FSRS predicts now for each question."""

from __future__ import annotations

import hashlib
import json
import random
import re
from datetime import datetime, timedelta, timezone
from importlib.metadata import version
from pathlib import Path

import pytest

from chainrule import cli, lessons
from chainrule.classes import CLASS_DATABASE
from chainrule.classes.accounts import Accounts
from chainrule.classes.report import ClassReport
from chainrule.progress import fitting, open_store
from chainrule.progress.scheduling import fit_scope, make_scheduler
from class_process import run_coroutine
from class_world import FAST_HASHER
from reference_torch import needs_torch  # py-fsrs's optimizer, the reference, needs PyTorch (and pandas)

fsrs = pytest.importorskip("fsrs")
from fsrs import Optimizer, Rating, ReviewLog  # noqa: E402

# Learners whose memory fades faster than FSRS's defaults assume (a larger decay, a smaller first stability).
TRUTH = list(fitting.DEFAULT_PARAMETERS)
TRUTH[0], TRUTH[2], TRUTH[8], TRUTH[10], TRUTH[20] = 0.1, 0.8, 1.2, 0.9, 0.45
ROOT = Path(__file__).resolve().parents[1]


def py_fsrs(reviews) -> Optimizer:
    return Optimizer([ReviewLog(card_id=hash(r.card) % 10**9 + 1, rating=Rating(r.rating), review_datetime=r.at,
                                review_duration=None) for r in reviews])


@needs_torch
def test_the_model_is_py_fsrs_own_to_the_last_bits() -> None:
    reviews = fitting.simulated_reviews(40, TRUTH, seed=3)
    loss = fitting.FsrsLoss(list(fitting.histories_of(reviews).values()))
    reference = py_fsrs(reviews)
    rng = random.Random(1)
    for parameters in (fitting.DEFAULT_PARAMETERS, TRUTH,
                       [low + rng.random() * (high - low) for low, high in zip(
                           fsrs.scheduler.LOWER_BOUNDS_PARAMETERS, fsrs.scheduler.UPPER_BOUNDS_PARAMETERS)]):
        assert loss.value(parameters) == pytest.approx(
            reference._compute_batch_loss(parameters=list(parameters)), rel=1e-12)


# py-fsrs's optimizer's fit of the logs below takes it about ten core-seconds (5 epochs of PyTorch on scalars),
# the most of this file: its result is kept in fsrs_reference.json, with the py-fsrs version and a digest of the
# logs it was fitted to. Another version or other logs and the test fits again (and says how to keep the new fit).
REFERENCE = Path(__file__).with_name("fsrs_reference.json")


def logs_digest(reviews) -> str:
    return hashlib.sha256(json.dumps([[r.card, int(r.rating), r.at.isoformat()] for r in reviews]).encode()).hexdigest()


def reference_fit(reviews, record: bool = False) -> list[float]:
    """py-fsrs's optimizer's parameters for ``reviews``: the kept ones when they were fitted by this py-fsrs to
    these very logs, else fitted now (and kept, with ``record``: `python tests/test_fsrs_fit.py`)."""
    kept = json.loads(REFERENCE.read_text()) if REFERENCE.is_file() else {}
    key = {"py_fsrs": version("fsrs"), "logs_sha256": logs_digest(reviews)}
    if not record and all(kept.get(name) == value for name, value in key.items()):
        return kept["parameters"]
    parameters = py_fsrs(reviews).compute_optimal_parameters()
    if record:
        REFERENCE.write_text(json.dumps({**key, "parameters": parameters}, indent=1) + "\n")
    else:
        print(f"py-fsrs's fit was made again ({key} differs from {REFERENCE.name}); keep it with "
              f"`python tests/test_fsrs_fit.py`")
    return parameters


def reference_reviews():
    return fitting.simulated_reviews(70, TRUTH, seed=5)


def test_the_kept_reference_fit_is_for_the_pinned_py_fsrs_and_these_logs() -> None:
    """The kept fit is used only while it is still py-fsrs's answer: the version pinned in pyproject.toml (the one
    installed) and the logs this file simulates; and it is a real fit, not the defaults py-fsrs returns for too
    few reviews (fewer than one mini-batch of 512)."""
    kept = json.loads(REFERENCE.read_text())
    pinned = re.search(r'"fsrs\[optimizer\]==([^"]+)"', (ROOT / "pyproject.toml").read_text()).group(1)
    assert kept["py_fsrs"] == pinned == version("fsrs")
    assert kept["logs_sha256"] == logs_digest(reference_reviews())
    assert len(kept["parameters"]) == len(fitting.DEFAULT_PARAMETERS)
    assert kept["parameters"] != list(fitting.DEFAULT_PARAMETERS)


@needs_torch
def test_the_fit_is_within_one_percent_of_py_fsrs_optimizer_on_the_same_logs() -> None:
    reviews = reference_reviews()
    reference = py_fsrs(reviews)
    theirs = reference._compute_batch_loss(parameters=reference_fit(reviews))  # scored by py-fsrs now
    ours, _ = fitting.adam(fitting.FsrsLoss(list(fitting.histories_of(reviews).values())))
    ours_loss = reference._compute_batch_loss(parameters=ours)  # scored by py-fsrs itself
    assert ours_loss <= 1.01 * theirs, (ours_loss, theirs)
    default = reference._compute_batch_loss(parameters=list(fitting.DEFAULT_PARAMETERS))
    assert ours_loss < default


def test_fitted_parameters_are_used_only_when_they_predict_held_out_reviews_better() -> None:
    far = fitting.fit(fitting.simulated_reviews(120, TRUTH, seed=7), steps=120)
    assert far.used and far.fitted_loss < far.default_loss and far.held_out_predictions > 150
    near = fitting.fit(fitting.simulated_reviews(25, fitting.DEFAULT_PARAMETERS, seed=8), steps=120)
    assert not near.used and near.fitted_loss >= near.default_loss
    assert "defaults" in near.reason
    empty = fitting.fit([])
    assert not empty.used and "not enough reviews" in empty.reason


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now


def replay(store, clock: Clock, reviews, key=lambda card: ("lesson", f"q{card}")) -> None:
    """Answer and review through the store, at the simulated times (Again wrong, Good right)."""
    histories = fitting.histories_of(reviews)
    for card, history in histories.items():
        lesson, question = key(card)
        for index, review in enumerate(history):
            clock.now = review.at
            right = review.rating != Rating.Again
            if index == 0:
                store.answer_question(lesson, question, "answer", right)
            else:
                store.review(lesson, question, "answer", right)


def test_progress_optimize_fits_the_personal_logs_and_the_store_then_schedules_with_them(tmp_path, capsys) -> None:
    clock = Clock()
    store = open_store(tmp_path, clock=clock, fuzzing=False)
    # 12 reviews per card: with 8, the held-out cards cannot tell TRUTH from the defaults (log-loss 0.3007 vs
    # 0.3002), so no fit could be used; with 12, TRUTH's is 0.3340 against the defaults' 0.3401.
    replay(store, clock, fitting.simulated_reviews(110, TRUTH, seed=11, reviews_per_card=12, again_or_good=True))
    store.close()
    assert cli.main(["progress", "optimize", "--data-dir", str(tmp_path), "--steps", "80"]) == 0
    out = capsys.readouterr().out
    assert "with chainrule's compiled replay" in out and "Used for scheduling from now on" in out, out
    store = open_store(tmp_path, clock=clock, fuzzing=False)
    try:
        fit = fitting.load_fit(store, fit_scope("learner", 0))
        assert fit["used"] and fit["fitted_loss"] < fit["default_loss"]
        assert f"{fit['fitted_loss']:.4f}" in out and f"{fit['default_loss']:.4f}" in out
        clock.now += timedelta(days=400)
        store.answer_question("lesson", "a new question", "answer", True)
        expected, _ = make_scheduler(False, fit["parameters"]).review_card(
            fsrs.Card(card_id=1, due=clock.now), Rating.Good, review_datetime=clock.now)
        assert store.card("lesson", "a new question")["due"] == expected.due.isoformat()
        assert make_scheduler(False).review_card(fsrs.Card(card_id=1, due=clock.now), Rating.Good,
                                                 review_datetime=clock.now)[0].due != expected.due
    finally:
        store.close()


def test_a_class_fits_its_pooled_logs_and_the_teacher_sees_recall_now_per_question(tmp_path, capsys) -> None:
    clock = Clock()
    store = open_store(tmp_path, clock=clock, fuzzing=False, file_name=CLASS_DATABASE)
    accounts = Accounts(store, hasher=FAST_HASHER)
    made = accounts.create_class("Physics")
    questions = [("backprop", q["id"]) for q in lessons.lesson_data("backprop")["quiz"]]
    learners = [run_coroutine(accounts.join, made.invite_token, f"learner {n}", "correct horse battery")
                for n in range(24)]
    reviews = fitting.simulated_reviews(len(learners) * len(questions), TRUTH, seed=13, reviews_per_card=7,
                                        again_or_good=True)
    for card, history in fitting.histories_of(reviews).items():
        learner, question = divmod(card, len(questions))
        replay(store.for_learner(learners[learner].id), clock, history, key=lambda _: questions[question])
    store.close()
    place = ["--data-dir", str(tmp_path)]
    assert cli.main(["class", "optimize", "Physics", "--steps", "80", *place]) == 0
    out = capsys.readouterr().out
    assert "reviews of 120 cards" in out and "held-out" in out
    store = open_store(tmp_path, clock=clock, file_name=CLASS_DATABASE)
    try:
        clock.now = max(r.at for r in reviews) + timedelta(days=3)
        data = ClassReport(store, Accounts(store)).overview(made.class_id)
        fit = fitting.load_fit(store, fit_scope("class", made.class_id))
        scheduler = make_scheduler(False, fit["parameters"] if fit["used"] else None)
        for lesson, question in questions:
            entry = next(q for q in data["questions"] if (q["lesson_id"], q["question_id"]) == (lesson, question))
            cards = [fsrs.Card.from_dict(json.loads(json.dumps(store.for_learner(a.id).card(lesson, question))))
                     for a in learners]
            expected = [scheduler.get_card_retrievability(c, clock.now) for c in cards]
            assert entry["recall_cards"] == len(learners)
            assert entry["recall_now"] == pytest.approx(sum(expected) / len(expected), rel=1e-12)
    finally:
        store.close()
    assert cli.main(["class", "questions", "Physics", *place]) == 0
    out = capsys.readouterr().out
    assert "recall now" in out and "Fading first (lowest predicted recall now): backprop/" in out


@pytest.mark.parametrize("command", [["progress", "optimize"], ["class", "optimize", "Physics"]])
@pytest.mark.parametrize("steps", ["0", "-3", "many"])
def test_optimize_refuses_steps_that_are_not_a_whole_number_from_1(command, steps, tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as stopped:
        cli.main([*command, "--data-dir", str(tmp_path), "--steps", steps])
    assert stopped.value.code == 2
    assert f"--steps must be a whole number >= 1, got {steps if steps != 'many' else repr(steps)}" in (
        capsys.readouterr().err)


if __name__ == "__main__":  # keep py-fsrs's fit of the reference logs (after a py-fsrs upgrade)
    reference_fit(reference_reviews(), record=True)
    print(f"kept in {REFERENCE}")
