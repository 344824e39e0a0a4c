"""A stranger cannot fill the disk or burn the CPU, and a refusal page keeps the outside's words to the log
(issue 41, items 6, 8 and 12), against real processes: `chainrule serve` with an LMS (tests/lti_platform.py) or
OpenID providers (tests/oidc_world.py), on SQLite and on PostgreSQL where the item touches the store.

- item 6: every route a request without a session reaches and that keeps a row charges one budget
  (classes/stranger_budget.py): each field at most FIELD_CHARACTERS, at most PER_CLIENT logins in progress per
  address (429 after), rows deleted after KEEP seconds;
- item 8: launches signed with a key id the LMS does not publish make one fetch of its key set, not one each;
- item 12: a refusal page names its cause and what to do; the LMS's or provider's error text and the key set's
  address go to the server's log only.

Many addresses are played with X-Forwarded-For, which `chainrule serve` reads from a proxy on 127.0.0.1 only."""

from __future__ import annotations

import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt as pyjwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

import local_http
from chainrule.classes import open_class_store
from lti_world import CLIENT_ID, Browser, LtiWorld, forms_of, refusal
from oidc_world import OidcWorld

MARKER = "MARKER-7f3c-the-providers-own-words"


def database_for(request, backend: str) -> str | None:
    """None for SQLite (a folder of the world's), else a fresh PostgreSQL schema's URL."""
    if backend == "sqlite":
        return None
    from postgres_cluster import new_postgres_schema

    return new_postgres_schema(request.getfixturevalue("postgres_cluster"))


def started_lti(request, tmp_path_factory, backend: str):
    with LtiWorld.start(tmp_path_factory.mktemp(f"strangers-lti-{backend}"), database=database_for(request, backend)) as world:
        yield world


@pytest.fixture(scope="module")
def lti_sqlite(request, tmp_path_factory):
    yield from started_lti(request, tmp_path_factory, "sqlite")


@pytest.fixture(scope="module")
def lti_postgresql(request, tmp_path_factory):
    yield from started_lti(request, tmp_path_factory, "postgresql")


@pytest.fixture(params=["sqlite", "postgresql"])
def lti(request):
    """The module's LTI world (an LMS and `chainrule serve`) of each backend."""
    return request.getfixturevalue(f"lti_{request.param}")


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def sso(request, tmp_path_factory):
    with OidcWorld.start(tmp_path_factory.mktemp("strangers-sso"), database=database_for(request, request.param)) as world:
        yield world


def stored(env: dict, root, table: str) -> list[tuple[str, int]]:
    """(client, characters kept) of every row of the logins table, read from the class database itself."""
    store = open_class_store(root / "data", env.get("CHAINRULE_DATABASE"), create=False)
    try:
        rows = store.database.read(lambda conn: conn.execute(f"SELECT * FROM {table}").fetchall())
    finally:
        store.close()
    # every column but the client, as text: what a stranger's row costs the disk
    return [(str(row[-1]), sum(len(str(value)) for value in row[:-1])) for row in rows]


