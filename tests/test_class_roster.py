"""Issue 43, item 6: rosters and sections, a teaching assistant, bulk approve and remove, on SQLite and
PostgreSQL (class_world's in-process class server; every test runs once per backend).

- A roster CSV is taken whole or not at all: a bad file (not UTF-8, a formula cell, a duplicate e-mail, too many
  rows or bytes, a wrong header) stores nothing, and its error names every bad line.
- A listed learner joins with their e-mail or school id: they take its section and skip the approval wait.
- The grid, the gradebook (CSV) and the explanations narrow to a section (?section=), in every count.
- A teaching assistant may call every "staff" route and no "teacher" route (the lists come from the app's own
  routes, so a new route is covered), and comments on a run.
"""

from __future__ import annotations

import csv
import io
import json
import re

from fastapi.routing import APIRoute

from chainrule.classes.roster import MAX_ROSTER_BYTES, MAX_ROSTER_ROWS
from chainrule.web.roles import NOT_FOR_ASSISTANTS, role_of, routes_of
from class_world import PASSWORD, csrf_of, send, world  # noqa: F401 (fixture)

ROSTER = ("\ufeffName,E-mail,Section\r\n"
          "Dee Ray,dee@school.example,Monday\r\n"
          "Eli Fox,Eli@School.example,Tuesday\r\n"
          "Flo Kim,flo@school.example,\r\n").encode("utf-8")


def import_roster(client, data: bytes):
    return client.post("/api/class/roster.csv", content=data, headers={
        "X-CSRF-Token": client.cookies.get("chainrule_csrf", ""), "content-type": "text/csv"})


def join(world, name: str, key: str = ""):
    """A learner joining Physics through its join form, giving ``key`` as their e-mail or school id."""
    client = world.client()
    page = client.get(f"/join/{world.physics.invite_token}")
    answer = client.post(f"/join/{world.physics.invite_token}", data={
        "csrf": csrf_of(page.text), "name": name, "password": PASSWORD, "roster_key": key})
    return client, page, answer


def listed(world) -> list[dict]:
    answer = world.physics_teacher.get("/api/class/roster")
    assert answer.status_code == 200, answer.text
    return answer.json()["entries"]


def test_a_listed_learner_joins_into_their_section_without_waiting(world):
    teacher = world.physics_teacher
    assert send(teacher, "PUT", "/api/class/admission", json={"seats": None, "approval": True}).status_code == 200
    assert 'name="roster_key"' not in world.client().get(f"/join/{world.physics.invite_token}").text  # no roster yet
    imported = import_roster(teacher, ROSTER)
    assert imported.status_code == 200, imported.text
    assert imported.json() == {"added": 3, "updated": 0,
                               "text": "3 people added to the roster, 0 people already on it updated"}
    assert [(e["name"], e["key"], e["section"], e["joined_as"]) for e in listed(world)] == [
        ("Flo Kim", "flo@school.example", "", None), ("Dee Ray", "dee@school.example", "Monday", None),
        ("Eli Fox", "eli@school.example", "Tuesday", None)]

    eli, page, answer = join(world, "Eli", " ELI@school.example ")  # the e-mail as the learner types it
    assert 'name="roster_key"' in page.text and answer.status_code == 303, answer.text  # in at once: no wait
    me = eli.get("/api/class/me").json()
    people = {p["name"]: p for p in teacher.get("/api/class/people").json()["learners"]}
    assert people["Eli"] == {"id": me["id"], "name": "Eli", "approved": True, "section": "Tuesday"}
    _, _, unlisted = join(world, "Gus")  # no key: joins as before, waiting for approval
    assert unlisted.status_code == 202 and "lets each learner in" in unlisted.text
    for key, said in (("eli@school.example", "someone has joined with that e-mail or school id already"),
                      ("nobody@school.example", "not on this class&#39;s roster")):
        _, _, refused = join(world, f"Other {len(key)}", key)
        assert refused.status_code == 403 and said in refused.text, (refused.status_code, refused.text[-2000:])

    moved = import_roster(teacher, b"name,section,email\nEli Fox,Monday,eli@school.example\n")
    assert moved.json()["added"] == 0 and moved.json()["updated"] == 1
    assert {p["name"]: p["section"] for p in teacher.get("/api/class/people").json()["learners"]}["Eli"] == "Monday"
    assert teacher.get("/api/class/roster").json()["sections"] == ["Monday"]  # no one is in Tuesday now


