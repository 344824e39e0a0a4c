"""Due dates, extensions and the late policy (issue 29 item 5), on SQLite and PostgreSQL with a fixed clock:
credit as of each learner's own due date, worked out by hand from the times of their work; moving a date
recomputes it (and a penalty goes); `chainrule class due` / `extend` (one learner, or a CSV); the teacher's
API in a real `chainrule serve`, which a learner may not use.

The backprop lesson has 8 sections: 01-03 reading (finished once the learner starts), 04 predictions,
05 exercises, 06 quiz, 07 explanation, 08 recap (finished once 04-07 are). A section is as late as the
latest piece of work that finishes it, so the explanation written late makes 07 and 08 late."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from chainrule import cli
from chainrule.classes.accounts import ClassError
from chainrule.errors import InputError
from deadline_world import backprop, change, gradebook, made, server, teacher_client  # noqa: F401 (fixtures)


def test_credit_as_of_each_learners_due_date_and_moving_the_date_recomputes_it(made):
    deadlines, class_id = made["deadlines"], made["class_id"]
    # No due date: every finished section is a point, nothing is late.
    assert backprop(made, "Ada")["credit"] == 8 and backprop(made, "Ada")["late_work"] == 0
    # Due 5 Dec 12:00 in Berlin (11:00 UTC), 10 % less per day late. Ada's explanation came 23 hours late
    # (one day begun): 07 and 08 earn 0.9 each, so 6 + 1.8 = 7.8. Bea's work came 30 minutes late, all of
    # it: every section is one day late, 8 x 0.9 = 7.2.
    deadlines.set_policy(class_id, time_zone_name="Europe/Berlin", late="10%")
    deadlines.set_due(class_id, "backprop", "2026-12-05 12:00")
    ada, bea = backprop(made, "Ada"), backprop(made, "Bea")
    assert (ada["credit"], ada["on_time"], ada["late_sections"], ada["late_work"]) == (7.8, 6, 2, 1)
    assert (bea["credit"], bea["on_time"], bea["late_sections"]) == (7.2, 0, 8)
    assert ada["completed"] and ada["score_text"] == "7.8 of 8"
    book = gradebook(made)
    assert book["Ada"]["backprop: credit (of 8)"] == "7.8" and book["Ada"]["backprop: late work"] == "1"
    assert book["Ada"]["backprop: due"] == "2026-12-05 12:00 (Europe/Berlin)"
    assert book["Bea"]["backprop: credit (of 8)"] == "7.2"
    assert book["Ada"]["backprop: exercises passed"] == "3"  # late work is kept and counted as done
    # The same wall-clock time in UTC is an hour later: Bea's work (11:30 UTC) is on time then.
    deadlines.set_policy(class_id, time_zone_name="UTC")
    assert backprop(made, "Bea")["credit"] == 8 and backprop(made, "Ada")["credit"] == 7.8
    # Moving the date past Ada's explanation: her penalty is gone, in the gradebook too.
    deadlines.set_due(class_id, "backprop", "2026-12-07 09:00")
    assert backprop(made, "Ada")["credit"] == 8 and backprop(made, "Ada")["late_work"] == 0
    assert gradebook(made)["Ada"]["backprop: credit (of 8)"] == "8"
    # Due 3 Dec 09:00 UTC: Ada's work came 25 hours late (two days begun), her explanation 73 hours (four).
    # At 40 % a day: 01-06 earn 0.2 each, 07 and 08 nothing (never below 0). With no credit late: nothing.
    deadlines.set_due(class_id, "backprop", "2026-12-03 09:00")
    deadlines.set_policy(class_id, late="40")
    assert backprop(made, "Ada")["credit"] == pytest.approx(1.2)
    deadlines.set_policy(class_id, late="no-credit")
    assert backprop(made, "Ada")["credit"] == 0 and backprop(made, "Ada")["late_work"] == 15
    deadlines.set_due(class_id, "backprop", None)
    assert backprop(made, "Ada")["credit"] == 8


def test_an_exercise_due_before_its_lesson_makes_its_section_late(made):
    deadlines, class_id = made["deadlines"], made["class_id"]
    deadlines.set_policy(class_id, late="10")
    deadlines.set_due(class_id, "backprop", "2026-12-07 00:00")
    deadlines.set_due(class_id, "backprop", "2026-12-03", exercise="neuron-grads")  # 23:59, UTC
    ada = backprop(made, "Ada")  # passed on 4 Dec 10:00: 05 and 08 one day late
    assert (ada["credit"], ada["late_sections"], ada["late_work"]) == (7.8, 2, 1)
    with pytest.raises(InputError, match="has no exercise 'no-such'"):
        deadlines.set_due(class_id, "backprop", "2026-12-03", exercise="no-such")


def test_each_learner_reads_their_own_dates_whether_they_passed_and_their_credit_so_far(made):
    """Ada: due 5 Dec 12:00 Berlin, neuron-grads 3 Dec 23:59. She passed it on 4 Dec 10:00 UTC (11 hours late)
    and explained on 6 Dec 10:00 UTC (23 hours late): 05, 07 and 08 one day late, 5 + 3 x 0.9 = 7.7. Bea's
    extension to 8 Dec 09:00 moves both her dates; her work of 5 Dec is on time: 8."""
    deadlines, class_id, people = made["deadlines"], made["class_id"], made["people"]
    deadlines.set_policy(class_id, time_zone_name="Europe/Berlin", late="10%")
    deadlines.set_due(class_id, "backprop", "2026-12-05 12:00")
    deadlines.set_due(class_id, "backprop", "2026-12-03", exercise="neuron-grads")
    deadlines.extend(class_id, people["Bea"].id, "backprop", "2026-12-08 09:00")
    now = datetime(2026, 12, 6, 10, 0, tzinfo=timezone.utc)
    ada = deadlines.mine(people["Ada"], now)
    assert ada["time_zone"] == "Europe/Berlin"
    assert ada["late_policy_text"] == "late work loses 10 % of its credit per day late"
    (lesson,) = ada["lessons"]  # only lessons with a date
    assert (lesson["lesson_id"], lesson["due_text"], lesson["past_due"], lesson["extended"]) == (
        "backprop", "2026-12-05 12:00 (Europe/Berlin)", True, False)
    assert (lesson["score_text"], lesson["late_sections"], lesson["late_work"]) == ("7.7 of 8", 3, 2)
    assert lesson["exercises"] == [{"exercise_id": "neuron-grads", "due": "2026-12-03T23:59", "extended": False,
                                    "due_text": "2026-12-03 23:59 (Europe/Berlin)", "past_due": True,
                                    "due_at": "2026-12-03T22:59:00Z"}]  # Berlin is UTC+1 in December
    assert lesson["due_at"] == "2026-12-05T11:00:00Z"  # the moment, for the learner's page to write in its own zone
    (lesson,) = deadlines.mine(people["Bea"], now)["lessons"]
    assert (lesson["due_text"], lesson["past_due"], lesson["extended"], lesson["score_text"]) == (
        "2026-12-08 09:00 (Europe/Berlin)", False, True, "8 of 8")
    assert [(e["due"], e["past_due"], e["extended"]) for e in lesson["exercises"]] == [("2026-12-08T09:00", False, True)]
    # 08:00 UTC on 8 Dec is 09:00 in Berlin: the minute it is due is not past it; the minute after is.
    assert not deadlines.mine(people["Bea"], datetime(2026, 12, 8, 8, 0, tzinfo=timezone.utc))["lessons"][0]["past_due"]
    assert deadlines.mine(people["Bea"], datetime(2026, 12, 8, 8, 1, tzinfo=timezone.utc))["lessons"][0]["past_due"]
    teacher_id = made["accounts"].people.teachers(class_id)[0][0]
    (lesson,) = deadlines.mine(made["accounts"].account(teacher_id), now)["lessons"]  # the class's dates
    assert lesson["due_text"] == "2026-12-05 12:00 (Europe/Berlin)" and "score_text" not in lesson
    assert deadlines.mine(people["Dan"], now)["lessons"] == []  # Chemistry has no dates
    # An extension earlier than an exercise's own date leaves that date, which is then not "her own".
    deadlines.set_due(class_id, "backprop", "2026-12-10", exercise="neuron-grads")
    (lesson,) = deadlines.mine(people["Bea"], now)["lessons"]
    assert lesson["extended"] and [(e["due"], e["extended"]) for e in lesson["exercises"]] == [("2026-12-10T23:59", False)]


def test_extensions_one_learner_relative_and_from_a_csv_all_or_nothing(made):
    deadlines, class_id, people = made["deadlines"], made["class_id"], made["people"]
    deadlines.set_due(class_id, "backprop", "2026-12-05 00:00")  # UTC, no credit late
    assert backprop(made, "Ada")["credit"] == 6 and backprop(made, "Bea")["credit"] == 0
    deadlines.extend(class_id, people["Ada"].id, "backprop", "+2")
    ada = backprop(made, "Ada")
    assert (ada["credit"], ada["due"], ada["extended"]) == (8, "2026-12-07T00:00", True)
    assert backprop(made, "Bea")["credit"] == 0  # only Ada's date moved
    with pytest.raises(InputError, match="row 2: there is no learner named 'Zed'"):
        deadlines.extend_from_csv(class_id, "learner,lesson,due\nBea,backprop,2026-12-06 00:00\nZed,backprop,+1\n")
    assert backprop(made, "Bea")["credit"] == 0  # the bad row refused the whole file
    with pytest.raises(InputError, match="row 1: 'soon' is not a date"):
        deadlines.extend_from_csv(class_id, "Bea,backprop,soon\n")
    assert deadlines.extend_from_csv(class_id, "Bea,backprop,2026-12-06\nAda,backprop,none\n") == 2
    assert backprop(made, "Bea")["credit"] == 8 and backprop(made, "Ada")["credit"] == 6
    with pytest.raises(ClassError, match="no learner"):  # Dan is in another class
        deadlines.extend(class_id, people["Dan"].id, "backprop", "+1")
    assert made["deadlines"].credit(made["chemistry"]).keys() == {people["Dan"].id}


REFUSED = [
    (lambda d, c: d.set_policy(c, time_zone_name="Mars/Olympus"), "is not a time zone"),
    (lambda d, c: d.set_policy(c, time_zone_name="../../etc/passwd"), "is not a time zone"),
    (lambda d, c: d.set_policy(c, late="150%"), "from 1 to 100"),
    (lambda d, c: d.set_due(c, "backprop", "tomorrow"), "is not a date"),
    (lambda d, c: d.set_due(c, "backprop", "2026-02-30"), "is not a date"),
    (lambda d, c: d.set_due(c, "no-lesson", "2026-02-03"), "no lesson 'no-lesson'"),
    (lambda d, c: d.extend_from_csv(c, "Ada,backprop,+2\n"), "has no due date yet"),
    (lambda d, c: d.extend_from_csv(c, "Ada,backprop\n"), "row 1 has 2 cells"),
    # Schemathesis's find: a lone carriage return ends a row (as spreadsheets write them), not the server.
    (lambda d, c: d.extend_from_csv(c, "\r0"), "row 1 has 1 cell"),
    (lambda d, c: d.extend_from_csv(c, "Ada,backprop," + "9" * 200_000 + "\n"), "is not a CSV that can be read"),
]


def test_what_cannot_be_a_date_or_a_policy_is_refused_saying_what_is_allowed(made):
    for call, message in REFUSED:
        with pytest.raises(InputError, match=message):
            call(made["deadlines"], made["class_id"])
    assert backprop(made, "Ada")["credit"] == 8  # nothing changed
    assert made["deadlines"].settings(made["class_id"])["time_zone"] == "UTC"


def test_the_cli_sets_due_dates_and_extensions_one_at_a_time_or_from_a_csv(made, tmp_path, capsys):
    place = ["--database", made["place"]["database"]] if "database" in made["place"] else \
        ["--data-dir", str(made["place"]["data_dir"])]
    assert cli.main(["class", "due", "Physics", "backprop", "2026-12-05 12:00", "--time-zone", "Europe/Berlin",
                     "--late", "10%", *place]) == 0
    out = capsys.readouterr().out
    assert "Time zone: Europe/Berlin; late work loses 10 % of its credit per day late." in out
    assert "backprop" in out and "due 2026-12-05 12:00 (Europe/Berlin)" in out
    assert backprop(made, "Ada")["credit"] == 7.8
    assert cli.main(["class", "extend", "Physics", "Ada", "backprop", "+1", *place]) == 0
    assert "extension: Ada, backprop: due 2026-12-06 12:00 (Europe/Berlin)" in capsys.readouterr().out
    assert backprop(made, "Ada")["credit"] == 8
    sheet = tmp_path / "extensions.csv"
    sheet.write_text("learner,lesson,due\nBea,backprop,+1\n", encoding="utf-8")
    assert cli.main(["class", "extend", "Physics", "--csv", str(sheet), *place]) == 0
    assert "1 extension set." in capsys.readouterr().out
    assert backprop(made, "Bea")["credit"] == 8
    assert cli.main(["class", "due", "Physics", "backprop", "soon", *place]) == 1
    assert "'soon' is not a date" in capsys.readouterr().err
    assert cli.main(["class", "extend", "Physics", "Ada", *place]) == 1
    assert "give a learner, a lesson and a date, or --csv FILE alone" in capsys.readouterr().err


# ---------------------------------------------------------------- the teacher's API in a real server


def test_the_teacher_sets_dates_in_a_real_server_and_a_learner_may_not(server):
    teacher = teacher_client(server)
    learner = server.join("Kim")
    made = change(learner, "PUT", "/api/progress/backprop/predictions/n", {"value": 0.5})
    assert made.status_code == 200, made.text
    me = learner.get("/api/class/me").json()
    kim = next(entry for entry in teacher.get("/api/class/deadlines").json()["learners"] if entry["name"] == "Kim")
    assert next(e for e in kim["lessons"] if e["lesson_id"] == "backprop")["credit"] == 3  # 01-03 read
    # A date long past: Kim's work is late, and late work earns nothing.
    answer = change(teacher, "PUT", "/api/class/deadlines/due", {"lesson_id": "backprop", "due": "2020-01-01 00:00"})
    assert answer.status_code == 200, answer.text
    kim = next(entry for entry in answer.json()["learners"] if entry["name"] == "Kim")
    entry = next(e for e in kim["lessons"] if e["lesson_id"] == "backprop")
    assert (entry["credit"], entry["late_work"]) == (0, 1)
    answer = change(teacher, "PUT", "/api/class/deadlines/extensions",
                    {"learner_id": kim["id"], "lesson_id": "backprop", "due": "2099-01-01 00:00"})
    assert answer.status_code == 200, answer.text
    kim = next(entry for entry in answer.json()["learners"] if entry["name"] == "Kim")
    assert next(e for e in kim["lessons"] if e["lesson_id"] == "backprop")["credit"] == 3
    mine = learner.get("/api/class/deadlines/mine").json()["lessons"]  # her own date, not the class's
    assert [(e["lesson_id"], e["due"], e["extended"]) for e in mine] == [("backprop", "2099-01-01T00:00", True)]
    assert server.client().get("/api/class/deadlines/mine").status_code == 401  # a stranger
    sheet = teacher.get("/teacher/gradebook.csv").text
    assert "backprop: credit (of 8)" in sheet.splitlines()[0]
    # Refusals: a learner (403), a learner of no class of this teacher (404), a bad date (422, saying why).
    assert change(learner, "PUT", "/api/class/deadlines/due", {"lesson_id": "backprop", "due": None}).status_code == 403
    assert learner.get("/api/class/deadlines").status_code == 403
    assert change(learner, "PUT", "/api/class/deadlines/extensions",
                  {"learner_id": me["id"], "lesson_id": "backprop", "due": "2099-01-01"}).status_code == 403
    missing = change(teacher, "PUT", "/api/class/deadlines/extensions",
                     {"learner_id": 99999, "lesson_id": "backprop", "due": "+1"})
    assert missing.status_code == 404, missing.text
    bad = change(teacher, "POST", "/api/class/deadlines/extensions.csv", {"csv": "Kim,backprop,someday\n"})
    assert bad.status_code == 422 and "row 1: 'someday' is not a date" in bad.text
    no_token = teacher.put("/api/class/deadlines/due", json={"lesson_id": "backprop", "due": None})
    assert no_token.status_code == 403  # CSRF
    # Regrades are the teacher's too (tests/test_regrade.py grades them).
    assert change(learner, "POST", "/api/class/regrades/new", {"exercise_id": "neuron-grads"}).status_code == 403
    assert learner.get("/api/class/regrades").status_code == 403
    assert teacher.get("/api/class/regrades/999").status_code == 404
    unknown = change(teacher, "POST", "/api/class/regrades/new", {"exercise_id": "no-such"})
    assert unknown.status_code == 422 and "there is no exercise 'no-such'" in unknown.text


def test_every_change_to_credit_raises_scores_changed_for_its_learners_and_no_others(made):
    """Issue 46 item 3: the link from a teacher's change to the score the LMS gets is one named event,
    progress/credit_changes.py's scores_changed, raised by audited_write in the change's transaction. Its
    subscriber's state is lti_work_seen (what the LMS score scan last saw of each learner): every learner is
    marked seen, a change is made, and the learners the scan must look at again are those no longer seen."""
    from chainrule.classes.overrides import Overrides
    from chainrule.progress.audit_store import Actor

    store, class_id, people = made["store"], made["class_id"], made["people"]
    by = Actor(41, "Ms Rivera")
    everyone = {people[name].id: name for name in ("Ada", "Bea", "Dan")}

    def looked_at_again(change) -> set[str]:
        store.database.write(lambda conn: [conn.execute(
            "INSERT INTO lti_work_seen (account_id, signature) VALUES (?, 'seen') ON CONFLICT (account_id) "
            "DO UPDATE SET signature = excluded.signature", (learner,)) for learner in everyone])
        change()
        seen = {int(row[0]) for row in store.database.read(
            lambda conn: conn.execute("SELECT account_id FROM lti_work_seen").fetchall())}
        return {name for learner, name in everyone.items() if learner not in seen}

    deadlines, overrides = made["deadlines"], Overrides(store, made["accounts"])
    assert looked_at_again(lambda: deadlines.set_due(class_id, "backprop", "2026-12-05 00:00", by=by)) == {"Ada", "Bea"}
    assert looked_at_again(lambda: deadlines.set_policy(class_id, late="10%", by=by)) == {"Ada", "Bea"}
    assert looked_at_again(lambda: deadlines.extend(class_id, people["Bea"].id, "backprop", "+1", by=by)) == {"Bea"}
    assert looked_at_again(lambda: overrides.override(class_id, people["Ada"].id, "backprop", 5, "by hand",
                                                      by=by)) == {"Ada"}
    assert looked_at_again(lambda: overrides.excuse(class_id, people["Bea"].id, "backprop", "ill", by=by)) == {"Bea"}
    assert looked_at_again(lambda: deadlines.set_due(made["chemistry"], "backprop", None, by=by)) == {"Dan"}
    # A change refused is no change: nothing is looked at again.
    with pytest.raises(InputError):
        deadlines.set_due(class_id, "backprop", "tomorrow", by=by)
    assert looked_at_again(lambda: None) == set()


def test_only_the_event_of_a_change_to_credit_makes_the_score_scan_look_again():
    """The one statement that makes the LMS score scan look at learners again lives in
    progress/credit_changes.py; a store that changes credit raises scores_changed instead of its own SQL."""
    import pathlib
    import re

    source = pathlib.Path(__file__).parents[1] / "src" / "chainrule"
    found = sorted(str(path.relative_to(source)) for path in source.rglob("*.py")
                   if re.search(r"DELETE\s+FROM\s+lti_work_seen", path.read_text(), re.IGNORECASE))
    assert found == ["progress/credit_changes.py"], found
