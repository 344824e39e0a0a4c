"""Fitting FSRS's 21 parameters to review logs with chainrule's own engine (compiled replay, no PyTorch).

FSRS predicts the probability of recalling a card, R = (1 + F t / S)^-w20 after t days, from a stability S and
a difficulty D that each review updates by rules with 21 parameters w (py-fsrs 6's, reproduced here rule by rule:
`history_loss`). py-fsrs fits them with PyTorch (Adam on mini-batches, fsrs.Optimizer). Here one card's review
history is one example of a function that chainrule.compile traces once per history length: the log-loss of
every prediction that history makes (a review at least a day after the previous one, as py-fsrs counts them),
with the choices the rules make from the logs (the rating, a same-day review) as input columns, and the
choices they make from the numbers (clamps, a minimum) as relu, so the graph is the same for every card. A fit
is then full-batch Adam over all histories, the parameters kept within py-fsrs's bounds.

The fitted parameters are used for scheduling only when they predict held-out reviews better than the
defaults: the cards are split, one in five held out, the fit sees the others, and both parameter sets are
scored on the held-out cards' reviews (`fit`).
"""

from __future__ import annotations

import json
import math
import random
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Hashable, Iterable, Sequence

from fsrs import Card, Rating, Scheduler
from fsrs.scheduler import DEFAULT_PARAMETERS, LOWER_BOUNDS_PARAMETERS, UPPER_BOUNDS_PARAMETERS

import chainrule
from chainrule import Value
from chainrule.number_text import count_text
from chainrule.progress.class_store import CLASS_LEARNERS as _CLASS_LEARNERS
from chainrule.progress.scheduling import fit_scope, make_scheduler
from chainrule.progress.validation import stored_card

if TYPE_CHECKING:
    from numpy import float64
    from numpy.typing import NDArray

    from chainrule.progress.store import ProgressStore

__all__ = ["Review", "FitResult", "histories_of", "history_loss", "FsrsLoss", "fit", "simulated_reviews",
           "DEFAULT_PARAMETERS", "MAX_REVIEWS_PER_CARD", "learner_reviews", "class_reviews", "save_fit", "load_fit",
           "recall_now", "summary"]

MAX_REVIEWS_PER_CARD = 64  # as py-fsrs's optimizer: the first 64 reviews of each card
HELD_OUT = 5  # one card in five is held out to decide whether the fit is used
LENGTHS = (2, 4, 8, 16, 32, 64)  # histories are padded to the next of these (one compiled function each)
COLUMNS = ("first", "short", "long", "again", "hard", "easy", "rating", "days", "recalled")


@dataclass(frozen=True)
class Review:
    """One rating of one card: its key (any hashable), when, and the rating 1-4 (Again, Hard, Good, Easy)."""

    card: Hashable
    at: datetime
    rating: int


def histories_of(reviews: Iterable[Review]) -> dict[Hashable, list[Review]]:
    """Each card's reviews, oldest first, at most MAX_REVIEWS_PER_CARD."""
    found: dict[Hashable, list[Review]] = {}
    for review in reviews:
        found.setdefault(review.card, []).append(review)
    return {card: sorted(items, key=lambda r: r.at)[:MAX_REVIEWS_PER_CARD] for card, items in found.items()}


# --- the model: one card's history, written with Values ------------------------------------------------------


def _at_least(x: Value, low: float) -> Value:
    return (x - low).relu() + low


def _between(x: Value, low: float, high: float) -> Value:
    return high - (high - _at_least(x, low)).relu()


def _log_at_least_minus_100(x: Value) -> Value:
    """log x, but at least -100, as torch.nn.BCELoss clamps it (so that a prediction of exactly 0 or 1 costs
    100, not inf)."""
    return (x.log() + 100.0).relu() - 100.0


