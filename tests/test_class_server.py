"""Class mode in process (FastAPI TestClient), on SQLite and on PostgreSQL: accounts, sessions, CSRF,
rate limits, one-time links, and above all that nobody reads what is not theirs."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from argon2 import PasswordHasher
from fastapi.testclient import TestClient

from chainrule.classes import CLASS_DATABASE
from chainrule.classes.accounts import FREE_FAILURES, Accounts
from chainrule.progress import open_store
from chainrule.web.routes_class import create_class_app
from class_world import (
    BASE,
    FAST_HASHER,
    PASSWORD,
    Clock,
    World,
    backend_world,
    csrf_of,
    send,
    world,  # noqa: F401 (fixture)
)

ADA_SECRET = "ada-private-code-4242"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])  # conftest's STORE_BACKENDS, module-scoped
def read_world(request, tmp_path_factory):
    """One World per backend for the tests that only read, or whose every change is refused before it is written
    (401, 403, 422): none of them changes what another one reads, so each sees the World as it was made, as a
    fresh ``world`` would show it. A test that writes (a run, a sign-in, a password) takes ``world``."""
    made = backend_world(request, tmp_path_factory, "read-world")
    yield made
    made.store.close()


def ada_works(world: World) -> None:
    ada = world.ada
    assert send(ada, "PUT", "/api/progress/code",
                json={"exercise": "neuron-grads", "language": "python", "source": ADA_SECRET}).status_code == 200
    assert send(ada, "PUT", "/api/progress/backprop/predictions/n", json={"value": 0.8814}).status_code == 200
    answer = send(ada, "POST", "/api/lessons/backprop/quiz/product-gradient", json={"answer": "7.5"})
    assert answer.status_code == 200, answer.text
    me = ada.get("/api/class/me").json()
    world.store.for_learner(me["id"]).record_submission(
        "neuron-grads", "python", ADA_SECRET, {"status": "fail", "verdict": "failed", "tests": []})


def test_a_learner_sees_only_their_own_progress(world):
    ada_works(world)
    assert ADA_SECRET in world.ada.get("/api/progress/backprop").text
    bea_view = world.bea.get("/api/progress/backprop")
    assert bea_view.status_code == 200
    assert ADA_SECRET not in bea_view.text and bea_view.json()["predictions"] == {}
    assert world.bea.get("/api/class/progress/export").json()["code"] == []


def _filled(path: str, ids: dict[str, str]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: ids.get(m.group(1), "backprop"), path)


def test_every_api_route_refuses_another_learners_and_another_classs_data(world):
    """Each /api route, called by Bea (a learner of Physics) and by Chemistry's teacher with Ada's ids,
    answers without Ada's data: a refusal for the class routes, her own (empty) data for the rest."""
    ada_works(world)
    ada_id = str(world.ada.get("/api/class/me").json()["id"])
    ids = {"learner_id": ada_id, "lesson_id": "backprop", "exercise_id": "neuron-grads", "question_id": "product-gradient",
           "graph": "section03", "key": "n", "number": "1"}
    routes = [(method.upper(), path) for path, operations in world.app.openapi()["paths"].items()
              for method in operations]
    assert len(routes) > 15
    checked = 0
    for caller in (world.bea, world.chemistry_teacher, world.cyd):
        for method, path in routes:
            if path == "/api/grade":
                continue  # grades the body's code and stores it as the caller's own run: nothing to read
            url = _filled(path, ids)
            answer = send(caller, method, url, json={}) if method != "GET" else caller.get(url)
            assert ADA_SECRET not in answer.text, (method, url)
            assert "0.8814" not in answer.text, (method, url)
            if "/api/class/learners/" in path:
                assert answer.status_code in (403, 404), (method, url, answer.status_code)
            checked += 1
    assert checked >= 45
    # Physics's own teacher does see Ada's run (the same route, the right class).
    timeline = world.physics_teacher.get(f"/api/class/learners/{ada_id}/timeline")
    assert timeline.status_code == 200 and ADA_SECRET in timeline.text


