"""Single sign-on for a standalone class server (issue 30, item 7): OpenID Connect's authorization code flow with
PKCE through Authlib, against npm's oidc-provider run as a process (tests/oidc_world.py), played over HTTP here
(tests/browser/test_sso_page.py walks it in Chromium). Accounts are linked by the provider's subject; the
teacher decides whether passwords stay possible; the password flow keeps working beside it."""

from __future__ import annotations

import pytest

from class_process import run_coroutine
from lti_world import Browser, cli, forms_of
from oidc_world import PASSWORD, OidcWorld, query_of


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with OidcWorld.start(tmp_path_factory.mktemp("sso")) as started:
        yield started


def me(world: OidcWorld, browser: Browser) -> dict:
    answer = browser.request("GET", world.tool_url + "/api/class/me")
    assert answer.status_code == 200, answer.text
    return answer.json()


def refusal(answer) -> str:
    cause = answer.headers.get("x-chainrule-sign-in-refusal", "")
    assert not cause or f'data-cause="{cause}"' in answer.text
    return cause


def joined(world: OidcWorld, login: str, provider: str = "School") -> Browser:
    browser = Browser()
    answer = world.sign_in_with(browser, "/join/" + world.invite.rsplit("/", 1)[1], provider, login)
    assert answer.status_code == 303 and answer.headers["location"] == "/", answer.text
    return browser


def test_a_learner_joins_and_signs_in_through_the_provider_linked_by_subject(world):
    ada = joined(world, "ada-7f3")
    first = me(world, ada)
    assert first["name"] == "Ada Lovelace" and first["class"] == "Physics 2b" and first["role"] == "learner"
    again = Browser()
    answer = world.sign_in_with(again, "/sign-in", "School", "ada-7f3")
    assert answer.status_code == 303 and answer.headers["location"] == "/"
    assert me(world, again)["id"] == first["id"]
    # Bea shares Ada's e-mail address at the provider: another subject, another account.
    assert me(world, joined(world, "bea-c21"))["id"] != first["id"]
    # Someone the provider knows but who never joined has no account here: the page says what they can do.
    answer = world.sign_in_with(Browser(), "/sign-in", "School", "hopper-9a0")
    assert refusal(answer) == "no-account" and answer.status_code == 403
    assert "linked to the account you signed in with at School" in answer.text
    assert "join it with its invite link" in answer.text and "ask them to turn passwords on" in answer.text


def teacher_browser(world: OidcWorld) -> Browser:
    browser = Browser()
    page = browser.request("GET", world.teacher_link)
    action, form = forms_of(page.text)[0]
    answer = browser.request("POST", world.tool_url + action, data=dict(form, password=PASSWORD),
                             headers={"origin": world.tool_url})
    assert answer.status_code == 303, answer.text
    return browser