def history_loss(w: Sequence[Value], steps: Sequence[Sequence[Value]]) -> Value:
    """The sum of the log-losses of one card's predictions, under parameters `w` (21 Values).

    `steps` holds per review the columns of COLUMNS: first (1 for the card's first review), short (a review
    the same day as the previous one: short-term stability), long (a day or more later: a prediction, scored),
    again / hard / easy (the rating's indicators), rating (1-4), days (since the previous review; 1 where
    not long, unused there), recalled (0 for Again, else 1). A padding step has first = short = long = 0
    and keeps the state. The rules are py-fsrs 6.3.2's (fsrs.Scheduler), the clamps written with relu.
    """
    decay = -w[20]
    factor = Value(0.9) ** (1.0 / decay) - 1.0
    easy_difficulty = w[4] - (w[5] * 3.0).exp() + 1.0  # the initial difficulty of Easy, unclamped
    stability, difficulty = Value(1.0), Value(5.0)  # before the first review: any finite state
    total = Value(0.0)
    for first, short, long, again, hard, easy, rating, days, recalled in steps:
        good = 1.0 - again - hard - easy
        keep = 1.0 - first - short - long
        # the first review: initial stability and difficulty
        stability0 = w[0] * again + w[1] * hard + w[2] * good + w[3] * easy
        difficulty0 = _between(w[4] - (w[5] * (rating - 1.0)).exp() + 1.0, 1.0, 10.0)
        # a prediction, scored when `long`
        recall = (1.0 + factor * days / stability) ** decay
        loss = -(recalled * _log_at_least_minus_100(recall) + (1.0 - recalled) * _log_at_least_minus_100(1.0 - recall))
        total = total + long * loss
        # the same day: short-term stability (at least the old one unless Again)
        increase = (w[17] * (rating - 3.0 + w[18])).exp() * stability ** (-w[19])
        increase = again * increase + (1.0 - again) * _at_least(increase, 1.0)
        stability_short = _at_least(stability * increase, 0.001)
        # a day or more later: forgotten (Again) or recalled
        forgot = w[11] * difficulty ** (-w[12]) * ((stability + 1.0) ** w[13] - 1.0) * ((1.0 - recall) * w[14]).exp()
        forgot_short = stability / (w[17] * w[18]).exp()
        forgot = forgot - (forgot - forgot_short).relu()  # the smaller of the two
        bonus = (1.0 + hard * (w[15] - 1.0)) * (1.0 + easy * (w[16] - 1.0))
        recalled_stability = stability * (1.0 + w[8].exp() * (11.0 - difficulty) * stability ** (-w[9])
                                          * (((1.0 - recall) * w[10]).exp() - 1.0) * bonus)
        stability_long = _at_least(again * forgot + (1.0 - again) * recalled_stability, 0.001)
        # the difficulty after any later review: damped towards the easy one
        change = -(w[6] * (rating - 3.0))
        damped = difficulty + (10.0 - difficulty) * change / 9.0
        difficulty_next = _between(w[7] * easy_difficulty + (1.0 - w[7]) * damped, 1.0, 10.0)
        stability = first * stability0 + short * stability_short + long * stability_long + keep * stability
        difficulty = first * difficulty0 + (short + long) * difficulty_next + keep * difficulty
    return total


def _columns(history: Sequence[Review], length: int) -> tuple[list[list[float]], int]:
    """One history as COLUMNS x length numbers (padded), and how many predictions it scores."""
    rows, scored, previous = [], 0, None
    for review in history:
        days: int | None = None if previous is None else (review.at - previous.at).days
        first, short, long = previous is None, days is not None and days < 1, days is not None and days >= 1
        scored += long
        rows.append([float(first), float(short), float(long), float(review.rating == Rating.Again),
                     float(review.rating == Rating.Hard), float(review.rating == Rating.Easy), float(review.rating),
                     float(days) if long and days is not None else 1.0, float(review.rating != Rating.Again)])
        previous = review
    rows += [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 1.0, 1.0]] * (length - len(rows))
    return rows, scored


class FsrsLoss:
    """The mean log-loss of every prediction in a set of histories, and its gradient in the 21 parameters,
    by compiled replay: one compiled `history_loss` per padded length, each over its histories at once."""

    def __init__(self, histories: Sequence[Sequence[Review]]) -> None:
        import numpy as np

        self.np = np
        self.parameters = [Value(x) for x in DEFAULT_PARAMETERS]
        self.groups = []  # (compiled, columns)
        self.scored = 0
        by_length: dict[int, list[list[list[float]]]] = {}
        for history in histories:
            length = next(n for n in LENGTHS if n >= len(history))
            rows, scored = _columns(history, length)
            if scored:
                by_length.setdefault(length, []).append(rows)
                self.scored += scored
        for length, cards in sorted(by_length.items()):
            data = np.asarray(cards, dtype=np.float64)  # (cards, length, COLUMNS)
            columns = [data[:, step, k] for step in range(length) for k in range(len(COLUMNS))]
            compiled = chainrule.compile(lambda *xs, n=length: history_loss(
                self.parameters, [xs[i * len(COLUMNS):(i + 1) * len(COLUMNS)] for i in range(n)]),
                self.parameters, n_inputs=length * len(COLUMNS))
            self.groups.append((compiled, columns))

    def value(self, theta: Sequence[float]) -> float:
        total = sum(float(compiled.values(*columns, params=theta).sum()) for compiled, columns in self.groups)
        return total / self.scored if self.scored else math.nan

    def value_and_grad(self, theta: Sequence[float]) -> tuple[float, NDArray[float64]]:
        np = self.np
        total, grads = 0.0, np.zeros(len(DEFAULT_PARAMETERS))
        for compiled, columns in self.groups:
            values, g = compiled.value_and_grad(*columns, params=theta)
            total += float(values.sum())
            grads += g
        return total / self.scored, grads / self.scored


