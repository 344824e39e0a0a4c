"""What a teacher's walk through a term tripped on (issue 43, item 7, and item 2's addresses), on SQLite and
PostgreSQL: the grid says which of a learner's pieces came late (not only how many); a closed class says so at
the top of every page its learners open, an archived one to its teachers too; a class's --url is refused,
saying what is allowed, unless it is an address learners can open. tests/test_lti.py holds the LMS teacher's
landing and the LMS panels' titles.

The times of the learners' work are known (tests/deadline_world.py: Ada did all of backprop on 4 Dec 10:00 UTC
and explained it on 6 Dec 10:00; Bea did everything on 5 Dec 11:30), so which pieces are late follows by hand
from each due date."""

from __future__ import annotations

import html

import pytest

from chainrule.classes.report import ClassReport
from class_world import (
    send,
    world,  # noqa: F401 (fixture)
)
from deadline_world import SHAPE, made  # noqa: F401 (fixture)
from lti_world import cli

QUIZ, EXERCISES = sorted(SHAPE["quiz"]), sorted(SHAPE["exercises"])


def late_of(made, name: str) -> dict:
    """What the teacher's grid marks late in ``name``'s backprop squares."""
    roster = ClassReport(made["store"], made["accounts"]).overview(made["class_id"])["roster"]
    row = next(entry for entry in roster if entry["name"] == name)
    return next(cell for cell in row["grid"] if cell["lesson_id"] == "backprop")["late"]


def test_the_grid_marks_each_piece_done_after_its_due_date(made):
    deadlines, class_id = made["deadlines"], made["class_id"]
    nothing = {"exercises": [], "questions": [], "explanation": False}
    assert late_of(made, "Ada") == late_of(made, "Bea") == nothing  # no date: nothing is late
    # Due 5 Dec 12:00 UTC: only Ada's explanation (6 Dec) is late; every piece of Bea's (5 Dec 11:30) is on time.
    deadlines.set_policy(class_id, time_zone_name="UTC")
    deadlines.set_due(class_id, "backprop", "2026-12-05 12:00")
    assert late_of(made, "Ada") == nothing | {"explanation": True}
    assert late_of(made, "Bea") == nothing
    # Due 5 Dec 11:00: Bea's work came 30 minutes late, every square of it.
    deadlines.set_due(class_id, "backprop", "2026-12-05 11:00")
    assert late_of(made, "Bea") == {"exercises": EXERCISES, "questions": QUIZ, "explanation": True}
    # An exercise due on 3 Dec: Ada's pass of it (4 Dec) is late too, her other exercises not.
    deadlines.set_due(class_id, "backprop", "2026-12-03", exercise="neuron-grads")
    assert late_of(made, "Ada") == nothing | {"exercises": ["neuron-grads"], "explanation": True}
    # Marked late as the credit counts it: the count beside the lesson is the squares marked (and predictions).
    ada = made["deadlines"].credit(class_id)[made["people"]["Ada"].id]["backprop"]
    assert ada["late_work"] == 2
    # An extension past all her work: nothing of hers is late any more.
    deadlines.extend(class_id, made["people"]["Ada"].id, "backprop", "2026-12-07 00:00")
    assert late_of(made, "Ada") == nothing


BANNER = 'id="class-state-banner"'
PAGES = ("/", "/lessons/backprop", "/review", "/account")


def test_a_closed_class_says_so_on_every_page_its_learners_open_and_what_still_works(world):
    for page in PAGES:
        assert BANNER not in world.ada.get(page).text, page  # open: no banner
    assert send(world.physics_teacher, "PUT", "/api/class/state", json={"state": "closed"}).status_code == 200
    for page in PAGES:
        shown = world.ada.get(page)
        assert shown.status_code == 200 and BANNER in shown.text, page
        text = html.unescape(shown.text)
        assert "'Physics' is closed: its work can be read but not changed" in text
        assert "You can still open every lesson and your own work" in text
    # The same words as the refusal a change gets.
    refused = send(world.ada, "PUT", "/api/lessons/backprop/explanation", json={"text": "late", "ticked": []})
    assert refused.status_code == 403 and "'Physics' is closed: its work can be read but not changed" in refused.text
    # A closed class's teachers still change things: no banner; another class's learners see none.
    assert BANNER not in world.physics_teacher.get("/teacher").text
    assert BANNER not in world.cyd.get("/").text
    # Archived: read-only for its teachers too, and their page says so.
    assert send(world.physics_teacher, "PUT", "/api/class/state", json={"state": "archived"}).status_code == 200
    teacher_page = html.unescape(world.physics_teacher.get("/teacher").text)
    assert BANNER in teacher_page and "'Physics' is archived" in teacher_page and "open it again" in teacher_page
    assert send(world.physics_teacher, "PUT", "/api/class/state", json={"state": "open"}).status_code == 200
    assert BANNER not in world.ada.get("/").text


def test_a_teacher_s_pages_link_the_teacher_s_page_by_that_name(world):
    page = html.unescape(world.physics_teacher.get("/lessons/backprop").text)
    assert '<a href="/teacher">Teacher\'s page</a>' in page
    assert '<a href="/account">Ada</a>' in world.ada.get("/").text  # a learner's own page is named after them


def test_the_teacher_s_page_of_a_class_that_is_no_lms_course_has_no_lms_part(world):
    page = world.physics_teacher.get("/teacher").text
    assert 'id="lms-course"' not in page and "data-lms-course" not in page


BAD_ADDRESSES = ("ftp://class.example.org", "class.example.org", "https://class.example.org/physics",
                 "https://ada:secret@class.example.org", "https://class.example.org:99999", "https://class.example.org?x=1",
                 "https://class_example.org", "http://[not-an-address]:8000", "https://", "")


@pytest.mark.parametrize("command", [["create", "Physics"], ["invite", "Chemistry"]])
def test_a_class_s_url_is_an_address_learners_can_open_or_refused_saying_what_is_allowed(tmp_path, command):
    env = {"CHAINRULE_DATA_DIR": str(tmp_path)}
    assert cli("class", "create", "Chemistry", env=env)[0] == 0
    for bad in BAD_ADDRESSES:
        code, printed, error = cli("class", *command, "--url", bad, env=env)
        assert code == 2 and printed == "", bad
        assert f"--url must be an address like https://class.example.org, not {bad!r}" in error, error
        assert "http:// or https://, a host and an optional port, nothing after it" in error, error
    assert cli("class", "list", env=env)[1].splitlines() == ["Chemistry  (0 learners)"]  # nothing made, nothing kept
    code, printed, _ = cli("class", *command, "--url", "http://[::1]:8123/", env=env)
    assert code == 0 and "http://[::1]:8123/" in printed and "http://[::1]:8123//" not in printed


@pytest.mark.parametrize("command", [["serve"], ["lti", "register"]])
def test_serve_and_lti_register_check_their_url_by_the_same_rule(tmp_path, command):
    env = {"CHAINRULE_DATA_DIR": str(tmp_path)}
    code, _, error = cli(*command, "--url", "https://class.example.org/tool", env=env)
    assert code in (1, 2) and "not 'https://class.example.org/tool': give http:// or https://, a host and an " \
        "optional port, nothing after it" in error, error