def test_the_teacher_decides_whether_passwords_stay_possible(world):
    learner = Browser()
    page = learner.request("GET", world.invite)
    action, form = forms_of(page.text)[0]
    assert learner.request("POST", world.tool_url + action, data=dict(form, name="Cyd", password=PASSWORD),
                           headers={"origin": world.tool_url}).status_code == 303
    teacher = teacher_browser(world)
    host = f"localhost:{world.tool_port}"

    def set_passwords(allowed: bool, **more: bool):
        return teacher.request("POST", world.tool_url + "/api/class/sign-in-options",
                               json={"passwords": allowed, **more},
                               headers={"x-csrf-token": teacher.csrf(host), "origin": world.tool_url})

    refused = set_passwords(False)
    assert refused.status_code == 409 and "link your own account" in refused.json()["detail"]
    back = world.at_provider(teacher, world.start_sign_in(teacher, "/account", "School"), "hopper-9a0")
    assert teacher.request("GET", back).headers["location"] == "/teacher"
    # Cyd joined with a password and has no linked account: turning passwords off warns, naming her, and the
    # administrator's command too; nothing changes until the teacher says to lock her out.
    warned = set_passwords(False)
    assert warned.status_code == 409, warned.text
    assert "would lock out 1 person with no linked sign-in account (Cyd (learner))" in warned.json()["detail"]
    options = teacher.request("GET", world.tool_url + "/api/class/sign-in-options").json()
    assert options["passwords"] is True and options["locked_out"] == [{"name": "Cyd", "role": "learner"}]
    code, _, error = cli("sso", "passwords", "Physics 2b", "off", env=world.env)
    assert code == 1 and "(Cyd (learner))" in error and "--lock-out" in error, error
    assert teacher.request("GET", world.tool_url + "/api/class/sign-in-options").json()["passwords"] is True
    assert set_passwords(False, lock_out=True).json()["passwords"] is False
    try:
        # Passwords are off: Cyd's right password is refused, saying what she can do (her account is not linked).
        again = Browser()
        page = again.request("GET", world.tool_url + "/sign-in")
        action, form = forms_of(page.text)[0]
        answer = again.request("POST", world.tool_url + action, data=dict(
            form, class_name="Physics 2b", name="Cyd", password=PASSWORD), headers={"origin": world.tool_url})
        assert answer.status_code == 403 and "school account only" in answer.text
        assert "your account is not linked to one yet: ask your teacher to turn passwords on" in answer.text
        assert "use the button below" not in answer.text
        join = Browser().request("GET", world.invite)
        assert 'name="password"' not in join.text and "Join with School" in join.text
        # The teacher now signs in through the provider.
        fresh = Browser()
        answer = world.sign_in_with(fresh, "/sign-in", "School", "hopper-9a0")
        assert answer.headers["location"] == "/teacher" and me(world, fresh)["role"] == "teacher"
    finally:
        assert set_passwords(True).json()["passwords"] is True
    # On again: the standalone password flow works as before.
    again = Browser()
    page = again.request("GET", world.tool_url + "/sign-in")
    action, form = forms_of(page.text)[0]
    answer = again.request("POST", world.tool_url + action, data=dict(
        form, class_name="Physics 2b", name="Cyd", password=PASSWORD), headers={"origin": world.tool_url})
    assert answer.status_code == 303 and me(world, again)["name"] == "Cyd"


def test_a_sign_in_cannot_be_started_by_another_site(world):
    """CSRF on the login's initiation: a page elsewhere cannot start a sign-in (or a join) in a learner's browser."""
    browser = Browser()
    start = f"{world.tool_url}/sso/start/{world.ids['School']}"
    invite = world.invite.rsplit("/", 1)[1]
    assert browser.request("GET", start).status_code == 405
    assert browser.request("POST", start, data={"invite": invite}, headers={"origin": world.tool_url}).status_code == 403
    foreign = browser.request("POST", start, data={"invite": invite}, headers={"origin": "https://evil.example"})
    assert foreign.status_code == 403 and "Origin" in foreign.text


def test_a_replayed_or_carried_answer_and_a_mix_up_are_refused(world):
    browser = Browser()
    back = world.at_provider(browser, world.start_sign_in(browser, "/sign-in", "School"), "ada-7f3")
    query = query_of(back)
    assert query["iss"] == world.issuer("School")  # RFC 9207: the provider names itself in its answer
    # Carried to another browser (login CSRF): the state is bound to the browser that began it.
    assert refusal(Browser().request("GET", back)) == "not-this-browser"
    # Delivered to the other provider's callback (mix-up): the state says which provider it began with.
    other = back.replace(world.callbacks["School"], world.callbacks["Other"])
    assert refusal(browser.request("GET", other)) == "wrong-provider"
    # Its iss changed to another issuer: refused before the code is ever sent anywhere.
    assert refusal(browser.request("GET", back.replace(query["iss"].replace(":", "%3A").replace("/", "%2F"),
                                                       "https%3A%2F%2Fevil.example"))) == "wrong-issuer"
    assert browser.request("GET", back).status_code == 303  # the answer itself, once
    assert refusal(browser.request("GET", back)) == "replayed"
    assert refusal(browser.request("GET", back.split("?")[0] + "?code=x&state=made-up")) == "unknown-state"


def test_a_token_for_another_audience_and_a_provider_that_is_down(world):
    world.set_mode("School", id_token_audience="another-application")
    try:
        answer = world.sign_in_with(Browser(), "/sign-in", "School", "ada-7f3")
    finally:
        world.set_mode("School", id_token_audience="")
    assert refusal(answer) == "wrong-audience", answer.text
    browser = Browser()
    down = world.start_sign_in(browser, "/sign-in", "Down")
    assert refusal(down) == "provider-unreachable" and down.status_code == 502
    assert "sign in with your password" in down.text
    page = browser.request("GET", world.tool_url + "/sign-in")  # the password form is still there
    assert 'name="password"' in page.text