@dataclass
class FitResult:
    """A fit: the parameters, the held-out log-loss with them and with the defaults, whether they are used."""

    parameters: list[float]
    default_loss: float  # mean log-loss on the held-out cards' predictions, default parameters
    fitted_loss: float  # the same with the fitted parameters
    train_loss: float  # the fit's own log-loss on the cards it saw
    reviews: int  # reviews in the logs (at most MAX_REVIEWS_PER_CARD per card)
    cards: int
    held_out_predictions: int
    seconds: float  # the fit's time (CPU), compile included
    steps: int
    used: bool = field(default=False)
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def adam(loss: FsrsLoss, steps: int = 250, learning_rate: float = 0.04) -> tuple[list[float], float]:
    """Full-batch Adam from the defaults, each step clipped to py-fsrs's bounds, with the learning rate
    annealed on a cosine, as py-fsrs's optimizer does on mini-batches; the best parameters seen."""
    np = loss.np
    theta = np.asarray(DEFAULT_PARAMETERS, dtype=np.float64)
    low, high = np.asarray(LOWER_BOUNDS_PARAMETERS), np.asarray(UPPER_BOUNDS_PARAMETERS)
    m, v = np.zeros_like(theta), np.zeros_like(theta)
    best, best_loss = theta.copy(), math.inf
    for step in range(1, steps + 1):
        value, grads = loss.value_and_grad(theta)
        if value < best_loss and math.isfinite(value):
            best, best_loss = theta.copy(), value
        if not np.all(np.isfinite(grads)):
            break
        rate = learning_rate * 0.5 * (1.0 + math.cos(math.pi * (step - 1) / steps))
        m = 0.9 * m + 0.1 * grads
        v = 0.999 * v + 0.001 * grads * grads
        theta = np.clip(theta - rate * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-8), low, high)
    final = loss.value(theta)
    if final < best_loss:
        best, best_loss = theta, final
    return [float(x) for x in best], best_loss


def fit(reviews: Iterable[Review], steps: int = 250, seed: int = 0) -> FitResult:
    """Fit on four cards in five, score both parameter sets on the fifth; used only if the fit does better."""
    started = time.process_time()
    histories = list(histories_of(reviews).values())
    order = list(range(len(histories)))
    random.Random(seed).shuffle(order)
    held = [histories[i] for i in order[::HELD_OUT]]
    seen = [histories[i] for i in order if i not in set(order[::HELD_OUT])]
    train, test = FsrsLoss(seen), FsrsLoss(held)
    count = sum(len(h) for h in histories)
    if train.scored == 0 or test.scored == 0:
        return FitResult(list(DEFAULT_PARAMETERS), math.nan, math.nan, math.nan, count, len(histories),
                         test.scored, time.process_time() - started, 0, False,
                         "not enough reviews: a prediction needs a review a day or more after another, "
                         "on cards both to fit and to hold out")
    parameters, train_loss = adam(train, steps)
    default_loss, fitted_loss = test.value(DEFAULT_PARAMETERS), test.value(parameters)
    used = fitted_loss < default_loss
    reason = ("the fitted parameters predict the held-out reviews better" if used else
              "the defaults predict the held-out reviews as well or better, so they stay")
    return FitResult(parameters, default_loss, fitted_loss, train_loss, count, len(histories), test.scored,
                     time.process_time() - started, steps, used, reason)


# --- synthetic logs: for trying the fitter, the benchmark and the tests ---------------------------------------


def simulated_reviews(cards: int, parameters: Sequence[float], seed: int = 0, reviews_per_card: int = 12,
                      start: datetime = datetime(2026, 1, 5, 9, tzinfo=timezone.utc),
                      again_or_good: bool = False) -> list[Review]:
    """Review logs of learners whose memory follows FSRS with `parameters`: each card is reviewed when py-fsrs
    (with those parameters) schedules it, give or take a few days, and recalled with the probability FSRS then
    predicts; an Again is reviewed again the same day (relearning step). Ratings are mostly Again or Good, with
    some Hard and Easy, or only Again and Good with `again_or_good` (as chainrule's store rates)."""
    rng = random.Random(seed)
    truth = Scheduler(parameters=tuple(parameters), enable_fuzzing=False)
    logs: list[Review] = []
    for card_id in range(cards):
        card = Card(card_id=card_id + 1, due=start)
        at = start + timedelta(days=rng.randint(0, 30), minutes=rng.randint(0, 600))
        recalls = [Rating.Good] * 3 if again_or_good else [Rating.Good, Rating.Good, Rating.Good, Rating.Hard,
                                                             Rating.Easy]
        rating = rng.choice([Rating.Again, Rating.Good, Rating.Good, recalls[-1]])
        for _ in range(reviews_per_card):
            logs.append(Review(card_id, at, int(rating)))
            card, _ = truth.review_card(card, rating, review_datetime=at)
            late = timedelta(days=rng.choice([0, 0, 1, 2, 5]) * (card.due - at).days / 10.0 + rng.random())
            at = card.due + late
            remembered = rng.random() < truth.get_card_retrievability(card, current_datetime=at)
            rating = Rating.Again if not remembered else rng.choice(recalls)
    return logs


