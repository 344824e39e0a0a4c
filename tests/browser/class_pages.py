"""What the class-mode browser tests share: the password every test account uses, the exercise they run,
signing in through a class form, a fresh browser context, a `chainrule worker` process, the class database
taken away for a while, and the teacher's credit table of due dates. The fixtures built on these (a class
server per test, one per module with a class per test, a due-dates server per module) are in conftest.py."""

from __future__ import annotations

import re
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import REPO
from polling import PAGE_POLL_MS
from reaper import spawn

PASSWORD = "correct horse battery"
EXERCISE = "neuron-grads"


def class_database(request) -> str | None:
    """The session's PostgreSQL database URL for a class, or None (no PostgreSQL here: the class lives in SQLite
    in its data folder)."""
    try:
        return request.getfixturevalue("postgres_url")
    except pytest.skip.Exception:
        return None


def start_worker(env: dict) -> subprocess.Popen:
    return spawn([sys.executable, "-m", "chainrule", "worker", "--concurrency", "1"], env=env, cwd=REPO,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def submit_form(page, values: dict[str, str]) -> None:
    """Fill a class form's fields by name and submit it, waiting for the page it leads to."""
    for name, value in values.items():
        page.locator(f"input[name='{name}']").fill(value)
    with page.expect_navigation():
        page.locator("form.class-form button[type=submit]").click()


def new_context(browser, width: int = 1280, height: int = 900):
    """A fresh browser context (no cookies: a new person) at a size; axe-core may run in it (CSP bypassed)."""
    made = browser.new_context(viewport={"width": width, "height": height}, bypass_csp=True)
    made.set_default_timeout(30_000)
    return made


@contextmanager
def desktop_page(browser, timezone_id: str = "UTC"):
    """A page of a fresh browser context at desktop size (axe-core needs CSP bypassed), its clock in a time zone
    of its own (UTC unless told: the learner's dates are written in the browser's zone)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True, timezone_id=timezone_id)
    context.set_default_timeout(30_000)
    try:
        yield context.new_page()
    finally:
        context.close()


@contextmanager
def teacher_page(browser, server):
    """The class's teacher signed in through their one-time link, on a desktop-size page (desktop_page)."""
    with desktop_page(browser) as page:
        page.goto(server.teacher_link)
        submit_form(page, {"password": PASSWORD})
        yield page


def csrf_header(client) -> dict[str, str]:
    """The header a page's own script sends with a change: the CSRF cookie's value (its name has a prefix over
    HTTPS)."""
    return {"X-CSRF-Token": next(value for key, value in client.cookies.items() if key.endswith("chainrule_csrf"))}


@contextmanager
def database_away(url: str):
    """New connections fail (the socket is hidden) and the open ones are ended, until the block ends."""
    import psycopg

    place = Path(re.search(r"host=([^&]+)", url).group(1)) / ".s.PGSQL.5432"
    hidden = place.with_name("away")
    with psycopg.connect(url, autocommit=True) as admin:
        place.rename(hidden)
        try:
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'")
            yield
        finally:
            hidden.rename(place)


def says(page, selector: str, words: str) -> None:
    """Wait until the element's text includes ``words``."""
    page.wait_for_function("([selector, words]) => document.querySelector(selector)?.textContent.includes(words)",
                           arg=[selector, words], polling=PAGE_POLL_MS)


def signed_in_on_the_lesson(browser, class_server):
    """(context, page, the class database's URL): Ada joined and on the lesson with the exercises."""
    base, _, invite, env = class_server
    if "CHAINRULE_DATABASE" not in env:
        pytest.skip("runs wait for workers, and the class database can go away, only in a class kept in PostgreSQL")
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(60_000)
    page = context.new_page()
    page.goto(invite)
    submit_form(page, {"name": "Ada", "password": PASSWORD})
    page.goto(base + "/lessons/backprop")
    page.wait_for_selector(f"[data-editor='{EXERCISE}'] .cm-content")
    return context, page, env["CHAINRULE_DATABASE"]


def credit_cell(page, name: str):
    return page.locator(f"tr[data-credit-row='{name}'] td[data-lesson='backprop']")


def ada_started_and_the_teacher_in(server, page):
    """Ada joins and makes one prediction of backprop (01-03 started: 3 of 8); the teacher signs in on
    ``page`` and sees her row of credit. Ada's client."""
    learner = server.join("Ada")
    token = next(value for name, value in learner.cookies.items() if name.endswith("chainrule_csrf"))
    made = learner.put("/api/progress/backprop/predictions/n", json={"value": 0.5}, headers={"X-CSRF-Token": token})
    assert made.status_code == 200, made.text
    page.goto(server.teacher_link)
    submit_form(page, {"password": PASSWORD})
    assert page.url == server.base + "/teacher"
    page.wait_for_selector("tr[data-credit-row='Ada']")
    return learner


def the_teacher_puts(server, changes: list[tuple[str, dict]], teacher=None):
    """The teacher signs in over HTTP (from the teacher link: the password set there), unless ``teacher`` is
    the client of one already signed in, and sends each (path, JSON body) as a PUT with the class's CSRF token,
    as the teacher's page does; each must be taken. The teacher's client."""
    if teacher is None:
        teacher = server.client()
        signed_in = server.post_form(teacher, server.teacher_link.removeprefix(server.base),
                                     {"password": PASSWORD, "confirm": PASSWORD})
        assert signed_in.status_code == 303, signed_in.text
    token = next(value for name, value in teacher.cookies.items() if name.endswith("chainrule_csrf"))
    for path, body in changes:
        answer = teacher.put(path, json=body, headers={"X-CSRF-Token": token})
        assert answer.status_code == 200, (path, answer.text)
    return teacher


def joined_and_graded(server, name: str, exercise: str, source: str) -> dict:
    """``name`` joins the class and hands in ``source`` (Python) for ``exercise``, graded for real as the lesson
    page sends it (with the CSRF token); the result."""
    learner = server.join(name)
    graded = learner.post("/api/grade", json={"exercise": exercise, "language": "python", "source": source},
                          headers=csrf_header(learner))
    assert graded.status_code == 200, graded.text
    return graded.json()