def test_a_roster_of_school_ids_seats_a_learner_by_their_id(world):
    """The roster's other key (issue 43 item 6: "e-mail or school id"): a learner who joins with the school id the
    roster lists takes its seat and section, let in at once; an id the roster does not list is refused."""
    teacher = world.physics_teacher
    assert send(teacher, "PUT", "/api/class/admission", json={"seats": None, "approval": True}).status_code == 200
    imported = import_roster(teacher, b"name,school id,section\nKit Lee,S-1042,Lab\nMo Ng,S-1043,\n")
    assert imported.status_code == 200 and imported.json()["added"] == 2, imported.text
    kit, _, answer = join(world, "Kit", "S-1042")
    assert answer.status_code == 303, answer.text  # in at once, though the class asks for approval
    people = {p["name"]: p for p in teacher.get("/api/class/people").json()["learners"]}
    assert people["Kit"] == {"id": kit.get("/api/class/me").json()["id"], "name": "Kit", "approved": True,
                             "section": "Lab"}
    assert [(e["key"], e["joined_as"] is not None) for e in listed(world) if e["name"] == "Kit Lee"] == [
        ("S-1042", True)]
    _, _, refused = join(world, "Zed", "S-9999")
    assert refused.status_code == 403 and "not on this class&#39;s roster" in refused.text, refused.text[-2000:]


def _rows(count: int) -> bytes:
    return ("name,school id,section\n" + "".join(f"P{n},id{n},S\n" for n in range(count))).encode()


BAD_FILES = {
    "latin-1": ("name,e-mail,section\nJosé,jose@school.example,A\n".encode("latin-1"), 422,
                "this file is not UTF-8 text (byte 0xe9 at position 23 is not UTF-8)"),
    "formula": (b"name,e-mail,section\nOk,ok@school.example,A\n=cmd|' /C calc'!A0,x@school.example,A\n"
                b"Bo,bo@school.example,@SUM(1)\n", 422, "2 rows cannot be imported, so nothing was: line 3: the "
                "cell \"=cmd|' /C calc'!A0\" starts with '=', which a spreadsheet runs as a formula"),
    "duplicate": (b"name,e-mail,section\nA,a@school.example,\nB,b@school.example,\nA2,A@School.example,\n", 422,
                  "line 4: the e-mail 'a@school.example' is on line 2 too: each person once"),
    "header": (b"name,phone,section\nA,555,\n", 422, "line 1, the header: column 2 is 'phone'"),
    "bad cells": (b"name,e-mail,section\n,a@school.example,\nB,not-an-email,\n", 422,
                  "line 2: the name must be 1 to 60 characters, got 0; line 3: the e-mail 'not-an-email' is not one"),
    "too many rows": (_rows(MAX_ROSTER_ROWS + 1), 422, f"a roster is at most {MAX_ROSTER_ROWS:,}"),
    "too many bytes": (b"name,e-mail,section\n" + b"A,a@school.example," + b"x" * MAX_ROSTER_BYTES + b"\n", 422,
                       f"a roster is at most {MAX_ROSTER_BYTES:,} bytes"),
    "far too many bytes": (b"x" * (3 * MAX_ROSTER_BYTES), 413, "request body too large"),
    "empty": (b"\n\n", 422, "this file is empty"),
}


def test_a_bad_roster_stores_nothing_and_says_each_bad_line(world):
    teacher = world.physics_teacher
    for case, (data, status, said) in BAD_FILES.items():
        answer = import_roster(teacher, data)
        assert answer.status_code == status and said in answer.json()["detail"], (case, answer.text[:600])
        assert listed(world) == [], case
    problems = import_roster(teacher, BAD_FILES["formula"][0]).json()["problems"]
    assert [p["message"][:7] for p in problems] == ["line 3:", "line 4:"]


