"""chainrule as an LTI 1.3 tool (issue 30, items 1-6), against an independent platform: tests/lti_platform.py
(lti1p3platform, on PyJWT and jwcrypto) and `chainrule serve` (joserfc) run as processes, the LMS registered
with `chainrule lti register`. Here the browser's side is played over HTTP (each exchange can be looked at and
tampered with); tests/browser/test_lti_page.py walks the same launch in Chromium.

Tokens the tests forge are signed with PyJWT, with the LMS's own key where the point is a claim (an expired
token, another audience, another issuer, another nonce) and with another key where it is the signature."""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import json
import os
import re
import stat
import time

import jwt as pyjwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

import local_http
from lti_world import CLIENT_ID, Browser, LtiWorld, backprop_link, cli, forms_of, me, refusal, scores_for, world  # noqa: F401 (fixtures: the LMS platform and the tool)

SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/"


def claims_of(token: str) -> dict:
    return pyjwt.decode(token, options={"verify_signature": False})


def signed(world: LtiWorld, claims: dict, *, key: bytes | rsa.RSAPrivateKey | None = None, algorithm: str = "RS256") -> str:
    if algorithm == "HS256":  # by hand: PyJWT (rightly) refuses a public key as an HMAC secret
        def part(value: dict) -> str:
            return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

        body = part({"alg": "HS256", "typ": "JWT"}) + "." + part(claims)
        mac = hmac.new(key, body.encode(), hashlib.sha256).digest()
        return body + "." + base64.urlsafe_b64encode(mac).rstrip(b"=").decode()
    return pyjwt.encode(claims, key or read_key(world.platform_key()), algorithm=algorithm)


@functools.cache
def read_key(pem: str) -> rsa.RSAPrivateKey:
    """A private key's PEM text, read once: PyJWT reads a key given as text again at each token, with its checks
    (tens of milliseconds of CPU each), and signs with a key object as it is."""
    return serialization.load_pem_private_key(pem.encode(), None)


def set_cookies(answer) -> list[str]:
    return answer.headers.get_list("set-cookie")


# ---------------------------------------------------------------- registration and keys


def test_register_prints_what_an_lms_admin_pastes_and_keeps_the_key_private(tmp_path):
    env = dict(os.environ, CHAINRULE_DATA_DIR=str(tmp_path))
    env.pop("CHAINRULE_DATABASE", None)
    code, printed, _ = cli("lti", "register", "--url", "https://class.example.org", env=env)
    assert code == 0
    for url in ("https://class.example.org/lti/login", "https://class.example.org/lti/launch",
                "https://class.example.org/lti/jwks.json", "https://class.example.org/"):
        assert url in printed, printed
    keys = list((tmp_path / "lti-keys").glob("*.pem"))
    assert len(keys) == 1
    assert stat.S_IMODE(keys[0].stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "lti-keys").stat().st_mode) == 0o700
    code, _, refused = cli("lti", "register", "--url", "http://class.example.org", env=env)
    assert code == 1 and "HTTPS" in refused
    code, _, partial = cli("lti", "register", "--url", "https://class.example.org", "--issuer", "https://lms.example",
                           env=env)
    assert code == 1 and "--client-id" in partial and "--deployment-id" in partial