def test_learners_cannot_use_the_teachers_view(read_world):
    for path in ("/api/class/overview", "/teacher", "/teacher/gradebook.csv"):
        assert read_world.ada.get(path).status_code == 403
    assert read_world.physics_teacher.get("/api/class/overview").status_code == 200


def test_without_a_session_pages_go_to_sign_in_and_the_api_answers_401(read_world):
    stranger = read_world.client()
    assert stranger.get("/api/progress/backprop").status_code == 401
    page = stranger.get("/lessons/backprop")
    assert page.status_code == 303 and page.headers["location"].startswith("/sign-in")


def test_a_change_without_the_csrf_token_is_refused(read_world):
    ada = read_world.ada
    refused = ada.put("/api/progress/code", json={"exercise": "neuron-grads", "language": "python", "source": "x"})
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    forged = ada.put("/api/progress/code", headers={"X-CSRF-Token": "made.up"},
                     json={"exercise": "neuron-grads", "language": "python", "source": "x"})
    assert forged.status_code == 403
    # Bea's token is no good with Ada's session.
    stolen = ada.put("/api/progress/code", headers={"X-CSRF-Token": read_world.bea.cookies["chainrule_csrf"]},
                     json={"exercise": "neuron-grads", "language": "python", "source": "x"})
    assert stolen.status_code == 403


def test_session_cookies_are_signed_http_only_and_same_site(world):
    client = world.client()
    page = client.get("/sign-in")
    answer = client.post("/sign-in", data={"csrf": csrf_of(page.text), "class_name": "Physics", "name": "Ada",
                                           "password": PASSWORD})
    assert answer.status_code == 303 and answer.headers["location"] == "/"
    session = next(v for v in answer.headers.get_list("set-cookie") if v.startswith("chainrule_session="))
    assert "HttpOnly" in session and "SameSite=Lax" in session and "Secure" not in session  # plain HTTP here
    tampered = client.cookies["chainrule_session"].replace(".", ".1", 1)
    other = world.client()
    other.cookies.set("chainrule_session", tampered)
    assert other.get("/api/class/me").status_code == 401


def test_sign_in_attempts_are_limited_per_name(world):
    client = world.client()
    csrf = csrf_of(client.get("/sign-in").text)
    for _ in range(FREE_FAILURES):
        wrong = client.post("/sign-in", data={"csrf": csrf, "class_name": "Physics", "name": "Bea", "password": "nope nope nope"})
        assert wrong.status_code == 403 and "not right" in wrong.text
        csrf = csrf_of(wrong.text)  # the page shown again carries a fresh token
    limited = client.post("/sign-in", data={"csrf": csrf, "class_name": "Physics", "name": "Bea", "password": PASSWORD})
    assert limited.status_code == 429 and "too many failed sign-ins" in limited.text
    world.clock.now += timedelta(minutes=16)
    csrf = csrf_of(limited.text)
    assert client.post("/sign-in", data={"csrf": csrf, "class_name": "Physics", "name": "Bea",
                                         "password": PASSWORD}).status_code == 303


def test_simultaneous_right_sign_ins_are_never_refused_within_the_free_failures(world):
    """Attempts are reserved as failures one transaction at a time, each with the time its request read: one read
    at 100.0 s may be written after one read at 100.1 s. With no wait owed (fewer than FREE_FAILURES), it must
    not be refused for being "before" the other (it was answered 429, "try again in 1 seconds")."""
    from chainrule.classes.accounts import wait_after
    from chainrule.progress.class_store import ClassStore

    tables = ClassStore(world.store)
    later, wait = tables.reserve_attempt("name:physics/ada", 100.1, 0.0, wait_after)
    assert later is not None and wait == 0.0
    earlier, wait = tables.reserve_attempt("name:physics/ada", 100.0, 0.0, wait_after)
    assert earlier is not None and wait == 0.0
    for _ in range(FREE_FAILURES - 2):
        assert tables.reserve_attempt("name:physics/ada", 100.2, 0.0, wait_after)[0] is not None
    refused, wait = tables.reserve_attempt("name:physics/ada", 100.3, 0.0, wait_after)  # now a wait is owed
    assert refused is None and wait == pytest.approx(wait_after(FREE_FAILURES) - 0.1)