def _runs_and_answers(world, sections: dict[str, str]) -> dict[str, int]:
    """Ada (section A) passes an exercise at once and answers a question right; Bea (section B) fails twice."""
    teacher = world.physics_teacher
    ids = {p["name"]: p["id"] for p in teacher.get("/api/class/people").json()["learners"]}
    for name, section in sections.items():
        answer = send(teacher, "PUT", f"/api/class/learners/{ids[name]}/section", json={"section": section})
        assert answer.json()["section"] == section, answer.text
    world.store.for_learner(ids["Ada"]).record_submission("neuron-grads", "python", "# ada",
                                                          {"status": "pass", "tests": []})
    for attempt in range(2):
        world.store.for_learner(ids["Bea"]).record_submission("neuron-grads", "python", f"# bea {attempt}", {
            "status": "fail", "verdict": "failed", "tests": []})
    return ids


def test_the_grid_gradebook_and_explanations_narrow_to_a_section(world):
    teacher = world.physics_teacher
    ids = _runs_and_answers(world, {"Ada": "A", "Bea": "B"})

    def exercise(data: dict) -> dict:
        return next(row for row in data["exercises"] if row["exercise_id"] == "neuron-grads")

    whole = teacher.get("/api/class/overview").json()
    only_a = teacher.get("/api/class/overview", params={"section": "A"}).json()
    only_b = teacher.get("/api/class/overview", params={"section": "B"}).json()
    assert [row["name"] for row in whole["roster"]] == ["Ada", "Bea"]
    assert [(row["name"], row["section"]) for row in only_a["roster"]] == [("Ada", "A")]
    assert [row["name"] for row in only_b["roster"]] == ["Bea"]
    # Every count is the section's: 3 runs in the class, Ada's 1 (passed at once), Bea's 2 (neither passed).
    assert (exercise(whole)["runs"], exercise(only_a)["runs"], exercise(only_b)["runs"]) == (3, 1, 2)
    assert (exercise(only_a)["passed_first_run"], exercise(only_b)["passed_first_run"]) == (1.0, 0.0)

    gradebook = list(csv.reader(io.StringIO(teacher.get("/teacher/gradebook.csv", params={"section": "B"}).text)))
    assert gradebook[0][-1] == "class section" and [[row[0], row[-1]] for row in gradebook[1:]] == [["Bea", "B"]]
    explained = teacher.get("/api/class/lessons/backprop/explanations", params={"section": "A"}).json()
    assert [learner["id"] for learner in explained["learners"]] == [ids["Ada"]]
    unknown = teacher.get("/api/class/overview", params={"section": "C"})
    assert unknown.status_code == 422 and unknown.json()["detail"] == \
        "there is no section 'C' in this class: its sections are 'A', 'B'"
    formula = send(teacher, "PUT", f"/api/class/learners/{ids['Ada']}/section", json={"section": "=A1"})
    assert formula.status_code == 422 and "formula" in formula.json()["detail"]


def _assistant(world):
    made = send(world.physics_teacher, "POST", "/api/class/assistants", json={"name": "Tam"})
    assert made.status_code == 200, made.text
    return world.teacher(made.json()["link"].rsplit("/", 1)[1]), made.json()["id"]


def _filled(path: str, ids: dict[str, int]) -> str:
    return re.sub(r"\{(\w+)(:\w+)?\}", lambda m: str(ids.get(m.group(1), "backprop")), path)