# --- where the logs come from and where a fit is kept (a progress store's database) ----------------------------

_REVIEWS = ("SELECT learner_id, lesson_id, question_id, rating, at FROM review_logs WHERE undone = 0 AND {} "
            "ORDER BY id")


def _reviews(store: ProgressStore, where: str, arguments: tuple[int, ...]) -> list[Review]:
    rows = store.database.read(lambda conn: conn.execute(_REVIEWS.format(where), arguments).fetchall())
    return [Review((learner, lesson, question), datetime.fromisoformat(at), int(rating))
            for learner, lesson, question, rating, at in rows]


def learner_reviews(store: ProgressStore) -> list[Review]:
    """Every rating of the store's learner (undone ones left out): one card per quiz question."""
    return _reviews(store, "learner_id = ?", (store.learner_id,))


def class_reviews(store: ProgressStore, class_id: int) -> list[Review]:
    """Every rating of the learners of a class, pooled (one card per learner and question)."""
    return _reviews(store, _CLASS_LEARNERS, (int(class_id),))


def save_fit(store: ProgressStore, scope: str, result: FitResult, at: datetime) -> None:
    """Keep a fit (replacing the scope's last one); it schedules the scope's cards only if `result.used`."""
    row = (scope, json.dumps(result.parameters), int(result.used), json.dumps(result.as_dict()), at.isoformat())
    store.database.write(lambda conn: conn.execute(
        "INSERT INTO scheduler_fits (scope, parameters, used, result, at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (scope) DO UPDATE SET parameters = excluded.parameters, used = excluded.used, "
        "result = excluded.result, at = excluded.at", row))


def load_fit(store: ProgressStore, scope: str) -> dict[str, Any] | None:
    """The scope's last fit, as FitResult.as_dict() with "at", or None."""
    row = store.database.read(lambda conn: conn.execute(
        "SELECT result, at FROM scheduler_fits WHERE scope = ?", (scope,)).fetchone())
    return None if row is None else json.loads(row.result) | {"at": row.at}


def recall_now(store: ProgressStore, class_id: int, now: datetime) -> dict[tuple[str, str], tuple[float, int]]:
    """Per quiz question (lesson, question): the mean probability that the class's learners recall it now, as
    FSRS predicts from each one's card (the class's fitted parameters if used, else the defaults), and how
    many cards that is: the ideas that are fading have the lowest."""
    fit_row = load_fit(store, fit_scope("class", class_id))
    scheduler = make_scheduler(False, fit_row["parameters"] if fit_row and fit_row["used"] else None)
    rows = store.database.read(lambda conn: conn.execute(
        "SELECT lesson_id, question_id, card FROM cards WHERE " + _CLASS_LEARNERS, (int(class_id),)).fetchall())
    found: dict[tuple[str, str], list[float]] = {}
    for lesson, question, card_json in rows:
        card = stored_card(card_json, f"card {lesson}/{question}", review=False)
        if card is not None and card.last_review is not None:
            found.setdefault((lesson, question), []).append(scheduler.get_card_retrievability(card, now))
    return {key: (sum(values) / len(values), len(values)) for key, values in found.items()}


def summary(result: FitResult) -> list[str]:
    """The fit in a few lines, for `chainrule progress optimize` and `chainrule class optimize`."""
    lines = [f"Fitted FSRS's 21 parameters to {result.reviews:,} reviews of {result.cards:,} cards with chainrule's "
             f"compiled replay ({result.steps} Adam steps, {result.seconds:.1f} s of CPU)."]
    if result.steps == 0:
        return lines + [f"Not used: {result.reason}."]
    lines += [f"Mean log-loss on the held-out cards' {count_text(result.held_out_predictions, 'prediction')} (one card in "
              f"{HELD_OUT} held out; lower is better):",
              f"  py-fsrs's defaults  {result.default_loss:.4f}",
              f"  fitted              {result.fitted_loss:.4f}",
              ("Used for scheduling from now on: " if result.used else "Not used: ") + result.reason + "."]
    return lines