def test_a_password_kept_at_an_older_cost_is_kept_at_todays_after_the_next_sign_in(world):
    """A hash made with other argon2 parameters (argon2-cffi's defaults were the cost before issue 31) still
    signs in; that sign-in keeps the password again at the server's cost, and no session ends with it."""
    from chainrule.progress.class_store import ClassStore

    tables = ClassStore(world.store)
    ada_id = world.ada.get("/api/class/me").json()["id"]
    older = PasswordHasher(time_cost=2, memory_cost=4 * 1024, parallelism=2).hash(PASSWORD)
    world.store.database.write(lambda conn: conn.execute(
        "UPDATE accounts SET password_hash = ? WHERE id = ?", (older, ada_id)))

    def sign_in() -> None:
        client = world.client()
        csrf = csrf_of(client.get("/sign-in").text)
        answer = client.post("/sign-in", data={"csrf": csrf, "class_name": "Physics", "name": "Ada",
                                               "password": PASSWORD})
        assert answer.status_code == 303, answer.text

    sign_in()
    renewed = tables.password_hash("Physics", "Ada")[1]
    assert renewed != older and not FAST_HASHER.check_needs_rehash(renewed) and FAST_HASHER.verify(renewed, PASSWORD)
    assert world.ada.get("/api/class/me").status_code == 200  # the session from before goes on
    sign_in()
    assert tables.password_hash("Physics", "Ada")[1] == renewed  # at today's cost: left as it is
    assert not tables.renew_password_hash(ada_id, older, FAST_HASHER.hash("changed meanwhile"))  # a reset won


def test_a_closed_class_takes_no_newcomer_even_past_the_checks_before_the_write(world):
    """Closed between a newcomer's checks and the write that makes their account (an invite, a sign-in
    provider, an LMS launch): the write itself refuses a learner; a teacher from the LMS still comes in."""
    from chainrule.progress.class_store import ClassClosed, ClassStore
    from chainrule.progress.lti_store import LtiStore
    from chainrule.progress.sso_store import SsoStore

    class_id = world.physics.class_id
    world.store.database.write(lambda conn: conn.execute("UPDATE classes SET state = 'closed' WHERE id = ?", (class_id,)))
    at = world.clock.now.isoformat()
    with pytest.raises(ClassClosed):
        ClassStore(world.store).add_learner(class_id, "Cy", FAST_HASHER.hash(PASSWORD), at, lambda names: None)
    with pytest.raises(ClassClosed):
        SsoStore(world.store).join("https://id.example", "cy", class_id, lambda names: "Cy", at)
    lti = LtiStore(world.store)
    with pytest.raises(ClassClosed):
        lti.linked_account("https://lms.example", "cy", class_id, "learner", lambda names: "Cy", at)
    teacher, made = lti.linked_account("https://lms.example", "hopper", class_id, "teacher", lambda names: "Hopper", at)
    assert made and world.accounts.account(teacher).role == "teacher"
    assert sorted(ClassStore(world.store).names(class_id)) == ["Ada", "Bea", "Hopper", "Teacher"]


def test_a_reset_link_works_once_and_ends_the_old_sessions(world):
    ada_id = world.ada.get("/api/class/me").json()["id"]
    assert send(world.chemistry_teacher, "POST", f"/api/class/learners/{ada_id}/reset-link").status_code == 404
    made = send(world.physics_teacher, "POST", f"/api/class/learners/{ada_id}/reset-link")
    assert made.status_code == 200
    path = made.json()["link"].removeprefix(BASE)
    fresh = world.client()
    page = fresh.get(path)
    assert "Ada" in page.text
    assert fresh.post(path, data={"csrf": csrf_of(page.text), "password": "a brand new password"}).status_code == 303
    assert world.ada.get("/api/class/me").status_code == 401  # the old session ended
    assert fresh.get("/api/class/me").json()["name"] == "Ada"
    again = world.client()
    assert again.get(path).status_code == 404  # used once


