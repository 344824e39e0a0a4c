"""A class server in process (FastAPI TestClient): two classes with their teachers and learners, a clock the
test sets, and the cheap argon2 parameters every test's accounts use (FAST_HASHER, defined here only).

    world = World(store, Clock())       # "Physics" (teacher, Ada, Bea) and "Chemistry" (teacher, Cyd)
    send(world.ada, "PUT", "/api/...", json=...)   # a change from the page's own script (CSRF header)
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from fastapi.testclient import TestClient

from chainrule.classes.accounts import Accounts
from chainrule.web.routes_class import create_class_app

BASE = "http://class.example.org"


PASSWORD = "correct horse battery"


# argon2id as in production, at its least costs (8 KiB, one pass): hashing is not what these accounts test, and a
# hash and its check take 0.2 ms of CPU here, against 12 ms at 8 MiB (the tests' cost before 2026-12-07), for
# each of the thousands of joins and sign-ins of the suite. The production cost is under test where hashing is
# (tests/test_class_sign_in_edges.py, against `chainrule serve`).
FAST_HASHER = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now


class World:
    """A class server with two classes: "Physics" (teacher, Ada, Bea) and "Chemistry" (teacher, Cyd)."""

    def __init__(self, store, clock) -> None:
        self.store, self.clock = store, clock
        self.accounts = Accounts(store, hasher=FAST_HASHER)
        self.app = create_class_app(store, accounts=self.accounts,
                                    hosts=["class.example.org"], clock=clock)
        self.physics = self.accounts.create_class("Physics")
        self.chemistry = self.accounts.create_class("Chemistry")
        self.ada = self.join(self.physics.invite_token, "Ada")
        self.bea = self.join(self.physics.invite_token, "Bea")
        self.cyd = self.join(self.chemistry.invite_token, "Cyd")
        self.physics_teacher = self.teacher(self.physics.teacher_token)
        self.chemistry_teacher = self.teacher(self.chemistry.teacher_token)

    def client(self) -> TestClient:
        return TestClient(self.app, base_url=BASE, follow_redirects=False)

    def join(self, invite: str, name: str) -> TestClient:
        client = self.client()
        page = client.get(f"/join/{invite}")
        assert page.status_code == 200, page.text
        answer = client.post(f"/join/{invite}", data={"csrf": csrf_of(page.text), "name": name, "password": PASSWORD})
        assert answer.status_code == 303, answer.text
        return client

    def teacher(self, token: str) -> TestClient:
        client = self.client()
        page = client.get(f"/set-password/{token}")
        answer = client.post(f"/set-password/{token}", data={"csrf": csrf_of(page.text), "password": PASSWORD})
        assert answer.status_code == 303 and answer.headers["location"] == "/teacher", answer.text
        return client


def csrf_of(page: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


def send(client: TestClient, method: str, url: str, **kwargs):
    """A change from the page's own script: it carries the CSRF cookie's value in X-CSRF-Token."""
    headers = {"X-CSRF-Token": client.cookies.get("chainrule_csrf", "")}
    return client.request(method, url, headers=headers, **kwargs)


@pytest.fixture
def world(store_place):
    """A World on a fresh class database of the test's backend (store_place: SQLite or PostgreSQL)."""
    from chainrule.classes import CLASS_DATABASE
    from chainrule.progress import open_store

    clock = Clock()
    store = open_store(**store_place("class"), clock=clock, fuzzing=False, file_name=CLASS_DATABASE)
    made = World(store, clock)
    yield made
    store.close()


def backend_world(request, tmp_path_factory, name: str) -> World:
    """A World on a class database of its own on ``request.param``'s backend ("sqlite" or "postgresql"): for a
    module-scoped fixture parametrized by conftest's STORE_BACKENDS, so that a module shares one class per backend.
    Its ``place`` is {"data_dir": folder} or {"database": url}."""
    from chainrule.classes import CLASS_DATABASE
    from chainrule.progress import open_store

    place = {"data_dir": tmp_path_factory.mktemp(name)}
    if request.param == "postgresql":
        from postgres_cluster import new_postgres_schema
        place = {"database": new_postgres_schema(request.getfixturevalue("postgres_cluster"))}
    clock = Clock()
    made = World(open_store(**place, clock=clock, fuzzing=False, file_name=CLASS_DATABASE), clock)
    made.place = place  # where the class database is, for a `chainrule class ...` command (--data-dir, --database)
    return made


def class_app(folder: Path):
    """The class app with its LTI and sign-in pages, put together as `chainrule serve` does; and its store."""
    from chainrule.classes import CLASS_DATABASE
    from chainrule.classes.accounts import Accounts
    from chainrule.classes.sso import Sso
    from chainrule.commands.lti import tool
    from chainrule.progress import open_store
    from chainrule.web.routes_class import create_class_app
    from chainrule.web.routes_lti import add_lti
    from chainrule.web.routes_sso import add_sso

    store = open_store(folder, file_name=CLASS_DATABASE)
    accounts = Accounts(store, hasher=FAST_HASHER)
    app = create_class_app(store, accounts=accounts)
    lti = tool(folder, store, accounts, "http://127.0.0.1")
    add_lti(app, lti, None)
    add_sso(app, Sso(store, accounts, "http://127.0.0.1", remote=lti.remote))
    return app, store