def in_log(lines: list[str], text: str, seconds: float = 30) -> bool:
    """Whether the process's output holds ``text`` (it is read by a thread: wait for it, within a bound)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if any(text in line for line in list(lines)):
            return True
        time.sleep(0.05)
    return False


def lti_login(world: LtiWorld, address: str, **fields: str) -> httpx.Response:
    form = {"iss": world.lms_url, "login_hint": "ada", "target_link_uri": world.tool_url + "/",
            "client_id": CLIENT_ID, **fields}
    return local_http.post(world.tool_url + "/lti/login", data=form, headers={"x-forwarded-for": address}, timeout=60)


# ------------------------------------------------------------------------------------------ item 6


def routes_of(routes: list, prefix: str = "") -> list[tuple[str, str, object]]:
    """(method, path, route) of every route of the app, the routers it includes walked too."""
    found = []
    for route in routes:
        if hasattr(route, "original_router"):  # an included router (FastAPI resolves its routes lazily)
            found += routes_of(route.original_router.routes, prefix + route.include_context.prefix)
        elif hasattr(route, "methods") and hasattr(route, "endpoint"):
            found += [(method, prefix + route.path, route) for method in sorted(route.methods - {"HEAD"})]
    return found


def test_every_route_a_stranger_reaches_that_writes_charges_the_budget_or_names_its_proof(tmp_path):
    """The app's routes, listed from the app itself: each one a request without a session reaches (its declared
    role is "anyone": web/roles.py) must be marked @charged or be listed in stranger_budget.PROVEN or READS_ONLY, so that a new
    route fails here until someone says which."""
    from chainrule.classes import stranger_budget
    from chainrule.classes.accounts import Accounts
    from chainrule.classes.lti import Lti
    from chainrule.classes.lti_keys import ToolKeys
    from chainrule.classes.sso import Sso
    from chainrule.web.roles import role_of
    from chainrule.web.routes_class import create_class_app
    from chainrule.web.routes_lti import add_lti
    from chainrule.web.routes_sso import add_sso
    from class_world import FAST_HASHER

    store = open_class_store(tmp_path)
    accounts = Accounts(store, hasher=FAST_HASHER)
    app = create_class_app(store, accounts=accounts, hosts=["class.example.org"])
    add_lti(app, Lti(store, accounts, ToolKeys(tmp_path / "keys"), "https://class.example.org"), None)
    add_sso(app, Sso(store, accounts, "https://class.example.org"))
    public = [(method, path, route.endpoint) for method, path, route in routes_of(app.routes)
              if role_of(route) == ["anyone"]]
    assert {path for _, path, _ in public} >= {"/lti/login", "/sso/start/{provider_id}", "/lti/launch", "/sign-in"}
    unaccounted = [f"{method} {path}" for method, path, endpoint in public
                   if not getattr(endpoint, "stranger_budget", False)
                   and path not in stranger_budget.PROVEN and f"{method} {path}" not in stranger_budget.READS_ONLY]
    assert unaccounted == []
    charged = {path for _, path, endpoint in public if getattr(endpoint, "stranger_budget", False)}
    assert charged == {"/lti/login", "/sso/start/{provider_id}"}
    store.close()


def test_the_budget_bounds_rows_in_all_and_forgets_them_after_its_time(store_place):
    """The store's one rule with small limits and a clock of our own: the server's total refuses a new
    address's login, and rows older than `keep` are deleted at the next login (then there is room again)."""
    from chainrule.classes.stranger_budget import OverBudget, StrangerBudget
    from chainrule.progress import open_store
    from chainrule.progress.lti_store import LtiStore, add_stranger_row

    store = open_store(**store_place())
    try:
        platform = LtiStore(store).save_platform(
            {"issuer": "https://lms.example", "client_id": "c", "name": "LMS", "auth_login_url": "https://lms.example/a",
             "token_url": "https://lms.example/t", "jwks_url": "https://lms.example/k", "token_audience": "",
             "lms_origins": "[]", "created_at": "2026-01-01T00:00:00+00:00"}, ["d"])
        budget = StrangerBudget(per_client=2, total=3, keep=600)

        def login(client: str, now: float) -> None:
            add_stranger_row(store.database, "lti_logins", {
                "state_hash": secrets.token_hex(32), "platform_id": platform, "nonce": "n", "target": "/",
                "relaunch": {"login_hint": "x" * 100}}, client, now, budget)

        login("192.0.2.1", 0)
        login("192.0.2.1", 1)
        with pytest.raises(OverBudget) as refused:
            login("192.0.2.1", 2)
        assert refused.value.status == 429 and "from this address" in str(refused.value)
        login("192.0.2.2", 3)
        with pytest.raises(OverBudget) as refused:  # a new address, but the server holds its total
            login("192.0.2.3", 4)
        assert "on this server" in str(refused.value)
        with pytest.raises(OverBudget) as refused:
            add_stranger_row(store.database, "lti_logins", {"state_hash": "h", "platform_id": platform, "nonce": "n",
                                                            "target": "/", "relaunch": {"login_hint": "x" * 2049}},
                             "192.0.2.9", 6, budget)
        assert refused.value.status == 413 and "login_hint" in str(refused.value)
        login("192.0.2.3", 601)  # the first row is older than keep: deleted, and there is room
        count = store.database.read(lambda conn: conn.execute("SELECT COUNT(*) FROM lti_logins").fetchone()[0])
        assert count == 3  # rows made at 1, 3, 601 (the one made at 0 is gone)
        login("192.0.2.3", 1000)  # everything before 400 is gone
        count = store.database.read(lambda conn: conn.execute("SELECT COUNT(*) FROM lti_logins").fetchone()[0])
        assert count == 2
    finally:
        store.close()