def test_joining_needs_a_valid_invite_a_free_name_and_a_real_password(world):
    client = world.client()
    assert client.get("/join/not-an-invite").status_code == 404
    page = client.get(f"/join/{world.physics.invite_token}")
    taken = client.post(f"/join/{world.physics.invite_token}",
                        data={"csrf": csrf_of(page.text), "name": "Ada", "password": PASSWORD})
    assert taken.status_code == 409 and "already goes by" in taken.text
    short = client.post(f"/join/{world.physics.invite_token}",
                        data={"csrf": csrf_of(taken.text), "name": "Dee", "password": "short"})
    assert short.status_code == 422
    no_csrf = client.post(f"/join/{world.physics.invite_token}", data={"name": "Dee", "password": PASSWORD})
    assert no_csrf.status_code == 403


def test_a_foreign_host_or_origin_is_refused(read_world):
    ada = read_world.ada
    assert ada.get("/api/class/me", headers={"Host": "evil.example"}).status_code == 403
    refused = ada.put("/api/progress/code", headers={"Origin": "http://evil.example",
                                                     "X-CSRF-Token": ada.cookies["chainrule_csrf"]},
                      json={"exercise": "neuron-grads", "language": "python", "source": "x"})
    assert refused.status_code == 403


def test_a_personal_export_imports_into_a_class_account_and_comes_back_the_same(world, tmp_path):
    personal = open_store(tmp_path / "personal", clock=world.clock, fuzzing=False)
    try:
        personal.save_prediction("backprop", "n", 0.8814, True)
        personal.record_submission("neuron-grads", "python", "mine", {"status": "pass"})
        personal.answer_question("backprop", "product-gradient", "6", True)
        document = personal.export_data()
    finally:
        personal.close()
    imported = send(world.bea, "POST", "/api/class/progress/import", json=document)
    assert imported.status_code == 200 and imported.json()["added"]["submissions"] == 1
    # The imported run's code ("mine") is graded again here: a second run, whose verdict is the class's.
    [again] = imported.json()["graded_again"]
    assert again["exercise"] == "neuron-grads" and again["status"] != "pass" and again["verdict"]
    back = world.bea.get("/api/class/progress/export").json()
    assert back["submissions"][0] == document["submissions"][0] and len(back["submissions"]) == 2
    assert {key: value for key, value in back.items() if key not in ("exported_at", "submissions", "code")} == \
        {key: value for key, value in document.items() if key not in ("exported_at", "submissions", "code")}
    assert world.ada.get("/api/class/progress/export").json()["submissions"] == []
    bad = send(world.bea, "POST", "/api/class/progress/import", json={"format": "nope"})
    assert bad.status_code == 422


def test_behind_tls_cookies_are_secure_and_the_https_origin_is_accepted(store_place):
    clock = Clock()
    store = open_store(**store_place("tls"), clock=clock, fuzzing=False, file_name=CLASS_DATABASE)
    try:
        accounts = Accounts(store, hasher=FAST_HASHER)
        made = accounts.create_class("Secure")
        app = create_class_app(store, accounts=accounts, secure=True,
                               hosts=["class.example.org"], clock=clock)
        client = TestClient(app, base_url="https://class.example.org", follow_redirects=False)
        page = client.get(f"/join/{made.invite_token}")
        joined = client.post(f"/join/{made.invite_token}", headers={"Origin": "https://class.example.org"},
                             data={"csrf": csrf_of(page.text), "name": "Ada", "password": PASSWORD})
        assert joined.status_code == 303
        cookies = joined.headers.get_list("set-cookie")
        assert len(cookies) == 3 and all("Secure" in cookie and "Path=/;" in cookie for cookie in cookies)
        # __Host- names: a page on another port or a sibling host name cannot plant or overwrite them.
        assert sorted(cookie.split("=", 1)[0] for cookie in cookies) == [
            "__Host-chainrule_csrf", "__Host-chainrule_device", "__Host-chainrule_session"]
        assert client.get("/api/class/me").json()["name"] == "Ada"
    finally:
        store.close()


