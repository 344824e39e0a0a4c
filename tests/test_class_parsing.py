"""Issue 41, items 5, 7 and 11, against real `chainrule serve` processes: one reader with one set of limits for
every form body and query string (web/forms.py), ids bounded in every path (forms.RowId), dates in the years of
stored times, a progress upload's shape refused on its bytes before anything is built (progress/json_shape.py),
and the LTI key set served from memory (classes/lti_keys.py).

The route lists come from the app itself (built in this process, as `chainrule serve` builds it): a route added
later is attacked here without anyone adding it, and fails if it escapes a rule."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest
from fastapi.routing import APIRoute

from chainrule.web.routes_class import IMPORT_PATH
from chainrule.web.routes_roster import ROSTER_PATH
from class_process import PASSWORD, REPO, ClassServer
from class_world import FAST_HASHER
from postgres_cluster import new_postgres_schema

HUGE = str(2**64)
MANY = [(f"field{index}", "x") for index in range(41)]  # one past the limit of 40
FORM = {"content-type": "application/x-www-form-urlencoded"}
# A file's body, read by its route (its query is checked all the same): the paths with a body limit of their own.
UPLOADS = {IMPORT_PATH, ROSTER_PATH}


def class_routes(folder: Path) -> list[APIRoute]:
    """Every route of a class app with its LTI and sign-in pages, as `chainrule serve` puts them together."""
    from chainrule.classes import CLASS_DATABASE
    from chainrule.classes.accounts import Accounts
    from chainrule.classes.sso import Sso
    from chainrule.commands.lti import tool
    from chainrule.progress import open_store
    from chainrule.web.routes_class import create_class_app
    from chainrule.web.routes_lti import add_lti
    from chainrule.web.routes_sso import add_sso

    store = open_store(folder, file_name=CLASS_DATABASE)
    try:
        accounts = Accounts(store, hasher=FAST_HASHER)
        app = create_class_app(store, accounts=accounts)
        lti = tool(folder, store, accounts, "http://127.0.0.1")
        add_lti(app, lti, None)
        add_sso(app, Sso(store, accounts, "http://127.0.0.1", remote=lti.remote))
        return list(api_routes(app.routes))
    finally:
        store.close()


def api_routes(routes: list) -> list[APIRoute]:
    """The APIRoutes among ``routes``, those of included routers too (FastAPI keeps them in their own router; a
    router here is included without a prefix of its own, so each route's path is whole)."""
    found = []
    for route in routes:
        if isinstance(route, APIRoute):
            found.append(route)
        elif hasattr(route, "original_router"):
            assert not getattr(route.include_context, "prefix", ""), route.include_context
            found += api_routes(route.original_router.routes)
    return found


def calls(routes: list[APIRoute], value: str = "1") -> list[tuple[str, str]]:
    """(method, path) of every route, each path parameter given ``value``."""
    found = []
    for route in routes:
        path = route.path
        for param in route.dependant.path_params:
            path = re.sub(r"\{" + param.name + r"(:\w+)?\}", value, path)
        found += [(method, path) for method in sorted(route.methods - {"HEAD"})]
    return found


def int_params(route: APIRoute) -> list[str]:
    return [param.name for param in route.dependant.path_params if param.field_info.annotation is int
            or getattr(param, "type_", None) is int]


@pytest.fixture(scope="module")
def routes(tmp_path_factory) -> list[APIRoute]:
    found = class_routes(tmp_path_factory.mktemp("routes"))
    paths = {route.path for route in found}
    assert {"/sign-in", "/lti/login", "/lti/launch", "/sso/start/{provider_id}", "/sso/choose",
            "/api/class/learners/{learner_id}"} <= paths, paths
    return found


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The module's served class in SQLite, also either_server's SQLite one: one process for both (each test
    uses learners and lessons of its own)."""
    made = ClassServer.start(tmp_path_factory.mktemp("served"))
    yield made
    made.stop()


def csrf_header(client: httpx.Client) -> dict[str, str]:
    return {"x-csrf-token": client.cookies["chainrule_csrf"]}


def teacher_of(server: ClassServer) -> tuple[httpx.Client, dict[str, str]]:
    """The teacher's browser (the one-time link used once per server) and its CSRF header."""
    if not hasattr(server, "teacher"):
        client = server.client()
        answer = server.post_form(client, server.teacher_link.removeprefix(server.base), {"password": PASSWORD})
        assert answer.status_code == 303, answer.text
        server.teacher = client
    return server.teacher, csrf_header(server.teacher)


# ---------------------------------------------------------------- item 11: one reader of every form and query


def test_every_route_refuses_41_query_fields_and_41_form_fields(server, routes):
    stranger = server.client()
    wrong = []
    for method, path in calls(routes):
        answer = stranger.request(method, path, params=MANY)
        if answer.status_code != 422 or "more than 40 fields" not in answer.text:
            wrong.append((method, path, "query", answer.status_code, answer.text[:200]))
        if method in ("POST", "PUT", "PATCH", "DELETE") and path not in UPLOADS:
            answer = stranger.request(method, path, content=urlencode(MANY), headers=FORM)
            if answer.status_code != 422 or "more than 40 fields" not in answer.text:
                wrong.append((method, path, "form", answer.status_code, answer.text[:200]))
    assert not wrong, wrong


@pytest.mark.parametrize("path,size", [("/lti/login", 41), ("/lti/launch", 41), ("/sso/start/1", 21),
                                        ("/sso/choose", 11), ("/sign-in", 41)])
def test_the_lti_and_sign_in_forms_refuse_too_many_fields_whatever_the_content_type_says(server, path, size):
    """Round 4's 500s: each form read by the route itself (a body sent as text/plain passes no layer's check)."""
    body = urlencode([(f"field{index}", "x") for index in range(size)])
    answer = server.client().post(path, content=body, headers={"content-type": "text/plain"})
    if size <= 40:  # under the one limit: not a 500, and not refused for its fields
        assert answer.status_code < 500 and "fields" not in answer.text, (path, answer.status_code, answer.text)
    else:
        assert answer.status_code == 422 and "more than 40 fields" in answer.text, (path, answer.text)


@pytest.mark.parametrize("value,said", [("a" * 2001, "over 2,000 characters"), ("a\x00b", "NUL character")])
@pytest.mark.parametrize("path", ["/lti/login", "/sso/choose", "/sign-in", "/api/class/me"])
def test_a_long_field_or_a_nul_is_a_422_in_a_form_and_in_a_query(server, path, value, said):
    client = server.client()
    for answer in (client.post(path, data={"name": value}), client.get(path, params={"name": value})):
        assert answer.status_code == 422 and said in answer.text, (path, answer.status_code, answer.text[:300])


def test_a_launch_token_may_be_longer_than_a_field(server):
    """An LMS's signed id_token is a few KB: past a field's 2,000 characters, within the form's 64 KB."""
    answer = server.client().post("/lti/launch", data={"id_token": "e" * 20_000, "state": "s"})
    assert answer.status_code != 422 and answer.status_code < 500, answer.text
    over = server.client().post("/lti/launch", data={"id_token": "e" * 70_000, "state": "s"})
    assert over.status_code == 413, over.text


# ---------------------------------------------------------------- item 11: ids of 2**64


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def either_server(request, tmp_path_factory):
    """A served class on each backend, for the tests of ids and dates (each uses its own lesson and learner)."""
    if request.param == "sqlite":
        yield request.getfixturevalue("server")
        return
    made = ClassServer.start(tmp_path_factory.mktemp(request.param),
                             database=new_postgres_schema(request.getfixturevalue("postgres_cluster")))
    yield made
    made.stop()


def test_every_id_in_a_path_or_a_form_is_bounded(either_server, routes):
    with_ids = [route for route in routes if int_params(route)]
    assert len(with_ids) >= 8, [route.path for route in with_ids]
    teacher, csrf = teacher_of(either_server)
    wrong = []
    for method, path in calls(with_ids, HUGE):
        answer = teacher.request(method, path, headers=csrf, **({"json": {}} if method != "GET" else {}))
        if answer.status_code != 422:
            wrong.append((method, path, answer.status_code, answer.text[:200]))
    assert not wrong, wrong
    # The sign-in chooser's account id, in its form.
    answer = either_server.client().post("/sso/choose", data={"account": HUGE, "ticket": "t"})
    assert answer.status_code == 422 and "2147483647" in answer.text, answer.text


# ---------------------------------------------------------------- item 11: dates and CSV cells


def test_a_due_date_or_an_extension_outside_the_years_of_stored_times_is_a_422(either_server):
    teacher, csrf = teacher_of(either_server)
    ada = either_server.join("Ada")
    ada_id = ada.get("/api/class/me").json()["id"]
    far = teacher.put("/api/class/deadlines/due", json={"lesson_id": "backprop", "due": "9999-12-31"}, headers=csrf)
    assert far.status_code == 422 and "1970 to 2999" in far.text, far.text
    last = teacher.put("/api/class/deadlines/due", json={"lesson_id": "backprop", "due": "2999-12-30"}, headers=csrf)
    assert last.status_code == 200, last.text
    for extend in (lambda: teacher.put("/api/class/deadlines/extensions", headers=csrf, json={
                       "learner_id": ada_id, "lesson_id": "backprop", "due": "+999"}),
                   lambda: teacher.post("/api/class/deadlines/extensions.csv", headers=csrf, json={
                       "csv": "learner,lesson,due\nAda,backprop,+999\n"})):
        answer = extend()
        assert answer.status_code == 422 and "1970 to 2999" in answer.text, answer.text
    assert ada.get("/api/class/deadlines/mine").status_code == 200


def test_a_due_date_stored_past_the_years_and_extended_past_9999_is_a_422(server):
    """A class whose due date was stored before the rule (9999-12-31): "+999" days runs past datetime's year
    9999 (an OverflowError, a 500 before)."""
    import sqlite3

    from chainrule.classes import CLASS_DATABASE

    teacher, csrf = teacher_of(server)
    ida = server.join("Ida")
    ida_id = ida.get("/api/class/me").json()["id"]
    assert teacher.put("/api/class/deadlines/due", json={"lesson_id": "gradient-descent-linear-regression", "due": "2999-12-29"},
                       headers=csrf).status_code == 200
    with sqlite3.connect(Path(server.env["CHAINRULE_DATA_DIR"]) / CLASS_DATABASE) as conn:
        changed = conn.execute("UPDATE due_dates SET due = '9999-12-31T23:59' WHERE due = '2999-12-29T23:59'")
        assert changed.rowcount == 1
    answer = teacher.put("/api/class/deadlines/extensions", headers=csrf,
                         json={"learner_id": ida_id, "lesson_id": "gradient-descent-linear-regression", "due": "+999"})
    assert answer.status_code == 422 and "1970 to 2999" in answer.text, answer.text


def test_a_csv_cell_over_the_csv_modules_limit_is_a_422_saying_the_limit(server):
    teacher, csrf = teacher_of(server)
    answer = teacher.post("/api/class/deadlines/extensions.csv", headers=csrf,
                          json={"csv": "learner,lesson,due\n" + "A" * 131_073 + ",backprop,+1\n"})
    assert answer.status_code == 422 and "131,072 characters" in answer.text, answer.text


# ---------------------------------------------------------------- item 5: a progress upload's shape, before parsing


def test_32_mb_of_empty_lists_is_refused_on_its_bytes_and_a_classmate_is_answered(server):
    attacker, classmate = server.join("Mallory"), server.join("Bea")
    body = b"[" + b"[]," * (32 * 1024 * 1024 // 3 - 2) + b"[]]"
    answers: list[httpx.Response] = []

    def upload() -> None:
        answers.append(server.client(cookies=dict(attacker.cookies)).post("/api/class/progress/import", content=body,
                                     headers={"content-type": "application/json", **csrf_header(attacker)}))

    uploads = [threading.Thread(target=upload) for _ in range(2)]
    for thread in uploads:
        thread.start()
    mine = classmate.get("/api/class/me")
    for thread in uploads:
        thread.join(120)
    assert mine.status_code == 200 and mine.json()["name"] == "Bea", mine.text
    assert [answer.status_code for answer in answers] == [422, 422], [answer.text for answer in answers]
    assert all("more than 2,000,000 values" in answer.text for answer in answers), answers[0].text
    assert server.process.poll() is None


def test_an_array_past_500000_items_or_24_levels_is_refused_naming_the_limit(server):
    ada = server.join("Ann")
    document = {"format": "chainrule.progress", "version": 2, "exported_at": "2026-12-04T10:00:00+00:00",
                "predictions": [0] * 500_001}
    answer = ada.post("/api/class/progress/import", content=json.dumps(document),
                      headers={"content-type": "application/json", **csrf_header(ada)})
    assert answer.status_code == 422 and "more than 500,000 items" in answer.text, answer.text
    deep = {"format": "chainrule.progress", "version": 2, "predictions": [[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]}
    answer = ada.post("/api/class/progress/import", json=deep, headers=csrf_header(ada))
    assert answer.status_code == 422 and "more than 24 levels deep" in answer.text, answer.text


# ---------------------------------------------------------------- item 7: the LTI key set from memory


def kids(server: ClassServer) -> list[str]:
    answer = server.client().get("/lti/jwks.json")
    assert answer.status_code == 200, answer.text
    return [key["kid"] for key in answer.json()["keys"]]


def test_the_key_set_is_served_from_memory_and_follows_a_rotation(server):
    first = kids(server)
    rotated = subprocess.run([sys.executable, "-m", "chainrule", "lti", "rotate-key"], env=server.env, cwd=REPO,
                             capture_output=True, text=True, timeout=120)
    assert rotated.returncode == 0, rotated.stderr
    after = kids(server)
    assert len(after) == 2 and set(first) < set(after), (first, after)
    # The files are not read again while their list is the same: made unreadable as keys, the set still answers.
    folder = Path(server.env["CHAINRULE_DATA_DIR"]) / "lti-keys"
    saved = {path: path.read_bytes() for path in folder.glob("*.pem")}
    try:
        for path in saved:
            path.write_bytes(b"not a key")
        for _ in range(3):
            assert kids(server) == after
    finally:
        for path, content in saved.items():
            path.write_bytes(content)