def test_a_stranger_cannot_fill_the_disk_with_lti_logins(lti):
    """Round 5's attack at small scale: 20 KB hints are refused whole (nothing kept), and one address's logins
    stop at PER_CLIENT in progress (429, Retry-After) while another address still gets in."""
    from chainrule.classes.stranger_budget import FIELD_CHARACTERS, PER_CLIENT, ROW_CHARACTERS

    too_long = lti_login(lti, "198.51.100.1", login_hint="h" * 20_000)  # the one form reader's limit first
    assert too_long.status_code == 422 and "at most 2,000" in too_long.text, too_long.text
    # A signed token's field, which the form reader lets fill the body: the budget refuses what it would keep.
    huge = lti_login(lti, "198.51.100.1", lti_message_hint="m" * 20_000)
    assert huge.status_code == 413 and refusal(huge) == "field-too-long", huge.text
    assert str(FIELD_CHARACTERS) in huge.text
    assert [row for row in stored(lti.env, lti.root, "lti_logins") if row[0] == "198.51.100.1"] == []
    hint = "m" * 1500  # an honest hint's size (Canvas signs a JWT of about this length)
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: lti_login(lti, "198.51.100.2", lti_message_hint=hint), range(PER_CLIENT + 10)))
    assert sorted(answer.status_code for answer in answers) == [302] * PER_CLIENT + [429] * 10
    refused = next(answer for answer in answers if answer.status_code == 429)
    assert refusal(refused) == "too-many-logins" and int(refused.headers["retry-after"]) > 0
    assert lti_login(lti, "198.51.100.3").status_code == 302  # a school elsewhere is not locked out
    rows = stored(lti.env, lti.root, "lti_logins")
    mine = [size for client, size in rows if client == "198.51.100.2"]
    assert len(mine) == PER_CLIENT and max(mine) <= ROW_CHARACTERS + 200
    assert len([client for client, _ in rows if client == "198.51.100.3"]) == 1


def sign_in_button(world: OidcWorld, provider: str) -> tuple[Browser, str, dict]:
    """A stranger's browser on the sign-in page: the provider button's address and form (its CSRF token)."""
    browser = Browser()
    page = browser.request("GET", world.tool_url + "/sign-in")
    action, form = [found for found in forms_of(page.text) if found[0] == f"/sso/start/{world.ids[provider]}"][0]
    return browser, world.tool_url + action, form


def test_a_stranger_cannot_fill_the_disk_with_sso_starts(sso):
    """Round 5's other attack: `next` of 240 KB is refused; starts from one address stop at PER_CLIENT."""
    from chainrule.classes.stranger_budget import PER_CLIENT

    browser, start, form = sign_in_button(sso, "School")

    def begin(address: str, target: str = "/lessons/backprop") -> httpx.Response:
        return browser.request("POST", start, data=dict(form, next=target),
                               headers={"origin": sso.tool_url, "x-forwarded-for": address})

    huge = begin("203.0.113.1", "/" + "n" * 240_000)
    assert huge.status_code == 413, huge.text  # over the one form reader's body limit (web/forms.py): nothing read
    too_long = begin("203.0.113.1", "/" + "n" * 3_000)
    assert too_long.status_code == 422 and "at most 2,000" in too_long.text, too_long.text
    assert [row for row in stored(sso.env, sso.root, "sso_logins") if row[0] == "203.0.113.1"] == []
    answers = [begin("203.0.113.2") for _ in range(PER_CLIENT + 3)]
    assert [answer.status_code for answer in answers] == [200] * PER_CLIENT + [429] * 3
    assert answers[-1].headers["x-chainrule-sign-in-refusal"] == "too-many-logins"
    assert begin("2001:db8:1:2::7").status_code == 200
    assert begin("2001:db8:1:2::8").status_code == 200  # the same /64: one client
    clients = [client for client, _ in stored(sso.env, sso.root, "sso_logins")]
    assert clients.count("203.0.113.2") == PER_CLIENT and clients.count("2001:db8:1:2::/64") == 2


# ------------------------------------------------------------------------------------------ item 8


def unknown_kid_token() -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return pyjwt.encode({"sub": "x"}, pem, algorithm="RS256", headers={"kid": "a-kid-nobody-publishes"})


def begun_launch(world: LtiWorld, address: str, **fields: str) -> tuple[dict, str]:
    """A login of this tool (its state, and the cookie that binds it): the form a launch posts, and the cookie."""
    answer = lti_login(world, address, **fields)
    assert answer.status_code == 302, answer.text
    state = parse_qs(urlsplit(answer.headers["location"]).query)["state"][0]
    cookie = answer.headers["set-cookie"].split(";", 1)[0]
    return {"state": state}, cookie


