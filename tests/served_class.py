"""`chainrule serve --workers 1` on one class database, SQLite or PostgreSQL (the ``served`` fixture, one per
module and backend), its classes made by `chainrule class create`, and runs kept in its database. Used by
test_class_admission, test_class_people, test_class_quota and test_class_secrets."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import httpx
import pytest

import local_http
from chainrule.classes import open_class_store
from class_process import create_class, free_port
from class_world import PASSWORD, csrf_of
from job_process import Process
from lti_world import cli
from postgres_cluster import new_postgres_schema

EXERCISE = "neuron-grads"


class Served:
    """`chainrule serve` on one class database; classes are made with `chainrule class create` (run in this process:
    tests/lti_world.py's cli())."""

    def __init__(self, env: dict, program: tuple[str, ...] = ("-m", "chainrule"), *serve_options: str) -> None:
        self.env = env
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.cli("list")  # the class database exists (and is migrated) before the server starts
        self.web = Process(None, ["serve", "--port", str(self.port), "--workers", "1", *serve_options], "sign in at",
                           env=env, program=program)

    def cli(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
        code, out, err = cli("class", *argv, env=self.env)
        assert not check or code == 0, err
        return subprocess.CompletedProcess(["chainrule", "class", *argv], code, out, err)

    def new_class(self, name: str, *options: str) -> tuple[str, str]:
        """(the teacher's one-time link, the invite link) of a new class."""
        return create_class(name, self.base, self.env, *options)

    def client(self) -> httpx.Client:
        return local_http.client(base_url=self.base, timeout=60)

    def join(self, invite: str, name: str) -> tuple[httpx.Client, httpx.Response]:
        client = self.client()
        page = client.get(invite)
        return client, client.post(invite, data={"csrf": csrf_of(page.text), "name": name, "password": PASSWORD})

    def sign_in(self, class_name: str, name: str) -> tuple[httpx.Client, httpx.Response]:
        client = self.client()
        page = client.get("/sign-in")
        return client, client.post("/sign-in", data={"csrf": csrf_of(page.text), "class_name": class_name,
                                                     "name": name, "password": PASSWORD})

    def teacher(self, link: str) -> httpx.Client:
        client = self.client()
        page = client.get(link)
        assert client.post(link, data={"csrf": csrf_of(page.text), "password": PASSWORD}).status_code == 303
        return client

    def stop(self) -> None:
        self.web.stop()


def class_env(request, tmp_path_factory) -> dict:
    """The environment of a class server on the backend ``request.param`` names (a fresh schema or folder)."""
    env = dict(os.environ, PYTHONUNBUFFERED="1", CHAINRULE_DATA_DIR=str(tmp_path_factory.mktemp("class-data")))
    env.pop("CHAINRULE_DATABASE", None)
    if request.param == "postgresql":
        env["CHAINRULE_DATABASE"] = new_postgres_schema(request.getfixturevalue("postgres_cluster"))
    return env


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def served(request, tmp_path_factory):
    server = Served(class_env(request, tmp_path_factory))
    yield server
    server.stop()


def learner_id(client) -> int:
    return client.get("/api/class/me").json()["id"]


def a_run(served, learner: int, source: str) -> int:
    """A graded run kept in the class database, as the grader keeps one."""
    store = open_class_store(Path(served.env["CHAINRULE_DATA_DIR"]), served.env.get("CHAINRULE_DATABASE"))
    try:
        return store.for_learner(learner).record_submission(EXERCISE, "python", source, {"status": "fail"})
    finally:
        store.close()