def test_an_assistant_reads_and_comments_but_changes_no_grade_and_no_person(world):
    teacher = world.physics_teacher
    ids = _runs_and_answers(world, {"Ada": "A", "Bea": "B"})
    assistant, assistant_id = _assistant(world)
    routes = {(method, route.path): role_of(route)[0] for route in routes_of(world.app.routes)
              if isinstance(route, APIRoute) for method in route.methods - {"HEAD"}}
    # The role says it: a staff route only reads, and every route that changes something is a teacher's.
    assert {key for key, role in routes.items() if role == "staff" and key[0] != "GET"} == set()
    assert {key for key, role in routes.items() if role == "teacher" and key[0] == "GET"} == set()
    filled = {"learner_id": ids["Bea"], "teacher_id": 1, "assistant_id": assistant_id, "regrade_id": 1}
    changing = sorted(key for key, role in routes.items() if role == "teacher")
    assert len(changing) >= 20 and ("POST", "/api/class/roster.csv") in changing
    for method, path in changing:
        answer = send(assistant, method, _filled(path, filled), json={})
        assert answer.status_code == 403 and answer.json()["detail"] == NOT_FOR_ASSISTANTS, (method, path, answer.text)
    reading = sorted(path for (method, path), role in routes.items() if role == "staff")
    assert len(reading) >= 15
    for path in reading:  # the assistant is answered as the teacher is (regrade 1 is not found for either)
        answer = assistant.get(_filled(path, filled), params={"exercise": "neuron-grads"})
        as_teacher = teacher.get(_filled(path, filled), params={"exercise": "neuron-grads"})
        assert answer.status_code == as_teacher.status_code != 403, (path, answer.status_code, answer.text[:200])
    assert assistant.get("/api/class/overview").json() == teacher.get("/api/class/overview").json()

    run_id = world.store.for_learner(ids["Ada"]).record_submission("neuron-grads", "python", "x = 1\n",
                                                                   {"status": "fail", "verdict": "failed", "tests": []})
    said = send(assistant, "POST", f"/api/class/runs/{run_id}/comments", json={"line": 1, "body": "Look again."})
    assert said.status_code == 200 and said.json()["author"] == "Tam", said.text
    thread = world.ada.get("/api/class/comments").json()
    assert "Look again." in str(thread)
    assert [a["name"] for a in teacher.get("/api/class/people").json()["assistants"]] == ["Tam"]
    gone = send(teacher, "DELETE", f"/api/class/assistants/{assistant_id}")
    assert gone.json() == {"id": assistant_id, "name": "Tam"}
    assert assistant.get("/api/class/overview").status_code == 401  # their sessions ended with the account


def test_bulk_approve_and_remove_take_every_id_or_none(world):
    teacher = world.physics_teacher
    assert send(teacher, "PUT", "/api/class/admission", json={"seats": None, "approval": True}).status_code == 200
    for name in ("Gus", "Hal"):
        assert join(world, name)[2].status_code == 202
    people = {p["name"]: p for p in teacher.get("/api/class/people").json()["learners"]}
    waiting = [people["Gus"]["id"], people["Hal"]["id"]]
    cyd = world.cyd.get("/api/class/me").json()["id"]  # a learner of another class: "not found", as no one

    refused = send(teacher, "POST", "/api/class/bulk-approve", json={"ids": [*waiting, cyd]})
    assert refused.status_code == 404, refused.text
    assert not any(p["approved"] for p in teacher.get("/api/class/people").json()["learners"] if p["id"] in waiting)
    approved = send(teacher, "POST", "/api/class/bulk-approve", json={"ids": waiting})
    assert approved.json()["text"] == "2 learners let in"
    assert all(p["approved"] for p in teacher.get("/api/class/people").json()["learners"])

    assert send(teacher, "POST", "/api/class/bulk-remove", json={"ids": [*waiting, cyd]}).status_code == 404
    assert len(teacher.get("/api/class/people").json()["learners"]) == 4
    assert send(teacher, "POST", "/api/class/bulk-remove", json={"ids": []}).status_code == 422
    removed = send(teacher, "POST", "/api/class/bulk-remove", json={"ids": waiting})
    assert removed.json()["text"] == "2 learners removed", removed.text
    assert [p["name"] for p in teacher.get("/api/class/people").json()["learners"]] == ["Ada", "Bea"]


def test_bulk_approve_is_one_transaction_all_or_nothing(world):
    """Every chosen learner is let in in ONE write: one of them gone by then (another teacher removed them, or
    an id of another class's learner) rolls back the others' approval."""
    teacher = world.physics_teacher
    assert send(teacher, "PUT", "/api/class/admission", json={"seats": None, "approval": True}).status_code == 200
    for name in ("Kai", "Lou"):
        assert join(world, name)[2].status_code == 202
    people = {p["name"]: p["id"] for p in teacher.get("/api/class/people").json()["learners"]}
    cyd = world.cyd.get("/api/class/me").json()["id"]  # Chemistry's
    tables = world.accounts.tables
    assert tables.approve_learners([people["Kai"], cyd], world.physics.class_id) is False
    assert tables.approve_learners([people["Kai"], people["Lou"] + 10_000], world.physics.class_id) is False
    waiting = {p["name"]: p["approved"] for p in teacher.get("/api/class/people").json()["learners"]}
    assert (waiting["Kai"], waiting["Lou"]) == (False, False)
    approved = send(teacher, "POST", "/api/class/bulk-approve", json={"ids": [people["Kai"], people["Lou"]]})
    assert approved.json()["text"] == "2 learners let in", approved.text
    assert all(p["approved"] for p in teacher.get("/api/class/people").json()["learners"])