def test_key_rotation_keeps_the_previous_key_published(world):
    def kids() -> list[str]:
        return [key["kid"] for key in local_http.get(world.tool_url + "/lti/jwks.json").json()["keys"]]

    before = set(kids())
    assert cli("lti", "rotate-key", env=world.env)[0] == 0
    after_one = kids()
    assert len(after_one) == 2 and before <= set(after_one), (before, after_one)
    assert cli("lti", "rotate-key", env=world.env)[0] == 0
    after_two = set(kids())
    assert len(after_two) == 2 and not before & after_two  # the first key is retired at the second rotation
    for path in (world.root / "data" / "lti-keys").glob("*.pem"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


# ---------------------------------------------------------------- the launch


def test_a_learner_launch_lands_on_the_lesson_in_an_account_made_once(world, backprop_link):
    browser = Browser()
    journey = world.launch(browser, "ada", backprop_link)
    assert journey.answer.status_code == 303, journey.answer.text
    assert journey.answer.headers["location"] == "/lessons/backprop"
    session = next(c for c in set_cookies(journey.answer) if c.startswith("chainrule_session="))
    assert "SameSite=None" in session and "Secure" in session and "Partitioned" in session, session
    first = me(world, browser)
    assert first["name"] == "Ada Lovelace" and first["role"] == "learner" and first["class"] == "Physics 2b"
    page = world.tool_get(browser, "/lessons/backprop")
    assert page.status_code == 200
    policy = page.headers["content-security-policy"]
    assert f"frame-ancestors 'self' {world.lms_url}" in policy and "x-frame-options" not in page.headers
    again = Browser()
    assert world.launch(again, "ada", backprop_link).answer.status_code == 303
    assert me(world, again)["id"] == first["id"]
    # A page that is not an LMS class's keeps refusing every frame.
    assert "frame-ancestors 'none'" in Browser().request("GET", world.tool_url + "/sign-in").headers[
        "content-security-policy"]


def test_a_launch_in_a_window_of_its_own_gets_first_party_cookies(world, backprop_link):
    browser = Browser()
    journey = world.launch(browser, "cyd", backprop_link, frame=False)
    assert journey.answer.status_code == 303, journey.answer.text
    session = next(c for c in set_cookies(journey.answer) if c.startswith("chainrule_session="))
    assert "SameSite=Lax" in session and "Partitioned" not in session, session
    assert me(world, browser)["name"] == "Cyd Charisse"


def test_people_are_linked_by_subject_never_by_email_and_each_course_is_a_class(world, backprop_link):
    ada, bea = Browser(), Browser()
    world.launch(ada, "ada", backprop_link)
    world.launch(bea, "bea", backprop_link)  # the same e-mail address as Ada's
    assert me(world, ada)["id"] != me(world, bea)["id"]
    mimic = Browser()
    world.launch(mimic, "mimic", backprop_link)  # a name that looks like Ada's gets a number (classes/names.py)
    assert me(world, mimic)["name"] == "\u0410da Lovelace (2)"
    chemistry = world.add_link("chemistry", "computational-graphs")
    elsewhere = Browser()
    journey = world.launch(elsewhere, "ada", chemistry)
    assert journey.answer.headers["location"] == "/lessons/computational-graphs"
    assert me(world, elsewhere)["class"] == "Chemistry" and me(world, elsewhere)["id"] != me(world, ada)["id"]
    classes = cli("class", "list", env=world.env)[1]
    assert "Physics 2b" in classes and "Chemistry" in classes


def test_the_teacher_sees_the_roster_from_the_lms_with_who_has_not_launched(world, backprop_link):
    teacher = Browser()
    assert world.launch(teacher, "hopper", backprop_link).answer.status_code == 303
    assert me(world, teacher)["role"] == "teacher"
    world.launch(Browser(), "ada", backprop_link)
    roster = world.tool_get(teacher, "/api/class/lms/roster")
    assert roster.status_code == 200, roster.text
    members = {member["name"]: member for member in roster.json()["members"]}
    assert members["Ada Lovelace"]["launched"] is True and members["Ada Lovelace"]["role"] == "learner"
    assert members["Grace Hopper"]["role"] == "teacher"
    never = [name for name, member in members.items() if not member["launched"]]
    assert "Olly Observer" in never  # listed though it never launched (and could not: see the role test)
    ada = Browser()
    world.launch(ada, "ada", backprop_link)
    assert world.tool_get(ada, "/api/class/lms/roster").status_code == 403


def test_a_teacher_s_launch_lands_on_the_teacher_s_page_named_so_on_every_page(world, backprop_link):
    """Issue 43 item 7: the course's own link lands a teacher on the class's page (marked as an LMS course's: its
    LMS part is asked for), a lesson's link on the lesson, whose page links the teacher's page by that name."""
    teacher = Browser()
    assert world.launch(teacher, "hopper", world.add_link("physics", None)).answer.headers["location"] == "/teacher"
    page = world.tool_get(teacher, "/teacher")
    assert page.status_code == 200 and "data-lms-course" in page.text and 'id="lms-course"' in page.text
    assert world.launch(teacher, "hopper", backprop_link).answer.headers["location"] == "/lessons/backprop"
    lesson = world.tool_get(teacher, "/lessons/backprop").text
    assert '<a href="/teacher">Teacher\'s page</a>' in lesson and "Grace Hopper</a>" not in lesson


# ---------------------------------------------------------------- what is refused, each with its cause


def _forge(world: LtiWorld, change: dict | None = None, drop: tuple = (), **options):
    def forge(journey) -> dict:
        claims = claims_of(journey.form["id_token"])
        claims.update(change or {})
        for key in drop:
            claims.pop(key, None)
        return dict(journey.form, id_token=signed(world, claims, **options))

    return forge


@functools.cache
def other_key() -> rsa.RSAPrivateKey:
    """A key the LMS never had: made once, when a test first forges with it (not when pytest collects the file,
    which every worker does)."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.mark.parametrize("case, cause", [
    ("forged: signed by another key", "bad-signature"),
    ("expired", "expired"),
    ("another audience", "wrong-audience"),
    ("several audiences and no azp", "wrong-authorized-party"),
    ("another issuer (mix-up)", "wrong-issuer"),
    ("another login's nonce", "wrong-nonce"),
    ("HS256 keyed with the LMS's public key", "algorithm"),
    ("another deployment", "unknown-deployment"),
    ("an anonymous launch", "no-subject"),
])
def test_a_tampered_id_token_is_refused_with_its_cause(world, backprop_link, case, cause):
    now = int(time.time())
    public = read_key(world.platform_key()).public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    forge = {
        "forged: signed by another key": _forge(world, key=other_key()),
        "expired": _forge(world, {"iat": now - 3600, "exp": now - 600}),
        "another audience": _forge(world, {"aud": "another-tool", "azp": "another-tool"}),
        "several audiences and no azp": _forge(world, {"aud": [CLIENT_ID, "another-tool"]}, drop=("azp",)),
        "another issuer (mix-up)": _forge(world, {"iss": "https://other-lms.example"}),
        "another login's nonce": _forge(world, {"nonce": "a-nonce-of-another-login"}),
        "HS256 keyed with the LMS's public key": _forge(world, key=public, algorithm="HS256"),
        "another deployment": _forge(world, {"https://purl.imsglobal.org/spec/lti/claim/deployment_id": "elsewhere"}),
        "an anonymous launch": _forge(world, drop=("sub",)),
    }[case]
    browser = Browser()
    journey = world.begin(browser, "ada", backprop_link)
    answer = world.post_launch(browser, forge(journey))
    assert refusal(answer) == cause, answer.text
    assert answer.status_code == 400
    assert not any(c.startswith("chainrule_session=") for c in set_cookies(answer))
    assert world.tool_get(browser, "/api/class/me").status_code == 401


def test_a_replayed_launch_is_refused(world, backprop_link):
    browser = Browser()
    journey = world.launch(browser, "ada", backprop_link)
    assert journey.answer.status_code == 303
    browser.jar.setdefault(f"localhost:{world.tool_port}", {})[journey.state_cookie[0]] = journey.state_cookie[1]
    again = world.post_launch(browser, journey.form)
    assert refusal(again) == "replayed", again.text


def test_a_launch_from_another_browser_is_refused_and_offers_a_new_window(world, backprop_link):
    """The state is bound to the browser that began the login (its cookie): a login begun by someone else
    (login CSRF), or a browser that blocks the frame's cookies, cannot finish it here."""
    journey = world.begin(Browser(), "ada", backprop_link)
    stranger = Browser()
    answer = world.post_launch(stranger, journey.form)
    assert refusal(answer) == "not-this-browser", answer.text
    action, fields = [form for form in forms_of(answer.text) if form[0] == "/lti/login"][0]
    assert fields["iss"] == world.lms_url and fields["login_hint"] == "ada" and fields["client_id"] == CLIENT_ID
    assert 'target="_blank"' in answer.text
    # The new window starts a login of its own, which completes.
    restarted = stranger.request("POST", world.tool_url + "/lti/login", data=fields,
                                 headers={"origin": world.tool_url, "sec-fetch-dest": "document"})
    assert restarted.status_code == 302 and restarted.headers["location"].startswith(world.lms_url + "/auth")
    page = stranger.request("GET", restarted.headers["location"])
    finished = world.post_launch(stranger, forms_of(page.text)[0][1], frame=False)
    assert finished.status_code == 303, finished.text
    assert me(world, stranger)["name"] == "Ada Lovelace"


def test_an_unknown_state_a_foreign_target_and_an_unknown_lms_are_refused(world, backprop_link):
    browser = Browser()
    journey = world.begin(browser, "ada", backprop_link)
    answer = world.post_launch(browser, dict(journey.form, state="a-state-this-server-never-made"))
    assert refusal(answer) == "unknown-state"
    login = {"iss": world.lms_url, "login_hint": "ada", "client_id": CLIENT_ID}
    for target in ("https://evil.example/steal", f"{world.tool_url}.evil.example/", "//evil.example/",
                   f"{world.tool_url}/teacher/gradebook.csv", f"http://user@localhost:{world.tool_port}/"):
        answer = browser.request("GET", world.tool_url + "/lti/login", params=dict(login, target_link_uri=target))
        assert refusal(answer) == "target-not-this-tool", (target, answer.text)
        assert "location" not in answer.headers
    answer = browser.request("POST", world.tool_url + "/lti/login", data=dict(
        login, iss="https://unknown-lms.example", target_link_uri=world.tool_url + "/"),
        headers={"origin": "https://unknown-lms.example"})
    assert refusal(answer) == "unknown-platform"
    assert refusal(world.post_launch(browser, {"error": "login_required", "state": "x"})) == "platform-error"


def test_only_learners_and_teachers_get_in_and_only_teachers_link_content(world, backprop_link):
    answer = world.launch(Browser(), "olly", backprop_link).answer
    assert refusal(answer) == "role" and answer.status_code == 403
    answer = world.launch(Browser(), "ada", "dl:physics").answer
    assert refusal(answer) == "teachers-only" and answer.status_code == 403


def test_an_lms_teaching_assistant_is_staff_never_a_teacher_nor_a_learner(world):
    """Issue 43 item 6: the course's teaching assistants, in every form the platform sends the role (beside
    Instructor, alone, a section's, LTI 1.1's URN), are the class's teaching assistants: they land on the teacher's
    page, read it and the LMS roster, and change nothing (no due date, no content linked); the teacher stays one."""
    from chainrule.web.roles import NOT_FOR_ASSISTANTS

    link = world.add_link("art", None)
    teacher = Browser()
    assert world.launch(teacher, "kahlo", link).answer.headers["location"] == "/teacher"
    assert me(world, teacher)["role"] == "teacher"
    for user in ("tam", "uma", "vic", "wyn"):
        assistant = Browser()
        assert world.launch(assistant, user, link).answer.headers["location"] == "/teacher", user
        assert me(world, assistant)["role"] == "assistant", user
        page = world.tool_get(assistant, "/teacher")
        assert page.status_code == 200 and 'data-role="assistant"' in page.text and 'id="assistant-note"' in page.text
        assert world.tool_get(assistant, "/api/class/overview").status_code == 200
        changed = world.tool_change(assistant, "PUT", "/api/class/deadlines/policy", {"late": "10%"})
        assert changed.status_code == 403 and NOT_FOR_ASSISTANTS in changed.text, user
        lesson = world.tool_get(assistant, "/lessons/backprop").text
        assert '<a href="/teacher">Teacher\'s page</a>' in lesson
    answer = world.launch(Browser(), "tam", "dl:art").answer
    assert refusal(answer) == "teachers-only" and answer.status_code == 403
    roster = world.tool_get(teacher, "/api/class/lms/roster").json()["members"]
    assert {member["name"]: member["role"] for member in roster} == {
        "Frida Kahlo": "teacher", "Ada Lovelace": "learner", "Tam Tran": "assistant", "Uma Ueda": "assistant",
        "Vic Vance": "assistant", "Wyn Wale": "assistant"}
    people = world.tool_get(teacher, "/api/class/people").json()
    assert sorted(person["name"] for person in people["assistants"]) == ["Tam Tran", "Uma Ueda", "Vic Vance",
                                                                         "Wyn Wale"]
    assert [person["name"] for person in people["teachers"]] == ["Frida Kahlo"] and people["learners"] == []


def test_a_closed_class_takes_no_newcomer_from_the_lms_and_keeps_those_in_it(world):
    """The teacher closed the course's class here: a learner new to it is refused with a cause (no account is
    made), a learner in it and the teacher still come in; opened again, the newcomer comes in."""
    link = world.add_link("biology", "backprop")
    teacher, ada = Browser(), Browser()
    assert world.launch(teacher, "lamarck", link).answer.status_code == 303
    assert world.launch(ada, "ada", link).answer.status_code == 303
    assert world.tool_change(teacher, "PUT", "/api/class/state", {"state": "closed"}).status_code == 200
    answer = world.launch(Browser(), "dina", link).answer
    assert refusal(answer) == "class-closed" and answer.status_code == 403
    assert "takes no new learners" in answer.text
    members = {m["name"]: m for m in world.tool_get(teacher, "/api/class/lms/roster").json()["members"]}
    assert members["Dina Sanichar"]["launched"] is False  # no account was made for her
    assert world.launch(Browser(), "ada", link).answer.status_code == 303
    assert world.launch(Browser(), "lamarck", link).answer.status_code == 303
    assert world.tool_change(teacher, "PUT", "/api/class/state", {"state": "open"}).status_code == 200
    dina = Browser()
    assert world.launch(dina, "dina", link).answer.status_code == 303 and me(world, dina)["name"] == "Dina Sanichar"


# ---------------------------------------------------------------- deep linking and grades


def deep_link(world: LtiWorld, teacher: Browser, lesson: str) -> list[dict]:
    """A teacher's deep linking: the picker, the choice, the answer the browser carries to the LMS."""
    journey = world.launch(teacher, "hopper", "dl:physics")
    assert journey.answer.status_code == 200, journey.answer.text
    action, fields = [form for form in forms_of(journey.answer.text) if form[0] == "/lti/pick"][0]
    choice = teacher.request("POST", world.tool_url + "/lti/pick", data=dict(fields, resource=lesson),
                             headers={"origin": world.tool_url})
    assert choice.status_code == 200, choice.text
    assert f"form-action 'self' {world.lms_url}" in choice.headers["content-security-policy"]
    action, answer = forms_of(choice.text)[0]
    assert action.startswith(world.lms_url + "/deep-link-return")
    items = claims_of(answer["JWT"])["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"]
    added = teacher.request("POST", action, data=answer)
    assert added.status_code == 200, added.text
    links = re.findall(r'data-link="(\d+)"', added.text)
    return [dict(item, link=link) for item, link in zip(items, links)]


def outbox_rows(world: LtiWorld, name: str, resource: str) -> list[str]:
    """The tool's outbox (`chainrule lti scores`) rows of the account ``name`` for ``resource``."""
    listing = cli("lti", "scores", env=world.env)[1]
    return [line for line in listing.splitlines() if line.startswith(name[:24]) and f" {resource} " in line]


def all_sent(world: LtiWorld, name: str, resource: str) -> None:
    """Wait until the outbox says every score of ``name`` for ``resource`` is sent. The sender sends a score
    again only as a new version, made when the score changes (lti_store.queue_scores compares it with the one
    kept), and never a version marked sent: after this the LMS has every post the work made. A score sent but
    not marked (and so sent again next round) keeps this waiting, and the test fails."""
    world.wait(lambda: (rows := outbox_rows(world, name, resource)) and all(row.endswith("  sent") for row in rows),
               what="the outbox")


def test_deep_linking_makes_one_gradebook_column_however_often_a_lesson_is_linked(world):
    teacher = Browser()
    first = deep_link(world, teacher, "gradient-descent-linear-regression")
    assert first[0]["url"] == f"{world.tool_url}/lessons/gradient-descent-linear-regression"
    assert first[0]["lineItem"]["resourceId"] == "gradient-descent-linear-regression"
    assert first[0]["lineItem"]["scoreMaximum"] == 8
    second = deep_link(world, teacher, "gradient-descent-linear-regression")
    assert "lineItem" not in second[0]  # the course has its column already
    state = world.state()
    columns = [item for item in state["line_items"].values()
               if item.get("resourceId") == "gradient-descent-linear-regression"]
    assert len(columns) == 1, columns
    # A learner works through both links: the score still goes to the one column, once per change.
    learner = Browser()
    for item in first + second:
        assert world.launch(learner, "cyd", item["link"]).answer.headers["location"] == \
            "/lessons/gradient-descent-linear-regression"
    answer = world.tool_change(learner, "PUT", "/api/lessons/gradient-descent-linear-regression/explanation",
                               {"text": "Step against the gradient, a little at a time.", "ticked": []})
    assert answer.status_code == 200, answer.text
    world.wait(lambda: scores_for(world, "cyd", "gradient-descent-linear-regression"))
    all_sent(world, me(world, learner)["name"], "gradient-descent-linear-regression")  # nothing more to send
    posts = scores_for(world, "cyd", "gradient-descent-linear-regression")
    assert len(posts) == 1, posts
    assert len([item for item in world.state()["line_items"].values()
                if item.get("resourceId") == "gradient-descent-linear-regression"]) == 1


def test_a_score_goes_to_the_gradebook_once_for_each_change(world, backprop_link):
    learner = Browser()
    world.launch(learner, "bea", backprop_link)
    answer = world.tool_change(learner, "PUT", "/api/progress/backprop/predictions/n", {"value": 0.5})
    assert answer.status_code == 200, answer.text
    posts = world.wait(lambda: scores_for(world, "bea", "backprop"))
    assert posts[0]["scoreGiven"] == 3 and posts[0]["scoreMaximum"] == 8  # the reading before the work, 01-03
    assert posts[0]["activityProgress"] == "InProgress" and posts[0]["gradingProgress"] == "FullyGraded"
    for key in ("o", "dn", "db", "dw1", "dw2"):
        world.tool_change(learner, "PUT", f"/api/progress/backprop/predictions/{key}", {"value": 0.5})
    world.wait(lambda: [p for p in scores_for(world, "bea", "backprop") if p["scoreGiven"] == 4])
    all_sent(world, me(world, learner)["name"], "backprop")
    given = [post["scoreGiven"] for post in scores_for(world, "bea", "backprop")]
    assert given == [3, 4], given  # each change once, none twice
    columns = [item for item in world.state()["line_items"].values() if item.get("resourceId") == "backprop"]
    assert len(columns) == 1, columns  # made once by the tool (the link had none), for every learner


def test_a_down_lms_loses_no_score_and_the_score_keeps_the_time_of_the_work(world, backprop_link):
    learner = Browser()
    world.launch(learner, "ada", backprop_link)
    world.stop_platform()
    try:
        worked = time.time()
        answer = world.tool_change(learner, "PUT", "/api/lessons/backprop/explanation",
                                   {"text": "The chain rule, node by node, from the output back.", "ticked": []})
        assert answer.status_code == 200
        deadline = time.monotonic() + 30
        # Waiting, and tried at least once ("waiting (0 tries: not tried yet)" comes first).
        while "cannot be reached" not in (listing := cli("lti", "scores", "Physics 2b", env=world.env)[1]):
            assert time.monotonic() < deadline, listing
            time.sleep(0.3)
        assert "waiting" in listing, listing
        name = me(world, learner)["name"]
        world.wait(lambda: [row for row in outbox_rows(world, name, "backprop")  # a few retries meet the LMS down
                            if int(re.search(r"waiting \((\d+) tries", row).group(1)) >= 2], what="the outbox")
    finally:
        world.start_platform()
    back = time.time()
    world.wait(lambda: scores_for(world, "ada", "backprop"), seconds=60)
    all_sent(world, name, "backprop")
    posts = scores_for(world, "ada", "backprop")
    assert len(posts) == 1, posts
    assert posts[0]["scoreGiven"] == 4  # the reading before the work (01-03) and the explanation (07)
    sent_for = posts[0]["timestamp"]
    from datetime import datetime

    moment = datetime.fromisoformat(sent_for).timestamp()
    assert worked - 5 <= moment < back, (worked, sent_for, back)  # the time of the work, not of the sending
    assert "sent" in cli("lti", "scores", "Physics 2b", env=world.env)[1]


def test_a_captured_id_token_does_not_work_with_a_login_of_ones_own(world, backprop_link):
    """Token replay: Ada's id_token, captured on its way, posted with a fresh login the attacker began: its
    nonce is Ada's login's, not the attacker's."""
    captured = world.begin(Browser(), "ada", backprop_link)
    attacker = Browser()
    own = world.begin(attacker, "cyd", backprop_link)
    answer = world.post_launch(attacker, dict(own.form, id_token=captured.form["id_token"]))
    assert refusal(answer) == "wrong-nonce", answer.text
    assert world.tool_get(attacker, "/api/class/me").status_code == 401


def test_framed_sessions_still_need_the_csrf_token_and_the_picker_its_own_seal(world, backprop_link):
    """Cookies sent across sites (SameSite=None, in the LMS's frame) carry no right to change anything by
    themselves: every change still needs the CSRF token, and the deep-linking picker's choice needs the
    settings sealed for this teacher's launch."""
    learner = Browser()
    world.launch(learner, "ada", backprop_link)
    forged = learner.request("PUT", world.tool_url + "/api/progress/backprop/predictions/n", json={"value": 1.0},
                             headers={"origin": world.tool_url})
    assert forged.status_code == 403 and "CSRF" in forged.text
    teacher = Browser()
    journey = world.launch(teacher, "hopper", "dl:physics")
    _, fields = [form for form in forms_of(journey.answer.text) if form[0] == "/lti/pick"][0]
    for changed in ({"csrf": "not-the-token"}, {"settings": fields["settings"][:-4] + "0000"}):
        answer = teacher.request("POST", world.tool_url + "/lti/pick", data=dict(fields, resource="backprop", **changed),
                                 headers={"origin": world.tool_url})
        assert answer.status_code == 403, (changed, answer.text)
    other = Browser()
    world.launch(other, "hopper", backprop_link)  # the same teacher, another browser: its own CSRF token
    host = f"localhost:{world.tool_port}"
    answer = other.request("POST", world.tool_url + "/lti/pick", data=dict(
        fields, resource="backprop", csrf=other.jar[host]["chainrule_csrf"]), headers={"origin": world.tool_url})
    assert answer.status_code == 200  # the seal is the teacher's: the same teacher may finish it anywhere
    answer = learner.request("POST", world.tool_url + "/lti/pick", data=dict(
        fields, resource="backprop", csrf=learner.jar[host]["chainrule_csrf"]), headers={"origin": world.tool_url})
    assert answer.status_code == 403  # a learner carrying a teacher's picker: the seal names the teacher


def test_every_refusal_cause_is_explained_in_the_classroom_guide():
    """docs/classroom.md ("When a launch fails", "Single sign-on") names every cause a refusal can give."""
    from pathlib import Path

    from chainrule.classes import lti, sso

    guide = (Path(__file__).resolve().parents[1] / "docs" / "classroom.md").read_text(encoding="utf-8")
    missing = [cause for cause in [*lti.CAUSES, *sso.CAUSES] if f"`{cause}`" not in guide]
    assert missing == []


def test_on_postgresql_the_outbox_keeps_a_score_until_the_lms_takes_it_once(postgres_url, tmp_path_factory):
    """The same outbox in a class kept in PostgreSQL: a launch, the LMS down while the learner works, the
    score delivered once when it is back."""
    with LtiWorld.start(tmp_path_factory.mktemp("lti-pg"), database=postgres_url) as world:
        link = world.add_link("physics", "backprop")
        learner = Browser()
        assert world.launch(learner, "ada", link).answer.status_code == 303
        world.stop_platform()
        try:
            assert world.tool_change(learner, "PUT", "/api/progress/backprop/predictions/n", {"value": 0.5}).status_code == 200
            deadline = time.monotonic() + 30
            while "waiting" not in (listing := cli("lti", "scores", env=world.env)[1]):
                assert time.monotonic() < deadline, listing
                time.sleep(0.3)
        finally:
            world.start_platform()
        world.wait(lambda: scores_for(world, "ada", "backprop"))
        all_sent(world, me(world, learner)["name"], "backprop")
        assert [post["scoreGiven"] for post in scores_for(world, "ada", "backprop")] == [3]


def test_a_course_class_without_a_teacher_yet_says_so_to_the_administrator(world):
    """A course's class is made by its first launch, a learner's perhaps: `chainrule class teacher-link` then
    says that it has no teacher yet instead of failing."""
    link = world.add_link("chemistry", "backprop")
    world.launch(Browser(), "ada", link)
    code, _, error = cli("class", "teacher-link", "Chemistry", env=world.env)
    assert code == 1 and "no teacher account yet" in error, error


def test_a_moved_due_date_or_an_extension_sends_the_changed_score_through_the_outbox(world, backprop_link):
    """Issue 30 item 3: the score the LMS gets is the credit as of the learner's own due date and the late
    policy (classes/deadlines.py); moving the date, or extending it for one learner, sends the changed score."""
    learner = Browser()
    world.launch(learner, "cyd", backprop_link)
    name = me(world, learner)["name"]
    assert world.tool_change(learner, "PUT", "/api/progress/backprop/predictions/n", {"value": 0.5}).status_code == 200
    world.wait(lambda: [p for p in scores_for(world, "cyd", "backprop") if p["scoreGiven"] == 3])
    try:
        # A date long past: all of Cyd's work is late, and late work earns no credit (the default policy).
        code, out, error = cli("class", "due", "Physics 2b", "backprop", "2020-01-01 00:00", env=world.env)
        assert code == 0, error
        world.wait(lambda: [p for p in scores_for(world, "cyd", "backprop") if p["scoreGiven"] == 0])
        code, out, error = cli("class", "extend", "Physics 2b", name, "backprop", "2099-01-01", env=world.env)
        assert code == 0, error
        world.wait(lambda: scores_for(world, "cyd", "backprop")[-1]["scoreGiven"] == 3 or None)
        all_sent(world, name, "backprop")  # nothing more to send: nothing sent twice
        assert [post["scoreGiven"] for post in scores_for(world, "cyd", "backprop")] == [3, 0, 3]
    finally:
        cli("class", "due", "Physics 2b", "backprop", "none", env=world.env)
        cli("class", "extend", "Physics 2b", name, "backprop", "none", env=world.env)


def test_the_whole_path_gets_a_gradebook_column_only_when_the_teacher_chooses_it(world):
    """Issue 39 item 8: opening chainrule from the course's navigation (a link to the whole path, no column bound)
    makes no 'path' column and sends no path score; the teacher turns the column on (the teacher's page's API) and
    each learner's whole-path score goes to one column of 72 points (9 lessons of 8 sections); `chainrule lti
    path-column` says it and turns it off again."""

    def history(user: str, resource: str) -> tuple[list[str], list[dict]]:
        state = world.state()
        columns = [url for url, item in state["line_items"].items()
                   if item.get("resourceId") == resource and item["course"] == "history"]
        return columns, [post for post in state["score_posts"] if post["userId"] == user and post["line_item"] in columns]

    navigation, lesson = world.add_link("history", None), world.add_link("history", "backprop")
    learner, teacher = Browser(), Browser()
    assert world.launch(learner, "ada", navigation).answer.headers["location"] == "/"
    assert world.launch(teacher, "hume", navigation).answer.status_code == 303
    assert world.launch(learner, "ada", lesson).answer.headers["location"] == "/lessons/backprop"
    assert world.tool_change(learner, "PUT", "/api/progress/backprop/predictions/n", {"value": 0.5}).status_code == 200
    # The scan keeps all of a learner's scores in one write: once the lesson's score is in the outbox, a path
    # score would be there too.
    def outbox() -> list[str]:
        return [row["lesson"] for row in world.tool_get(teacher, "/api/class/lms/scores").json()["scores"]]

    assert world.wait(outbox) == ["backprop"]
    titles = [row["lesson_title"] for row in world.tool_get(teacher, "/api/class/lms/scores").json()["scores"]]
    assert titles == ["Backpropagation: the chain rule on a graph"]  # the teacher's page names it so
    world.wait(lambda: history("ada", "backprop")[1])
    assert history("ada", "path") == ([], [])  # no column made, nothing sent
    assert world.tool_get(teacher, "/api/class/lms/path-column").json() == {"path_column": False, "points_text": "72 points"}

    turned = world.tool_change(teacher, "PUT", "/api/class/lms/path-column", {"path_column": True})
    assert turned.status_code == 200 and turned.json()["path_column"] is True, turned.text
    posts = world.wait(lambda: history("ada", "path")[1])
    assert [(post["scoreGiven"], post["scoreMaximum"]) for post in posts] == [(3, 72)]  # backprop's 01-03
    assert len(history("ada", "path")[0]) == 1
    code, printed, error = cli("lti", "path-column", "History", env=world.env)
    assert code == 0 and "the whole path has a column" in printed, error
    code, printed, error = cli("lti", "path-column", "History", "off", env=world.env)
    assert code == 0 and "has no column" in printed, error
    assert outbox() == ["backprop"]
    refused = world.tool_change(learner, "PUT", "/api/class/lms/path-column", {"path_column": True})
    assert refused.status_code == 403


def a_course(store, accounts, title: str):
    """(the tool, a registered LMS, its course-1's (context row, class id, made)): an LMS course's class titled
    ``title`` in ``store``, as its first launch makes it."""
    from chainrule.classes.lti import Lti

    lti = Lti(store, accounts, None, "https://class.example.org")
    platform = lti.register(issuer="https://lms.example", client_id="client", deployments=["1"],
                            jwks_url="https://lms.example/jwks", auth_login_url="https://lms.example/auth",
                            token_url="https://lms.example/token")
    return lti, platform, lti.tables.context_class(platform.id, "course-1", title, lambda taken: title,
                                                   "2026-03-01T00:00:00")


def test_a_launch_s_role_makes_and_changes_an_assistant_on_both_backends(store_place):
    """The LMS's word on a person's role, at every launch, in the class database (SQLite and PostgreSQL): a
    teaching assistant's launch makes an assistant account (staff: not a teacher, not a learner), and a later
    launch with another role changes it (an LMS says what someone is in the course now)."""
    from chainrule.classes import open_class_store
    from chainrule.classes.accounts import ASSISTANT, Accounts
    from chainrule.classes.lti import role_of

    sub_role = "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"
    instructor = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
    assert [role_of(roles) for roles in ([instructor, sub_role], [sub_role + "Group"], ["TeachingAssistant"],
                                         ["urn:lti:role:ims/lis/Instructor/TeachingAssistant"], [instructor],
                                         ["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"])] == [
        ASSISTANT, ASSISTANT, ASSISTANT, ASSISTANT, "teacher", "learner"]
    place = store_place("class")
    store = open_class_store(place.get("data_dir"), place.get("database"))
    try:
        accounts = Accounts(store)
        lti, platform, (_, class_id, _) = a_course(store, accounts, "Art")

        def launch(role: str) -> int:
            account_id, _ = lti.tables.linked_account(platform.issuer, "tam", class_id, role, lambda names: "Tam",
                                                      "2026-03-01T00:00:00")
            return account_id

        tam = launch(role_of([instructor, sub_role]))
        assert accounts.account(tam).role == ASSISTANT and accounts.learners(class_id) == []
        assert launch(role_of([instructor])) == tam and accounts.account(tam).role == "teacher"
        assert launch(role_of([sub_role])) == tam and accounts.account(tam).role == ASSISTANT
    finally:
        store.close()


def test_the_path_column_setting_on_both_backends(store_place):
    """The path's column in the class database (SQLite and PostgreSQL): a course where the path was linked (as a
    launch of the path did before) scores it only once the teacher turns its column on; off forgets its column
    and its scores waiting in the outbox."""
    from chainrule.classes import open_class_store
    from chainrule.classes.accounts import Accounts
    from chainrule.classes.lti import PATH
    from chainrule.classes.lti_scores import ScoreSender

    place = store_place("class")
    store = open_class_store(place.get("data_dir"), place.get("database"))
    try:
        accounts = Accounts(store)
        lti, platform, (context_row, class_id, _) = a_course(store, accounts, "History")
        learner, _ = lti.tables.linked_account(platform.issuer, "ada", class_id, "learner", lambda names: "Ada",
                                               "2026-03-01T00:00:00")
        lti.tables.link_resource(context_row, "backprop")
        lti.tables.link_resource(context_row, PATH)
        store.for_learner(learner).save_prediction("backprop", "n", 0.5, True)
        sender = ScoreSender(lti, None)

        def outbox() -> dict[str, tuple]:
            return {row[2]: (row[3], row[4]) for row in lti.tables.outbox(class_id)}

        assert not lti.path_column(class_id)
        sender.scan()
        assert outbox() == {"backprop": (3, 8)}
        lti.set_path_column(class_id, True)
        assert lti.path_column(class_id)
        sender.scan()
        assert outbox() == {"backprop": (3, 8), PATH: (3, 72)}
        lti.set_path_column(class_id, False)
        assert outbox() == {"backprop": (3, 8)} and lti.tables.resources(context_row) == ["backprop"]
        sender.scan()
        assert outbox() == {"backprop": (3, 8)}
    finally:
        store.close()


def test_upgrading_keeps_a_path_column_the_lms_has_and_makes_none_elsewhere(store_place, monkeypatch):
    """Migration 12 on SQLite and PostgreSQL: a course whose gradebook has a path column already keeps sending to
    it (on); a course where the path was only linked (as a launch from the course's navigation did) gets none."""
    from chainrule.classes import open_class_store
    from chainrule.classes.accounts import Accounts
    from chainrule.classes.lti import PATH, Lti
    from chainrule.progress import schema

    place = store_place("class")
    full = list(schema.MIGRATIONS)
    monkeypatch.setattr(schema, "MIGRATIONS", full[:11])  # the schema before the path's column was a choice
    store = open_class_store(place.get("data_dir"), place.get("database"))
    try:
        lti = Lti(store, Accounts(store), None, "https://class.example.org")
        platform = lti.register(issuer="https://lms.example", client_id="client", deployments=["1"],
                                jwks_url="https://lms.example/jwks", auth_login_url="https://lms.example/auth",
                                token_url="https://lms.example/token")
        made = {}
        for course in ("with-column", "linked-only"):
            made[course] = lti.tables.context_class(platform.id, course, course, lambda taken, c=course: c,
                                                    "2026-03-01T00:00:00")[:2]
        lti.tables.add_line_item(made["with-column"][0], PATH, "https://lms.example/lineitems/7", 1.0)
        lti.tables.link_resource(made["linked-only"][0], PATH)
    finally:
        store.close()
    monkeypatch.setattr(schema, "MIGRATIONS", full)
    store = open_class_store(place.get("data_dir"), place.get("database"))
    try:
        lti = Lti(store, Accounts(store), None, "https://class.example.org")
        assert store.schema_version() == len(full)
        assert lti.path_column(made["with-column"][1]) and not lti.path_column(made["linked-only"][1])
    finally:
        store.close()