def test_joining_through_the_provider_keeps_the_seats_and_the_teachers_approval(world):
    def invite(*options: str) -> str:  # `chainrule class invite`: who may join, and the new invite's page
        code, printed, error = cli("class", "invite", "Physics 2b", "--url", world.tool_url, *options, env=world.env)
        assert code == 0, error
        world.invite = next(line.strip() for line in printed.splitlines() if "://" in line)
        return "/join/" + world.invite.rsplit("/", 1)[1]

    def taken() -> int:
        code, printed, error = cli("class", "learners", "Physics 2b", env=world.env)
        assert code == 0, error
        return int(printed.split()[0])  # "3 learners; seats: ..."

    try:
        full = world.sign_in_with(Browser(), invite("--seats", str(taken())), "School", "dot-4e2")
        assert refusal(full) == "class-full" and full.status_code == 409 and "seats are taken" in full.text
        joining = world.sign_in_with(Browser(), invite("--seats", "none", "--approval"), "School", "kat-5d1")
        assert refusal(joining) == "waiting" and joining.status_code == 403
        assert "Katherine Johnson" in joining.text and "not let you in yet" in joining.text
        assert refusal(world.sign_in_with(Browser(), "/sign-in", "School", "kat-5d1")) == "waiting"
        assert cli("class", "approve", "Physics 2b", "Katherine Johnson", env=world.env)[0] == 0
        katherine = Browser()
        answer = world.sign_in_with(katherine, "/sign-in", "School", "kat-5d1")
        assert answer.status_code == 303 and me(world, katherine)["name"] == "Katherine Johnson"
    finally:
        invite("--seats", "none", "--no-approval")


def test_a_verified_email_takes_its_roster_seat_and_section(world, tmp_path):
    """Issue 43 item 6: a learner who comes through the school's provider with a verified e-mail a teacher listed
    on the class's roster takes that seat: its section, and in at once though the class asks for approval; one
    who joined before the roster was imported takes it at their next sign-in. An e-mail the provider did not
    verify takes nothing (the learner waits for the teacher, as anyone joining)."""
    code, made, error = cli("class", "create", "Roster 3", "--url", world.tool_url, env=world.env)
    assert code == 0, error
    code, printed, error = cli("class", "invite", "Roster 3", "--url", world.tool_url, "--approval", env=world.env)
    assert code == 0, error
    join = "/join/" + next(line.strip() for line in printed.splitlines() if "://" in line).rsplit("/", 1)[1]

    early = world.sign_in_with(Browser(), join, "School", "nia-2b7")  # before the roster: waits, as anyone
    assert refusal(early) == "waiting", early.text
    roster = tmp_path / "roster.csv"
    roster.write_text("name,e-mail,section\nLin Park,lin@school.example,Monday\n"
                      "Nia Obi,nia@school.example,Tuesday\nMax Moss,max@school.example,Wednesday\n")
    assert cli("class", "import-roster", "Roster 3", str(roster), env=world.env)[0] == 0

    lin = Browser()
    answer = world.sign_in_with(lin, join, "School", "lin-3c8")
    assert answer.status_code == 303 and answer.headers["location"] == "/", answer.text  # in at once
    assert me(world, lin)["name"] == "Lin Park"
    unverified = world.sign_in_with(Browser(), join, "School", "max-6e0")
    assert refusal(unverified) == "waiting", unverified.text
    nia = Browser()
    answer = world.sign_in_with(nia, "/sign-in", "School", "nia-2b7")
    assert answer.status_code == 303 and me(world, nia)["name"] == "Nia Obi", answer.text

    code, printed, error = cli("class", "learners", "Roster 3", env=world.env)
    assert code == 0, error
    assert sorted(printed.splitlines()[1:]) == [  # each joined learner, and whom the roster still waits for
        "Lin Park  (in the class, section Monday)", "Max Moss  (on the roster, not joined yet: max@school.example, "
        "section Wednesday)", "Max Moss  (waiting for the teacher)", "Nia Obi  (in the class, section Tuesday)"]