def test_bulk_remove_is_one_transaction_all_or_nothing(world, monkeypatch):
    """Every chosen learner goes in ONE transaction: the second one found gone at the write (another teacher removed
    them between the check and the write) rolls back the first one's removal, its work and its audit entry."""
    from chainrule.progress import people_store

    teacher = world.physics_teacher
    for name in ("Ivy", "Jon"):
        assert join(world, name)[2].status_code in (200, 303)
    people = {p["name"]: p["id"] for p in teacher.get("/api/class/people").json()["learners"]}
    world.store.for_learner(people["Ivy"]).record_submission(
        "neuron-grads", "python", "x = 1\n", {"status": "fail", "verdict": "failed", "tests": []})
    audit_before = teacher.get("/api/class/audit").json()["page_text"]
    real = people_store._remove_account
    seen: list[int] = []

    def gone_meanwhile(conn, log, account_id, class_id, role):
        seen.append(account_id)
        if account_id == people["Jon"]:
            return False  # as if another teacher's removal had committed first
        return real(conn, log, account_id, class_id, role)

    monkeypatch.setattr(people_store, "_remove_account", gone_meanwhile)
    refused = send(teacher, "POST", "/api/class/bulk-remove", json={"ids": [people["Ivy"], people["Jon"]]})
    assert refused.status_code == 404, refused.text
    assert "no one was removed" in refused.text
    assert seen == [people["Ivy"], people["Jon"]]  # Ivy's removal ran in the transaction, then was rolled back
    monkeypatch.setattr(people_store, "_remove_account", real)
    assert {"Ivy", "Jon"} <= {p["name"] for p in teacher.get("/api/class/people").json()["learners"]}
    assert teacher.get(f"/api/class/learners/{people['Ivy']}/timeline").status_code == 200
    assert world.store.for_learner(people["Ivy"]).submission_count() == 1
    assert teacher.get("/api/class/audit").json()["page_text"] == audit_before

    removed = send(teacher, "POST", "/api/class/bulk-remove", json={"ids": [people["Ivy"], people["Jon"]]})
    assert removed.json()["text"] == "2 learners removed", removed.text
    assert not {"Ivy", "Jon"} & {p["name"] for p in teacher.get("/api/class/people").json()["learners"]}



def test_the_cli_imports_a_roster_and_narrows_to_a_section(world, store_place, tmp_path, capsys):
    from chainrule import cli

    place = store_place("class")
    where = ["--database", place["database"]] if "database" in place else ["--data-dir", str(place["data_dir"])]

    def run(*argv: str) -> tuple[int, str, str]:
        code = cli.main(["class", *argv, *where])
        out, err = capsys.readouterr()
        return code, out, err

    bad = tmp_path / "bad.csv"
    bad.write_bytes(BAD_FILES["formula"][0])
    code, _, err = run("import-roster", "Physics", str(bad))
    assert code == 1 and "2 rows cannot be imported, so nothing was: line 3:" in err and listed(world) == []
    good = tmp_path / "roster.csv"
    good.write_bytes(ROSTER)
    code, out, _ = run("import-roster", "Physics", str(good))
    assert code == 0 and out.startswith("3 people added to the roster, 0 people already on it updated.")
    assert len(listed(world)) == 3
    assert run("section", "Physics", "Ada", "Monday")[1] == "Ada is in section 'Monday'.\n"
    code, out, _ = run("roster", "Physics", "--section", "Monday", "--json")
    assert code == 0 and [row["name"] for row in json.loads(out)] == ["Ada"]
    code, out, _ = run("gradebook", "Physics", "--csv", "--section", "Monday")
    assert code == 0 and [line.split(",")[0] for line in out.splitlines()] == ["learner", "Ada"]
    code, _, err = run("roster", "Physics", "--section", "Friday")
    assert code == 1 and "there is no section 'Friday' in this class: its sections are 'Monday', 'Tuesday'" in err
