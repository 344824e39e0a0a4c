"""A class's people and life, decided by its teachers, and comments on a learner's run (issue 29, items 6 and
7), against `chainrule serve --workers 1` and `chainrule class` as real processes on SQLite and PostgreSQL.

- The invite on the page: the teacher's API gives the very link `chainrule class create` printed, rotates it
  (the old one stops working), and says the seats; a learner and another class's teacher cannot.
- Rename a learner, a second teacher, a teacher's new password (every other session ends), a learner's
  data exported before they are removed.
- A closed class takes no one and its learners' work is read-only; an archived one is read-only for its
  teachers too; opened again, all works.
- Comments: a teacher comments on a line or the whole file, the learner reads them and answers; nobody else
  (a classmate, another class's teacher) can read or write them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chainrule.classes import open_class_store
from class_world import PASSWORD, csrf_of, send
from served_class import a_run, learner_id, served  # noqa: F401 (served: a module-scoped server per backend)

pytestmark = pytest.mark.timeout(240)

EXERCISE = "neuron-grads"


def a_class(served, name: str, *options: str):
    """(teacher client, invite link, [learner clients]) of a new class with learners Ada and Bea."""
    teacher_link, invite = served.new_class(name, *options)
    learners = []
    for learner in ("Ada", "Bea"):
        client, joined = served.join(invite, learner)
        assert joined.status_code == 303, joined.text
        learners.append(client)
    return served.teacher(teacher_link), invite, learners


@pytest.fixture(scope="module")
def elsewhere(served):
    """Another class on the same server (its teacher, invite and learners), for every cross-class refusal."""
    return a_class(served, "Elsewhere")


def test_the_teacher_sees_the_invite_and_seats_rotates_the_invite_and_nobody_else_can(served, elsewhere):
    teacher, invite, (ada, _) = a_class(served, "Invite page", "--seats", "30")
    other, other_invite, _ = elsewhere
    people = teacher.get("/api/class/people")
    assert people.status_code == 200, people.text
    shown = people.json()
    assert shown["invite"] == invite  # the very link `chainrule class create` printed
    assert (shown["state"], shown["seats"], shown["taken"], shown["seats_text"]) == (
        "open", 30, 2, "2 of 30 seats taken")
    assert [learner["name"] for learner in shown["learners"]] == ["Ada", "Bea"]
    assert [(t["name"], t["you"]) for t in shown["teachers"]] == [("Teacher", True)]
    assert other.get("/api/class/people").json()["invite"] == other_invite

    assert ada.get("/api/class/people").status_code == 403
    assert send(ada, "POST", "/api/class/invite").status_code == 403
    assert teacher.post("/api/class/invite").status_code == 403  # no CSRF header: refused

    rotated = send(teacher, "POST", "/api/class/invite")
    assert rotated.status_code == 200, rotated.text
    new_invite = rotated.json()["invite"]
    assert new_invite != invite and teacher.get("/api/class/people").json()["invite"] == new_invite
    assert served.client().get(invite).status_code == 404
    assert served.join(new_invite, "Cy")[1].status_code == 303
    assert other.get("/api/class/people").json()["invite"] == other_invite  # another class's is untouched


def test_rename_a_learner_and_add_a_second_teacher_who_may_do_the_same(served, elsewhere):
    teacher, _, (ada, bea) = a_class(served, "Names")
    other, _, (stranger, _) = elsewhere
    ada_id = learner_id(ada)
    renamed = send(teacher, "PUT", f"/api/class/learners/{ada_id}/name", json={"name": " Ada L. "})
    assert renamed.status_code == 200, renamed.text
    assert renamed.json() == {"id": ada_id, "name": "Ada L."}
    assert ada.get("/api/class/me").json()["name"] == "Ada L."  # still signed in, under the new name
    taken = send(teacher, "PUT", f"/api/class/learners/{ada_id}/name", json={"name": "BEA"})
    assert taken.status_code == 409 and "goes by a name that looks the same" in taken.json()["detail"]
    empty = send(teacher, "PUT", f"/api/class/learners/{ada_id}/name", json={"name": "\u200b"})
    assert empty.status_code == 422 and empty.json()["field"] == "name"
    # Another class's teacher finds no such learner; a learner cannot rename anyone.
    assert send(other, "PUT", f"/api/class/learners/{ada_id}/name", json={"name": "X"}).status_code == 404
    assert send(bea, "PUT", f"/api/class/learners/{ada_id}/name", json={"name": "X"}).status_code == 403

    assert send(bea, "POST", "/api/class/teachers", json={"name": "Mallory"}).status_code == 403
    assert send(stranger, "POST", "/api/class/teachers", json={"name": "Mallory"}).status_code == 403
    added = send(teacher, "POST", "/api/class/teachers", json={"name": "Ms Brown"})
    assert added.status_code == 200, added.text
    second = served.teacher(added.json()["link"].removeprefix(served.base))
    assert second.get("/teacher").status_code == 200, "".join(served.web.lines[-40:])
    listed = second.get("/api/class/people").json()
    assert [(t["name"], t["signed_up"], t["you"]) for t in listed["teachers"]] == [
        ("Teacher", True, False), ("Ms Brown", True, True)]
    again = send(second, "PUT", f"/api/class/learners/{ada_id}/name", json={"name": "Ada Lovelace"})
    assert again.status_code == 200 and ada.get("/api/class/me").json()["name"] == "Ada Lovelace"
    assert "Ms Brown" not in json.dumps(other.get("/api/class/people").json())


def test_a_teacher_changes_their_password_and_every_other_session_ends(served):
    teacher_link, _ = served.new_class("Password")
    teacher = served.teacher(teacher_link)
    elsewhere, signed_in = served.sign_in("Password", "Teacher")
    assert signed_in.status_code == 303 and elsewhere.get("/api/class/me").status_code == 200
    page = teacher.get("/account")
    assert page.status_code == 200 and "Change your password" in page.text and "Sign out everywhere" in page.text
    wrong = send(teacher, "POST", "/api/class/account/password",
                 json={"current": "not the password", "new": "a brand new password"})
    assert wrong.status_code == 403 and "nothing was changed" in wrong.json()["detail"]
    short = send(teacher, "POST", "/api/class/account/password", json={"current": "x", "new": "short"})
    assert short.status_code == 422 and short.json()["field"] == "password"
    changed = send(teacher, "POST", "/api/class/account/password",
                   json={"current": PASSWORD, "new": "a brand new password"})
    assert changed.status_code == 200, changed.text
    assert teacher.get("/api/class/me").status_code == 200  # this browser got a new session
    assert elsewhere.get("/api/class/me").status_code == 401  # every other one ended
    assert served.sign_in("Password", "Teacher")[1].status_code == 403  # the old password is refused
    client = served.client()
    page = client.get("/sign-in")
    assert client.post("/sign-in", data={"csrf": csrf_of(page.text), "class_name": "Password", "name": "Teacher",
                                         "password": "a brand new password"}).status_code == 303


def test_a_closed_class_takes_no_one_and_is_read_only_an_archived_one_for_its_teachers_too(served):
    teacher, invite, (ada, _) = a_class(served, "Closing")
    ada_id = learner_id(ada)
    code = {"exercise": EXERCISE, "language": "python", "source": "# before"}
    assert send(ada, "PUT", "/api/progress/code", json=code).status_code == 200
    assert send(ada, "PUT", "/api/class/state", json={"state": "closed"}).status_code == 403  # not a learner's
    assert send(teacher, "PUT", "/api/class/state", json={"state": "shut"}).status_code == 422
    closed = send(teacher, "PUT", "/api/class/state", json={"state": "closed"})
    assert closed.status_code == 200 and closed.json()["state"] == "closed"

    page = served.client().get(invite)
    assert page.status_code in (403, 404) and "is closed: it takes no new learners" in page.text
    client = served.client()  # a join sent anyway (with a form token of this server) is refused as clearly
    token = csrf_of(client.get("/sign-in").text)
    joined = client.post(invite, data={"csrf": token, "name": "Cy", "password": PASSWORD})
    assert joined.status_code == 404 and "is closed: it takes no new learners" in joined.json()["detail"]
    refused = send(ada, "PUT", "/api/progress/code", json=dict(code, source="# after"))
    assert refused.status_code == 403 and "'Closing' is closed" in refused.json()["detail"]
    kept = json.dumps(ada.get("/api/progress/backprop").json()["code"])  # reading goes on
    explored = send(ada, "POST", "/api/lessons/backprop/explore/section03", json={"values": {}})
    assert explored.status_code == 200, explored.text  # running a lesson's graph keeps nothing: not refused
    assert "# before" in kept and "# after" not in kept
    assert teacher.get("/api/class/people").json()["invite"] is None
    assert send(teacher, "POST", "/api/class/invite").status_code == 403
    # A closed class's teachers still work: they rename, comment, grade.
    assert send(teacher, "PUT", f"/api/class/learners/{ada_id}/name", json={"name": "Ada B."}).status_code == 200

    assert send(teacher, "PUT", "/api/class/state", json={"state": "archived"}).status_code == 200
    archived = send(teacher, "PUT", f"/api/class/learners/{ada_id}/name", json={"name": "Ada C."})
    assert archived.status_code == 403 and "is archived" in archived.json()["detail"]
    assert teacher.get("/api/class/overview").status_code == 200  # reading goes on
    assert send(teacher, "PUT", "/api/class/state", json={"state": "open"}).status_code == 200
    assert send(ada, "PUT", "/api/progress/code", json=dict(code, source="# after")).status_code == 200
    new_invite = send(teacher, "POST", "/api/class/invite").json()["invite"]
    assert served.join(new_invite, "Cy")[1].status_code == 303


def test_a_teacher_keeps_a_learners_data_before_removing_them(served, elsewhere):
    teacher, _, (ada, bea) = a_class(served, "Leaving")
    other, _, _ = elsewhere
    ada_id = learner_id(ada)
    a_run(served, ada_id, "# Ada's own work")
    assert bea.get(f"/api/class/learners/{ada_id}/export").status_code == 403
    assert other.get(f"/api/class/learners/{ada_id}/export").status_code == 404
    exported = teacher.get(f"/api/class/learners/{ada_id}/export")
    assert exported.status_code == 200 and "attachment" in exported.headers["content-disposition"]
    assert exported.json()["submissions"][0]["source"] == "# Ada's own work"
    assert send(teacher, "DELETE", f"/api/class/learners/{ada_id}").status_code == 200
    assert teacher.get(f"/api/class/learners/{ada_id}/export").status_code == 404
    assert ada.get("/api/class/me").status_code == 401


# ------------------------------------------------------------------------------------------------ item 7


def test_a_teacher_comments_on_a_run_and_only_its_learner_reads_and_answers(served, elsewhere):
    teacher, _, (ada, bea) = a_class(served, "Feedback")
    other, _, (stranger, _) = elsewhere
    ada_id = learner_id(ada)
    run_id = a_run(served, ada_id, "x = 1\ny = x * 2\nprint(y)\n")
    runs = teacher.get(f"/api/class/learners/{ada_id}/runs")
    assert runs.status_code == 200 and [run["id"] for run in runs.json()["runs"]] == [run_id]

    on_line = send(teacher, "POST", f"/api/class/runs/{run_id}/comments",
                   json={"line": 2, "body": "Why **2**? <script>alert(1)</script>"})
    assert on_line.status_code == 200, on_line.text
    assert (on_line.json()["line"], on_line.json()["author"]) == (2, "Teacher")
    whole = send(teacher, "POST", f"/api/class/runs/{run_id}/comments", json={"line": None, "body": "Nice start."})
    assert whole.status_code == 200
    for line in (0, 4, True, "2"):
        bad = send(teacher, "POST", f"/api/class/runs/{run_id}/comments", json={"line": line, "body": "x"})
        assert bad.status_code == 422, (line, bad.text)
    for body in ("", "   ", "a\x00b", "x" * 4001):
        assert send(teacher, "POST", f"/api/class/runs/{run_id}/comments",
                    json={"body": body}).status_code == 422, body
    assert teacher.post(f"/api/class/runs/{run_id}/comments", json={"body": "no CSRF"}).status_code == 403

    # Ada reads them (kept as written: the page renders them as text) and answers.
    [thread] = ada.get("/api/class/comments", params={"exercise": EXERCISE}).json()["runs"]
    assert [(c["line"], c["body"], c["by_teacher"]) for c in thread["comments"]] == [
        (2, "Why **2**? <script>alert(1)</script>", True), (None, "Nice start.", True)]
    assert ada.get("/api/class/comments", params={"exercise": "other"}).json()["runs"] == []
    answer = send(ada, "POST", f"/api/class/runs/{run_id}/comments", json={"line": 2, "body": "It doubles x."})
    assert answer.status_code == 200 and answer.json()["by_teacher"] is False
    seen = teacher.get(f"/api/class/learners/{ada_id}/runs").json()["runs"][0]["comments"]
    assert [c["author"] for c in seen] == ["Teacher", "Teacher", "Ada"]
    [latest] = teacher.get("/api/class/answers").json()["answers"]  # the teacher's page lists the answer
    assert (latest["author"], latest["learner_id"], latest["run_id"], latest["body"]) == (
        "Ada", ada_id, run_id, "It doubles x.")
    assert other.get("/api/class/answers").json()["answers"] == []
    assert ada.get("/api/class/answers").status_code == 403

    # Nobody else reads or writes them: a classmate, another class's teacher or learner.
    for client in (bea, other, stranger):
        assert client.get("/api/class/comments").json()["runs"] == []
        assert send(client, "POST", f"/api/class/runs/{run_id}/comments", json={"body": "hi"}).status_code == 404
    assert other.get(f"/api/class/learners/{ada_id}/runs").status_code == 404
    assert bea.get(f"/api/class/learners/{ada_id}/runs").status_code == 403
    assert send(teacher, "POST", "/api/class/runs/999999/comments", json={"body": "hi"}).status_code == 404

    # A closed class: the teacher still comments, the learner only reads.
    assert send(teacher, "PUT", "/api/class/state", json={"state": "closed"}).status_code == 200
    assert send(ada, "POST", f"/api/class/runs/{run_id}/comments", json={"body": "more"}).status_code == 403
    assert send(teacher, "POST", f"/api/class/runs/{run_id}/comments", json={"body": "Done."}).status_code == 200
    assert len(ada.get("/api/class/comments").json()["runs"][0]["comments"]) == 4
    # Removing the learner takes their comments with them.
    assert send(teacher, "DELETE", f"/api/class/learners/{ada_id}").status_code == 200
    store = open_class_store(Path(served.env["CHAINRULE_DATA_DIR"]), served.env.get("CHAINRULE_DATABASE"))
    try:
        left = store.database.read(lambda conn: conn.execute(
            "SELECT COUNT(*) FROM comments WHERE learner_id = ?", (ada_id,)).fetchone()[0])
    finally:
        store.close()
    assert left == 0