def test_the_sign_in_tables_on_both_backends(store_place):
    """classes/sso.py's tables on SQLite and PostgreSQL: a sign-in is used once, a person joins a class once
    (linked by subject), a link taken by another account is refused, and the teacher's choice of passwords."""
    from chainrule.classes import open_class_store
    from chainrule.classes.accounts import Accounts
    from chainrule.classes.sso import Sso
    from chainrule.classes.stranger_budget import BUDGET

    place = store_place("class")
    store = open_class_store(place.get("data_dir"), place.get("database"))
    try:
        accounts = Accounts(store)
        made = accounts.create_class("Physics 2b")
        sso = Sso(store, accounts, "https://class.example.org")
        provider = sso.add_provider("School", "https://login.school.example", "client", "secret")
        assert sso.add_provider("School", "https://login.school.example", "client", "new secret").id == provider.id
        sso.tables.add_login("hash", provider.id, "nonce", "verifier", {"do": "sign-in"}, client="192.0.2.1", now=100.0,
                             budget=BUDGET)
        assert sso.tables.login("hash").intent == {"do": "sign-in"}
        assert sso.tables.use_login("hash", 101.0) and not sso.tables.use_login("hash", 102.0)
        class_id = made.class_id
        first, created = sso.tables.join(provider.issuer, "subject-1", class_id, lambda names: "Ada", "2026-03-01")
        again, created_again = sso.tables.join(provider.issuer, "subject-1", class_id, lambda names: "Ada", "2026-03-01")
        assert created and not created_again and again == first
        other, _ = sso.tables.join(provider.issuer, "subject-2", class_id, lambda names: f"Bea ({len(names)})",
                                   "2026-03-01")
        assert accounts.account(other).name == "Bea (2)"  # the callback saw the class's names: Teacher, Ada
        assert sso.tables.linked_accounts(provider.issuer, "subject-1") == [first]
        assert not sso.tables.link(provider.issuer, "subject-1", other, class_id)  # subject-1 is Ada's here
        assert sso.tables.link(provider.issuer, "subject-1", first, class_id)  # her own link again: fine
        assert sso.tables.passwords_allowed(class_id)
        sso.tables.set_passwords(class_id, False)
        assert not sso.tables.passwords_allowed(class_id)
    finally:
        store.close()


def test_a_verified_email_takes_one_roster_seat_on_both_backends(store_place):
    """The roster's seat for a verified e-mail, on SQLite and PostgreSQL: taken by the first learner who joins
    with it (its section, let in though the class asks for approval), never by a second person with the same
    e-mail, and by a learner linked before the import at their next sign-in (take_seats); an unverified e-mail
    is no key at all."""
    from chainrule.classes import open_class_store
    from chainrule.classes.accounts import Accounts
    from chainrule.classes.roster import Roster
    from chainrule.classes.sso import Sso, verified_email

    assert verified_email({"email": "Lin@School.example", "email_verified": True}) == "lin@school.example"
    assert verified_email({"email": "lin@school.example", "email_verified": "true"}) == "lin@school.example"
    assert verified_email({"email": "lin@school.example", "email_verified": False}) == ""
    assert verified_email({"email": "lin@school.example"}) == ""
    place = store_place("class")
    store = open_class_store(place.get("data_dir"), place.get("database"))
    try:
        accounts = Accounts(store)
        class_id = accounts.create_class("Physics 2b").class_id
        accounts.set_admission(class_id, None, True)
        tables = Sso(store, accounts, "https://class.example.org").tables
        issuer = "https://login.school.example"
        early, _ = tables.join(issuer, "nia", class_id, lambda names: "Nia", "2026-03-01", "nia@school.example")
        Roster(accounts).import_csv(class_id, b"name,e-mail,section\nLin Park,lin@school.example,Monday\n"
                                              b"Nia Obi,nia@school.example,Tuesday\n")
        lin, _ = tables.join(issuer, "lin", class_id, lambda names: "Lin", "2026-03-01", "lin@school.example")
        twin, _ = tables.join(issuer, "twin", class_id, lambda names: "Twin", "2026-03-01", "lin@school.example")
        assert (accounts.account(lin).section, accounts.account(lin).approved) == ("Monday", True)
        assert (accounts.account(twin).section, accounts.account(twin).approved) == ("", False)
        assert (accounts.account(early).section, accounts.account(early).approved) == ("", False)
        tables.take_seats(issuer, "nia", "nia@school.example")
        assert (accounts.account(early).section, accounts.account(early).approved) == ("Tuesday", True)
        tables.take_seats(issuer, "twin", "lin@school.example")  # Lin's seat is hers: nothing changes
        assert (accounts.account(twin).section, accounts.account(twin).approved) == ("", False)
        assert {entry["key"]: entry["learner_id"] for entry in Roster(accounts).entries(class_id)} == {
            "lin@school.example": lin, "nia@school.example": early}
    finally:
        store.close()