def test_launches_with_an_unknown_key_id_make_one_fetch_of_the_lms_key_set(lti_sqlite):
    """40 launches at once, each with its own login and a token whose kid the LMS does not publish, against a
    slow LMS (its key set takes a second): one fetch in flight, the others wait for it and use its answer (an
    unknown kid fetches again only REFETCH_AFTER after a fetch). Each launch is refused as unknown-key, and the page
    does not name the key set's address, which the log does (item 12).

    On the module's world through a second registration of the LMS (a client ID of its own) whose key set is at an
    address of its own (/jwks/unknown-kid): the tool keeps key sets by address, and the LMS counts and slows that
    address's fetches apart, so that no fetch of another test's launches is cached for these or counted here."""
    world = lti_sqlite
    client_id, jwks_url = "unknown-kid-client", f"{world.lms_url}/jwks/unknown-kid"
    world.register(client_id, jwks_url)
    begun = [begun_launch(world, f"198.51.100.{10 + n // 20}", client_id=client_id) for n in range(40)]
    token = unknown_kid_token()
    world.lms("POST", "/jwks-mode", json={"name": "unknown-kid", "delay": 1.0})

    def launch(item: tuple[dict, str]) -> httpx.Response:
        form, cookie = item
        return local_http.post(world.tool_url + "/lti/launch", data=dict(form, id_token=token),
                          headers={"cookie": cookie, "origin": world.lms_url, "sec-fetch-dest": "iframe"},
                          timeout=120)

    with ThreadPoolExecutor(40) as pool:
        answers = list(pool.map(launch, begun))
    fetches = world.lms("GET", "/jwks-fetches", params={"name": "unknown-kid"}).json()["fetches"]
    assert [refusal(answer) for answer in answers] == ["unknown-key"] * 40
    assert fetches <= 2, f"{fetches} fetches of the LMS's key set"
    assert all(jwks_url not in answer.text for answer in answers)
    assert in_log(world.tool_lines, jwks_url)


# ------------------------------------------------------------------------------------------ item 12


def test_an_lms_error_and_its_key_url_stay_out_of_the_page_and_go_to_the_log(lti):
    form, cookie = begun_launch(lti, "198.51.100.30")
    answer = local_http.post(lti.tool_url + "/lti/launch", data=dict(
        form, error="access_denied", error_description=f"{MARKER} <b>inner state of the LMS</b> " + "x" * 250),
        headers={"cookie": cookie, "origin": lti.lms_url}, timeout=60)
    assert refusal(answer) == "platform-error" and answer.status_code == 400
    assert MARKER not in answer.text and "inner state" not in answer.text
    assert "Open the link in the LMS again" in answer.text  # what to do
    assert in_log(lti.tool_lines, MARKER)
    # the login's own values (an LMS's, or a stranger's) are not shown back either
    strange = lti_login(lti, "198.51.100.31", lti_deployment_id=MARKER + "-deployment")
    assert refusal(strange) == "unknown-deployment" and MARKER not in strange.text
    elsewhere = lti_login(lti, "198.51.100.31", target_link_uri=f"https://{MARKER}.example/")
    assert refusal(elsewhere) == "target-not-this-tool" and MARKER not in elsewhere.text
    assert in_log(lti.tool_lines, MARKER + "-deployment") and in_log(lti.tool_lines, f"https://{MARKER}.example/")


def test_a_provider_error_and_its_address_stay_out_of_the_page_and_go_to_the_log(sso):
    answer = local_http.get(sso.tool_url + f"/sso/callback/{sso.ids['School']}",
                       params={"error": "server_error", "error_description": MARKER + " stack trace here"}, timeout=60)
    assert answer.headers["x-chainrule-sign-in-refusal"] == "provider-error" and answer.status_code == 400
    assert MARKER not in answer.text and "stack trace" not in answer.text
    assert "start again from the sign-in page" in answer.text
    assert in_log(sso.tool_lines, MARKER)
    browser, start, form = sign_in_button(sso, "Down")
    down = browser.request("POST", start, data=form, headers={"origin": sso.tool_url, "x-forwarded-for": "203.0.113.40"})
    assert down.headers["x-chainrule-sign-in-refusal"] == "provider-unreachable", down.text
    assert sso.issuer("Down") not in down.text and "Down cannot be reached" in down.text
    assert in_log(sso.tool_lines, sso.issuer("Down"))