@pytest.mark.parametrize(("argv", "says"), [
    (["--url", "ftp://class.example.org"], "--url must be an address like https://class.example.org"),
    (["--port", "0"], "--port must be between 1 and 65535"),
])
def test_serve_refuses_bad_options_with_the_reason(argv, says, capsys):
    from chainrule import cli

    assert cli.main(["serve", *argv]) == 2
    assert says in capsys.readouterr().err


def test_the_account_page_names_the_learner_and_signs_out(world):
    page = world.ada.get("/account")
    assert page.status_code == 200 and "Signed in as <strong>Ada</strong> in Physics" in page.text
    assert 'href="/account">Ada</a>' in world.ada.get("/lessons/backprop").text  # the site's menu names them
    copied = world.client()
    copied.cookies.set("chainrule_session", world.ada.cookies["chainrule_session"])
    assert copied.get("/api/class/me").status_code == 200
    out = world.ada.post("/sign-out", data={"csrf": csrf_of(page.text)})
    assert out.status_code == 303 and out.headers["location"] == "/sign-in"
    assert world.ada.get("/api/class/me").status_code == 401
    assert copied.get("/api/class/me").status_code == 401  # signed out everywhere


def test_a_large_progress_file_imports_and_a_huge_one_is_refused(world, tmp_path):
    """A file with many runs is far above the API's 256 KB limit: the import has its own, 32 MB."""
    personal = open_store(tmp_path / "personal", clock=world.clock, fuzzing=False)
    try:
        for index in range(20):
            personal.record_submission("neuron-grads", "python", f"# run {index}\n" + "x = 1\n" * 5000, {"status": "fail"})
        document = personal.export_data()
    finally:
        personal.close()
    import json

    assert len(json.dumps(document)) > 512 * 1024
    imported = send(world.bea, "POST", "/api/class/progress/import", json=document)
    assert imported.status_code == 200 and imported.json()["added"]["submissions"] == 20
    huge = world.bea.post("/api/class/progress/import", content=b"{" + b" " * (33 * 1024 * 1024) + b"}",
                          headers={"Content-Type": "application/json", "X-CSRF-Token": world.bea.cookies["chainrule_csrf"]})
    assert huge.status_code == 413 and "33554432 bytes" in huge.json()["detail"]
    other = send(world.bea, "PUT", "/api/progress/code",
                 json={"exercise": "neuron-grads", "language": "python", "source": "y" * (300 * 1024)})
    assert other.status_code == 413  # every other route keeps the 256 KB limit


@pytest.mark.parametrize("learner_id", ["99999999999999999999", "2147483648", "0", "-5", "x"])
def test_an_id_out_of_range_is_refused_not_a_server_error(read_world, learner_id):
    teacher = read_world.physics_teacher
    assert teacher.get(f"/api/class/learners/{learner_id}/timeline").status_code == 422
    assert send(teacher, "POST", f"/api/class/learners/{learner_id}/reset-link").status_code == 422
    assert read_world.accounts.account(2**70) is None


@pytest.mark.parametrize("cookie", ["chainrule_session=1.1.1.\xe9t\xe9", "chainrule_session=1.1.1.abc; chainrule_csrf=\xe9.\xe9"])
def test_a_cookie_with_any_bytes_is_a_stranger_not_a_server_error(read_world, cookie):
    """Cookies arrive as Latin-1 text: a signature with non-ASCII characters is simply not a valid one."""
    stranger = read_world.client()
    raw = {"Cookie": cookie.encode("latin-1"), "X-CSRF-Token": "\xe9.\xe9".encode("latin-1")}
    assert stranger.get("/api/progress/backprop", headers=raw).status_code == 401
    assert stranger.put("/api/progress/code", headers=raw,
                        json={"exercise": "neuron-grads", "language": "python", "source": "x"}).status_code in (401, 403)