def test_passwords_go_off_only_when_no_teacher_is_locked_out_and_learners_are_named_first(store_place):
    """On SQLite and PostgreSQL: turning passwords off names everyone with no linked sign-in account
    (a provider's or an LMS's), refuses while that includes a teacher (a co-teacher too), and locks learners out
    only when the caller says so (lock_out)."""
    from chainrule.classes import open_class_store
    from chainrule.classes.accounts import Accounts, ClassError
    from chainrule.classes.people import People
    from chainrule.classes.sso import LockOut, Sso

    place = store_place("class")
    store = open_class_store(place.get("data_dir"), place.get("database"))
    try:
        accounts = Accounts(store)
        made = accounts.create_class("Physics 2b")
        class_id = made.class_id
        sso = Sso(store, accounts, "https://class.example.org")
        issuer = sso.add_provider("School", "https://login.school.example", "client", "secret").issuer
        teacher = accounts.account(accounts.tables.teacher_id(class_id))
        for name in ("Cyd", "Bea"):
            run_coroutine(accounts.join, made.invite_token, name, PASSWORD)
        ada, _ = sso.tables.join(issuer, "subject-ada", class_id, lambda names: "Ada", "2026-03-01")
        brown, _ = People(accounts).add_teacher(teacher, "Mr Brown")

        assert [(p["name"], p["role"]) for p in sso.locked_out(class_id)] == [
            ("Mr Brown", "teacher"), ("Teacher", "teacher"), ("Bea", "learner"), ("Cyd", "learner")]
        with pytest.raises(ClassError, match="link your own account"):
            sso.set_passwords(class_id, False, asked_by=teacher)
        assert sso.tables.link(issuer, "subject-teacher", teacher.id, class_id)
        with pytest.raises(ClassError, match=r"passwords stay on: 1 teacher of the class .*\(Mr Brown \(teacher\)\)") as refused:
            sso.set_passwords(class_id, False, asked_by=teacher, lock_out=True)  # lock_out never locks out a teacher
        assert not isinstance(refused.value, LockOut)
        with pytest.raises(ClassError, match=r"\(Mr Brown \(teacher\)\)"):
            sso.set_passwords(class_id, False, lock_out=True)  # the administrator's command: the same rule
        assert sso.passwords_allowed(class_id)
        assert sso.tables.link(issuer, "subject-brown", brown.id, class_id)
        with pytest.raises(LockOut) as warned:
            sso.set_passwords(class_id, False, asked_by=teacher)
        assert [person["name"] for person in warned.value.people] == ["Bea", "Cyd"]
        assert "would lock out 2 people with no linked sign-in account (Bea (learner), Cyd (learner))" in str(warned.value)
        assert sso.passwords_allowed(class_id)  # nothing changed
        sso.set_passwords(class_id, False, asked_by=teacher, lock_out=True)
        assert not sso.passwords_allowed(class_id)
        sso.set_passwords(class_id, True, asked_by=teacher)
        assert sso.passwords_allowed(class_id) and ada not in [p["id"] for p in sso.locked_out(class_id)]
    finally:
        store.close()



def test_the_pkce_challenge_agrees_with_authlibs():
    from authlib.oauth2.rfc7636 import create_s256_code_challenge

    from chainrule.classes.federation import new_state
    from chainrule.classes.sso import pkce_challenge

    for verifier in [new_state() + new_state() for _ in range(20)] + ["a" * 43, "~._-" * 20]:
        assert pkce_challenge(verifier) == create_s256_code_challenge(verifier)
