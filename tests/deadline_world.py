"""A class with due dates to work on: "Physics" (Ada, Bea) and "Chemistry" (Dan) who did the backprop lesson at
known times (the ``made`` fixture, on each store backend), the credit and gradebook read back, and a real
`chainrule serve` (the ``server`` fixture, module-scoped) with its teacher's client. Used by test_deadlines and
test_overrides."""

from __future__ import annotations

import csv
import io
from datetime import datetime, timezone

import pytest

from chainrule import lessons
from chainrule.classes import CLASS_DATABASE
from chainrule.classes.accounts import Accounts
from chainrule.classes.deadlines import Deadlines
from chainrule.classes.report import ClassReport, csv_text
from chainrule.progress import open_store
from class_process import PASSWORD, ClassServer, csrf_of, run_coroutine
from class_world import FAST_HASHER

PASS = {"status": "pass", "verdict": "passed", "tests": []}


SHAPE = lessons.lesson_shape("backprop")


class Clock:
    """The store's clock, set by the test (no sleeps)."""

    def __init__(self) -> None:
        self.now = datetime(2026, 12, 4, 10, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now


def do_lesson(view, clock: Clock, *, explanation_at: datetime, at: datetime) -> None:
    """Every piece of the backprop lesson at ``at``, the explanation at ``explanation_at``."""
    clock.now = at
    for key in SHAPE["predictions"]:
        view.save_prediction("backprop", key, 1.0, True)
    for exercise in SHAPE["exercises"]:
        view.record_submission(exercise, "python", "# mine", PASS)
    for question in SHAPE["quiz"]:
        view.answer_question("backprop", question, "1", True)
    clock.now = explanation_at
    view.save_explanation("backprop", "from the output back, node by node", [])


@pytest.fixture
def made(store_place):
    """Class "Physics" (Ada, Bea) and "Chemistry" (Dan). Ada does all of backprop on 4 Dec 10:00 UTC but
    writes her explanation on 6 Dec 10:00 UTC; Bea does all of it on 5 Dec 11:30 UTC."""
    clock = Clock()
    place = store_place("class")
    store = open_store(**place, clock=clock, fuzzing=False, file_name=CLASS_DATABASE)
    accounts = Accounts(store, hasher=FAST_HASHER)
    physics = accounts.create_class("Physics")
    chemistry = accounts.create_class("Chemistry")
    people = {name: run_coroutine(accounts.join, physics.invite_token, name, PASSWORD) for name in ("Ada", "Bea")}
    people["Dan"] = run_coroutine(accounts.join, chemistry.invite_token, "Dan", PASSWORD)
    do_lesson(store.for_learner(people["Ada"].id), clock, at=datetime(2026, 12, 4, 10, 0, tzinfo=timezone.utc),
              explanation_at=datetime(2026, 12, 6, 10, 0, tzinfo=timezone.utc))
    bea_at = datetime(2026, 12, 5, 11, 30, tzinfo=timezone.utc)
    do_lesson(store.for_learner(people["Bea"].id), clock, at=bea_at, explanation_at=bea_at)
    yield {"store": store, "accounts": accounts, "class_id": physics.class_id, "people": people,
           "deadlines": Deadlines(store, accounts), "place": place, "chemistry": chemistry.class_id}
    store.close()


def backprop(made, name: str) -> dict:
    return made["deadlines"].credit(made["class_id"])[made["people"][name].id]["backprop"]


def gradebook(made) -> dict[str, dict[str, str]]:
    rows = list(csv.DictReader(io.StringIO(csv_text(ClassReport(made["store"], made["accounts"])
                                                    .gradebook(made["class_id"])))))
    return {row["learner"]: row for row in rows}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    started = ClassServer.start(tmp_path_factory.mktemp("deadlines"), class_name="Deadlines")
    try:
        yield started
    finally:
        started.stop()


def teacher_client(server: ClassServer):
    client = server.client()
    page = client.get(server.teacher_link.removeprefix(server.base))
    answer = client.post(server.teacher_link.removeprefix(server.base),
                         data={"csrf": csrf_of(page.text), "password": PASSWORD, "confirm": PASSWORD})
    assert answer.status_code == 303, answer.text
    return client


def change(client, method: str, path: str, body: dict):
    token = next(value for name, value in client.cookies.items() if name.endswith("chainrule_csrf"))
    return client.request(method, path, json=body, headers={"X-CSRF-Token": token})
